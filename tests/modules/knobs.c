/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test module: tunables beyond the plain integer.  budget has a store
 * callback with a side effect (half follows it), half is read-only and
 * computed, and stores counts the callback's calls; two counters count
 * the requests added and dispatched.  Built a second time
 * with KNOBS_TOO_MANY as "toomany", whose table is one entry longer than
 * IOSCHED_TUNABLES_MAX: the loader must refuse it.  Built a third time
 * with KNOBS_ABI2 as "abi2", a module that says ABI 2 as the 2.x header's
 * macro made it: the loader must refuse it, naming both versions.
 */
#include <errno.h>
#include <stddef.h>

#include "fuse-iosched/elevator.h"

struct knobs_data {
	struct elv_list fifo;
	int64_t budget;
	int64_t budget_half;	/* budget / 2, kept by knobs_store_budget */
	int64_t stores;		/* calls of knobs_store_budget */
	uint64_t added, dispatched;	/* counters */
};

static int knobs_init_queue(struct elevator_queue *eq)
{
	struct knobs_data *kd = eq->elevator_data;

	elv_list_init(&kd->fifo);
	kd->budget_half = kd->budget / 2;
	return 0;
}

static void knobs_add_request(struct elevator_queue *eq,
			      struct elv_request *rq, uint64_t now_ns)
{
	struct knobs_data *kd = eq->elevator_data;

	elv_list_add_tail(&rq->elv_fifo, &kd->fifo);
	kd->added++;
}

static struct elv_request *knobs_dispatch(struct elevator_queue *eq,
					  uint64_t now_ns, bool force)
{
	struct knobs_data *kd = eq->elevator_data;
	struct elv_request *rq;

	if (elv_list_empty(&kd->fifo))
		return NULL;
	rq = elv_list_first(&kd->fifo, struct elv_request, elv_fifo);
	elv_list_del(&rq->elv_fifo);
	kd->dispatched++;
	return rq;
}

static bool knobs_has_work(struct elevator_queue *eq)
{
	struct knobs_data *kd = eq->elevator_data;

	return !elv_list_empty(&kd->fifo);
}

static int knobs_store_budget(struct elevator_queue *eq, int64_t value)
{
	struct knobs_data *kd = eq->elevator_data;

	kd->stores++;
	if (value == 13)
		return -EBUSY;	/* a store may refuse a value in range */
	kd->budget = value;
	kd->budget_half = value / 2;
	return 0;
}

static int64_t knobs_show_half(struct elevator_queue *eq)
{
	struct knobs_data *kd = eq->elevator_data;

	return kd->budget_half;
}

#define KNOB(n) ELV_TUNABLE(struct knobs_data, stores, 0, 0, 1, "", "filler")

static const struct elv_tunable knobs_tunables[] = {
	ELV_TUNABLE_STORE(struct knobs_data, budget, 100, 0, 1000, "sectors",
			  "a budget; half follows it", knobs_store_budget),
	ELV_TUNABLE_COMPUTED("half", knobs_show_half, "sectors",
			     "half the budget"),
	ELV_TUNABLE(struct knobs_data, stores, 0, 0, 1000000, "",
		    "calls of budget's store"),
#ifdef KNOBS_TOO_MANY
	/* 3 above + 61 = IOSCHED_TUNABLES_MAX + 1. */
#define KNOB10 KNOB(0), KNOB(1), KNOB(2), KNOB(3), KNOB(4), KNOB(5), \
	KNOB(6), KNOB(7), KNOB(8), KNOB(9)
	KNOB10, KNOB10, KNOB10, KNOB10, KNOB10, KNOB10, KNOB(60),
#endif
	{ .name = NULL },
};

static const struct elv_counter knobs_counters[] = {
	ELV_COUNTER(struct knobs_data, added),
	ELV_COUNTER(struct knobs_data, dispatched),
	{ .name = NULL },
};

static struct elevator_type knobs_type = {
#if defined(KNOBS_TOO_MANY)
	.name = "toomany",
#elif defined(KNOBS_ABI2)
	.name = "abi2",
#else
	.name = "knobs",
#endif
	.description = "test: computed, read-only and stored tunables",
	.data_size = sizeof(struct knobs_data),
	.init_queue = knobs_init_queue,
	.add_request = knobs_add_request,
	.dispatch = knobs_dispatch,
	.has_work = knobs_has_work,
	.tunables = knobs_tunables,
	.counters = knobs_counters,
};

#ifdef KNOBS_ABI2
/* Exported by hand, since IOSCHED_ELEVATOR() fills in version 3. */
__attribute__((visibility("default")))
const struct elevator_type *iosched_elevator(void);
const struct elevator_type *iosched_elevator(void)
{
	knobs_type.abi_version = 2;
	knobs_type.struct_size = sizeof knobs_type;
	return &knobs_type;
}
#else
IOSCHED_ELEVATOR(knobs_type);
#endif
