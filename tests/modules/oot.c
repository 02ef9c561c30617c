/*
 * Test module built out of tree, against the installed header only (see
 * tests/oot-module.sh): first in, first out, no merging of its own.
 */
#include "fuse-iosched/elevator.h"

struct oot_data {
	struct elv_list fifo;	/* oldest first */
};

static int oot_init_queue(struct elevator_queue *eq)
{
	struct oot_data *od = eq->elevator_data;

	elv_list_init(&od->fifo);
	return 0;
}

static void oot_add_request(struct elevator_queue *eq, struct elv_request *rq,
			    uint64_t now_ns)
{
	struct oot_data *od = eq->elevator_data;

	elv_list_add_tail(&rq->elv_fifo, &od->fifo);
}

static struct elv_request *oot_dispatch(struct elevator_queue *eq,
				    uint64_t now_ns, bool force)
{
	struct oot_data *od = eq->elevator_data;
	struct elv_request *rq;

	if (elv_list_empty(&od->fifo))
		return NULL;
	rq = elv_list_first(&od->fifo, struct elv_request, elv_fifo);
	elv_list_del(&rq->elv_fifo);
	return rq;
}

static bool oot_has_work(struct elevator_queue *eq)
{
	struct oot_data *od = eq->elevator_data;

	return !elv_list_empty(&od->fifo);
}

static void oot_merged_requests(struct elevator_queue *eq,
				struct elv_request *rq, struct elv_request *next)
{
	elv_list_del(&next->elv_fifo);
}

static struct elevator_type oot_type = {
	.name = "oot",
	.description = "test: FIFO built out of tree",
	.data_size = sizeof(struct oot_data),
	.ops = {
		.init_queue = oot_init_queue,
		.merged_requests = oot_merged_requests,
		.add_request = oot_add_request,
		.dispatch = oot_dispatch,
		.has_work = oot_has_work,
	},
};

IOSCHED_ELEVATOR(oot_type);
