/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test module: a well-formed scheduler whose init_queue always fails, as
 * if it ran out of memory.  It loads and registers; switching to it must
 * fail with ENOMEM and leave the previous scheduler in charge.
 */
#include <errno.h>

#include "fuse-iosched/elevator.h"

struct failinit_data {
	struct elv_list fifo;
};

static int failinit_init_queue(struct elevator_queue *eq)
{
	return -ENOMEM;
}

static void failinit_add_request(struct elevator_queue *eq,
				 struct elv_request *rq, uint64_t now_ns)
{
	struct failinit_data *fd = eq->elevator_data;

	elv_list_add_tail(&rq->elv_fifo, &fd->fifo);
}

static struct elv_request *failinit_dispatch(struct elevator_queue *eq,
					 uint64_t now_ns, bool force)
{
	struct failinit_data *fd = eq->elevator_data;
	struct elv_request *rq;

	if (elv_list_empty(&fd->fifo))
		return NULL;
	rq = elv_list_first(&fd->fifo, struct elv_request, elv_fifo);
	elv_list_del(&rq->elv_fifo);
	return rq;
}

static bool failinit_has_work(struct elevator_queue *eq)
{
	struct failinit_data *fd = eq->elevator_data;

	return !elv_list_empty(&fd->fifo);
}

static struct elevator_type failinit_type = {
	.name = "failinit",
	.description = "test: init_queue fails",
	.data_size = sizeof(struct failinit_data),
	.init_queue = failinit_init_queue,
	.add_request = failinit_add_request,
	.dispatch = failinit_dispatch,
	.has_work = failinit_has_work,
};

IOSCHED_ELEVATOR(failinit_type);
