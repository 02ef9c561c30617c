/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * noop: the built-in scheduler.  Requests are served in the order they
 * arrive; the host still merges adjacent requests (back and front), since
 * a request that ends where a queued one begins costs nothing to join.
 * Suited to devices where ordering buys nothing, and the fallback when no
 * module loads.
 *
 * Written against the public header only, like any module; the host links
 * it in and finds it through elv_noop() rather than a module's entry.
 */
#include "fuse-iosched/elevator.h"

struct noop_data {
	struct elv_list fifo;	/* queued requests, oldest first */
};

static int noop_init_queue(struct elevator_queue *eq)
{
	struct noop_data *nd = eq->elevator_data;

	elv_list_init(&nd->fifo);
	return 0;
}

static void noop_merged_requests(struct elevator_queue *eq,
				 struct elv_request *rq,
				 struct elv_request *next)
{
	elv_list_del(&next->elv_fifo);
}

static void noop_add_request(struct elevator_queue *eq,
			     struct elv_request *rq, uint64_t now_ns)
{
	struct noop_data *nd = eq->elevator_data;

	elv_list_add_tail(&rq->elv_fifo, &nd->fifo);
}

static struct elv_request *noop_dispatch(struct elevator_queue *eq,
					 uint64_t now_ns, bool force)
{
	struct noop_data *nd = eq->elevator_data;
	struct elv_request *rq;

	if (elv_list_empty(&nd->fifo))
		return NULL;
	rq = elv_list_first(&nd->fifo, struct elv_request, elv_fifo);
	elv_list_del(&rq->elv_fifo);
	return rq;
}

static bool noop_has_work(struct elevator_queue *eq)
{
	struct noop_data *nd = eq->elevator_data;

	return !elv_list_empty(&nd->fifo);
}

static struct elevator_type noop_type = {
	.name = "noop",
	.description = "first in, first out; merging only",
	.data_size = sizeof(struct noop_data),
	.init_queue = noop_init_queue,
	.merged_requests = noop_merged_requests,
	.add_request = noop_add_request,
	.dispatch = noop_dispatch,
	.has_work = noop_has_work,
};

IOSCHED_ELEVATOR_FN(elv_noop, noop_type);
