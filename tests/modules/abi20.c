/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test module: a scheduler as a module built against the 2.0 header
 * exports it, with struct_size ending at its tunables.  What follows in
 * memory is not the module's to define; here it holds a limit_depth that
 * would let one request of a direction in at a time, so that a host
 * reading past struct_size shows in how many requests it admits.
 */
#include <stddef.h>

#include "fuse-iosched/elevator.h"

struct abi20_data {
	struct elv_list fifo;
};

static void abi20_add_request(struct elevator_queue *eq,
			      struct elv_request *rq, uint64_t now_ns)
{
	struct abi20_data *ad = eq->elevator_data;

	elv_list_add_tail(&rq->elv_fifo, &ad->fifo);
}

static struct elv_request *abi20_dispatch(struct elevator_queue *eq,
					  uint64_t now_ns, bool force)
{
	struct abi20_data *ad = eq->elevator_data;
	struct elv_request *rq;

	if (elv_list_empty(&ad->fifo))
		return NULL;
	rq = elv_list_first(&ad->fifo, struct elv_request, elv_fifo);
	elv_list_del(&rq->elv_fifo);
	return rq;
}

static bool abi20_has_work(struct elevator_queue *eq)
{
	struct abi20_data *ad = eq->elevator_data;

	return !elv_list_empty(&ad->fifo);
}

static int abi20_init_queue(struct elevator_queue *eq)
{
	struct abi20_data *ad = eq->elevator_data;

	elv_list_init(&ad->fifo);
	return 0;
}

static unsigned abi20_limit_one(struct elevator_queue *eq,
				const struct elv_request *rq,
				unsigned nr_requests)
{
	return 1;
}

static const struct elv_tunable abi20_tunables[] = {
	{ .name = NULL },
};

static struct elevator_type abi20_type = {
	.name = "abi20",
	.description = "test: a module of ABI 2.0, before limit_depth",
	.data_size = sizeof(struct abi20_data),
	.ops = {
		.init_queue = abi20_init_queue,
		.add_request = abi20_add_request,
		.dispatch = abi20_dispatch,
		.has_work = abi20_has_work,
	},
	.tunables = abi20_tunables,
	.limit_depth = abi20_limit_one,
};

/* By hand: IOSCHED_ELEVATOR() would give today's full size. */
__attribute__((visibility("default")))
const struct elevator_type *iosched_elevator(void);
const struct elevator_type *iosched_elevator(void)
{
	abi20_type.abi_version = IOSCHED_ABI_VERSION;
	abi20_type.struct_size = offsetof(struct elevator_type, tunables) +
				 sizeof(abi20_type.tunables);
	return &abi20_type;
}
