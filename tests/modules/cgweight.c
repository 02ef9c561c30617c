/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test module: a FIFO that logs, for each request of a group other than
 * the previous request's, the group's path and weight as the host's
 * services (elv_cgroup_path, elv_cgroup_weight) give them, so that a
 * mount test can see what a scheduler is told.
 */
#include <stddef.h>

#include "fuse-iosched/elevator.h"

struct cgweight_data {
	struct elv_list fifo;
	uint64_t last;		/* the last group logged, + 1; 0: none */
};

static int cgweight_init_queue(struct elevator_queue *eq)
{
	struct cgweight_data *cd = eq->elevator_data;

	elv_list_init(&cd->fifo);
	return 0;
}

static void cgweight_add_request(struct elevator_queue *eq,
				 struct elv_request *rq, uint64_t now_ns)
{
	struct cgweight_data *cd = eq->elevator_data;
	char path[256];

	elv_list_add_tail(&rq->elv_fifo, &cd->fifo);
	if (cd->last == rq->cgroup + 1)
		return;
	cd->last = rq->cgroup + 1;
	if (elv_cgroup_path(eq, rq->cgroup, path, sizeof path) < 0)
		path[0] = '\0';
	elv_log(eq, ELV_LOG_INFO, "cgroup %s weight %u", path,
		(unsigned)elv_cgroup_weight(eq, rq->cgroup));
}

static struct elv_request *cgweight_dispatch(struct elevator_queue *eq,
					     uint64_t now_ns, bool force)
{
	struct cgweight_data *cd = eq->elevator_data;
	struct elv_request *rq;

	if (elv_list_empty(&cd->fifo))
		return NULL;
	rq = elv_list_first(&cd->fifo, struct elv_request, elv_fifo);
	elv_list_del(&rq->elv_fifo);
	return rq;
}

static bool cgweight_has_work(struct elevator_queue *eq)
{
	struct cgweight_data *cd = eq->elevator_data;

	return !elv_list_empty(&cd->fifo);
}

static struct elevator_type cgweight_type = {
	.name = "cgweight",
	.description = "test: logs each request's group and its weight",
	.data_size = sizeof(struct cgweight_data),
	.init_queue = cgweight_init_queue,
	.add_request = cgweight_add_request,
	.dispatch = cgweight_dispatch,
	.has_work = cgweight_has_work,
};

IOSCHED_ELEVATOR(cgweight_type);
