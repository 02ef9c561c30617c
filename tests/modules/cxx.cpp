/* SPDX-License-Identifier: GPL-2.0-or-later */
// Test module: a scheduler written in C++ against the installed header
// (tests/oot-module.sh).  extern "C" in the header keeps its entry point
// unmangled, so the daemon finds and loads it like any other; its tunable
// and counter go through the header's C++ type checks.
#include <fuse-iosched/elevator.h>

namespace {

struct cxx_data {
	struct elv_list fifo;	// oldest first
	int64_t unused;		// a tunable, shown and set only
	uint64_t dispatched;
};

const struct elv_tunable cxx_tunables[] = {
	ELV_TUNABLE(struct cxx_data, unused, 1, 0, 10, "", "a tunable"),
	{ nullptr, 0, 0, 0, 0, nullptr, nullptr, 0, nullptr, nullptr },
};

const struct elv_counter cxx_counters[] = {
	ELV_COUNTER(struct cxx_data, dispatched),
	{ nullptr, 0 },
};

cxx_data *data_of(struct elevator_queue *eq)
{
	return static_cast<cxx_data *>(eq->elevator_data);
}

int cxx_init_queue(struct elevator_queue *eq)
{
	elv_list_init(&data_of(eq)->fifo);
	return 0;
}

void cxx_add_request(struct elevator_queue *eq, struct elv_request *rq,
		     uint64_t)
{
	elv_list_add_tail(&rq->elv_fifo, &data_of(eq)->fifo);
}

void cxx_merged_requests(struct elevator_queue *, struct elv_request *,
			 struct elv_request *next)
{
	elv_list_del(&next->elv_fifo);
}

struct elv_request *cxx_dispatch(struct elevator_queue *eq, uint64_t, bool)
{
	cxx_data *d = data_of(eq);

	if (elv_list_empty(&d->fifo))
		return nullptr;
	struct elv_request *rq = elv_list_first(&d->fifo, struct elv_request,
						elv_fifo);
	elv_list_del(&rq->elv_fifo);
	d->dispatched++;
	return rq;
}

bool cxx_has_work(struct elevator_queue *eq)
{
	return !elv_list_empty(&data_of(eq)->fifo);
}

// No designated initialisers before C++20: fill the fields in code.
struct elevator_type cxx_make_type()
{
	struct elevator_type t = {};

	t.name = "cxx";
	t.description = "test: FIFO written in C++";
	t.data_size = sizeof(cxx_data);
	t.init_queue = cxx_init_queue;
	t.merged_requests = cxx_merged_requests;
	t.add_request = cxx_add_request;
	t.dispatch = cxx_dispatch;
	t.has_work = cxx_has_work;
	t.tunables = cxx_tunables;
	t.counters = cxx_counters;
	return t;
}

struct elevator_type cxx_type = cxx_make_type();

}  // namespace

IOSCHED_ELEVATOR(cxx_type);
