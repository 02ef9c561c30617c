/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The deadline I/O scheduler, after the Linux one (Jens Axboe, 2002).
 *
 * Every request sits on two lists of its direction: one sorted by sector,
 * served in ascending order like an elevator sweeping across the disk, and
 * one in arrival order whose head is checked against an expiry time.  Work
 * is handed out in batches of up to fifo_batch requests of one direction
 * (a merged request counts once per 128 KiB), following the sector order;
 * a batch starts at the oldest request when that one has expired (or the
 * sweep has nothing left), so no request waits much longer than its expiry
 * time once its direction gets its turn.  Reads
 * are preferred, since a process usually waits for them, but a write batch
 * is served after writes_starved read batches have passed over waiting
 * writes.
 *
 * Expiry is soft: the scheduler never holds work back, so the host calls
 * dispatch whenever a worker is free and deadline needs no wake-ups.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "fuse-iosched/elevator.h"

/* A batch counts requests of up to this size once each (128 KiB). */
#define DL_BATCH_UNIT_SECTORS	256
/* Longest a read may wait before its batch starts at it (ms). */
#define DL_READ_EXPIRE		500
/* Likewise for writes: writes are mostly asynchronous, so far longer. */
#define DL_WRITE_EXPIRE		5000
/* Read batches that may pass over waiting writes before writes get one. */
#define DL_WRITES_STARVED	2
/* Allow the host's front merges of new requests (1) or not (0). */
#define DL_FRONT_MERGES		1
/* Requests in one batch, in sector order, before expiry is checked again. */
#define DL_FIFO_BATCH		16


struct deadline_data {
	/*
	 * Tunables first: the host sets them to their defaults before
	 * init_queue and may change them between any two calls, so they are
	 * read at the time of use and never cached.
	 */
	int64_t read_expire;		/* ms */
	int64_t write_expire;		/* ms */
	int64_t writes_starved;		/* read batches */
	int64_t front_merges;		/* boolean */
	int64_t fifo_batch;		/* requests */

	/* Each queued request is on both lists of its direction. */
	struct elv_list sort_list[2];	/* by sector, via elv_sort */
	struct elv_list fifo_list[2];	/* by arrival, via elv_fifo */
	unsigned nr_queued[2];

	/*
	 * The sweep.  next_rq[dir] is the request that follows, in sector
	 * order, the last one dispatched in dir; at most one direction has
	 * one, since turning to the other direction ends the sweep.  head is
	 * where the sweep has got to, so that a request arriving just ahead
	 * of it joins the sweep instead of waiting for the next one.
	 */
	struct elv_request *next_rq[2];
	uint64_t head[2];		/* end sector of the last dispatch */
	bool head_valid[2];

	unsigned batching;		/* batch units dispatched (dl_batch_cost) */
	unsigned starved;		/* read batches while writes waited */
};

/* ------------------------------------------------------------------ */
/* Helpers.                                                            */

static struct deadline_data *dl_data(struct elevator_queue *eq)
{
	return eq->elevator_data;
}

static struct elv_request *dl_fifo_entry(struct elv_list *l)
{
	return elv_list_entry(l, struct elv_request, elv_fifo);
}

static uint64_t dl_expire_ns(const struct deadline_data *dd, enum elv_dir dir)
{
	int64_t ms = dir == ELV_READ ? dd->read_expire : dd->write_expire;

	return elv_ms_to_ns(ms);
}

/* The request after rq in sector order, or NULL at the end of the list. */
static struct elv_request *dl_latter(struct deadline_data *dd,
				     struct elv_request *rq)
{
	return elv_rq_sort_next(&dd->sort_list[rq->dir], rq);
}

/* Insert rq in sector order. */
static void dl_sort_add(struct deadline_data *dd, struct elv_request *rq)
{
	struct elv_request *next;

	elv_rq_sort_add(&dd->sort_list[rq->dir], rq);

	/* A request just ahead of the sweep is the sweep's next stop. */
	if (dd->head_valid[rq->dir] && rq->sector >= dd->head[rq->dir]) {
		next = dd->next_rq[rq->dir];
		if (next == NULL || rq->sector < next->sector)
			dd->next_rq[rq->dir] = rq;
	}
}

static void dl_sort_del(struct deadline_data *dd, struct elv_request *rq)
{
	if (dd->next_rq[rq->dir] == rq)
		dd->next_rq[rq->dir] = dl_latter(dd, rq);
	elv_list_del(&rq->elv_sort);
}

/* rq leaves the scheduler: off both lists. */
static void dl_remove(struct deadline_data *dd, struct elv_request *rq)
{
	dl_sort_del(dd, rq);
	elv_list_del(&rq->elv_fifo);
	dd->nr_queued[rq->dir]--;
}

/* True if the oldest request of dir has reached its deadline. */
static bool dl_fifo_expired(struct deadline_data *dd, enum elv_dir dir,
			    uint64_t now_ns)
{
	struct elv_request *rq;

	if (elv_list_empty(&dd->fifo_list[dir]))
		return false;
	rq = dl_fifo_entry(dd->fifo_list[dir].next);
	return now_ns >= rq->elv_deadline_ns;
}

/*
 * Hand rq over to the host and move the sweep past it.  Turning to a
 * direction ends the sweep of the other one: when that direction's turn
 * comes again, its batch starts from its oldest request.
 */
/*
 * What rq takes out of a batch.  The host merges up to IOSCHED_MAX_SECTORS
 * (1 MiB) where the kernel's requests were mostly 128 KiB or less, so a
 * big merged request
 * counts once per 128 KiB: otherwise one batch of merged writes would
 * hold the disk for fifo_batch MiB while a synchronous reader waits.
 */
static unsigned dl_batch_cost(const struct elv_request *rq)
{
	uint64_t units = rq->nr_sectors / DL_BATCH_UNIT_SECTORS;

	return units > 1 ? (unsigned)units : 1;
}

static struct elv_request *dl_move_to_dispatch(struct deadline_data *dd,
					       struct elv_request *rq)
{
	enum elv_dir dir = rq->dir;
	enum elv_dir other = dir == ELV_READ ? ELV_WRITE : ELV_READ;

	dd->next_rq[other] = NULL;
	dd->head_valid[other] = false;
	dd->next_rq[dir] = dl_latter(dd, rq);
	dd->head[dir] = elv_rq_end_sector(rq);
	dd->head_valid[dir] = true;
	dl_remove(dd, rq);
	dd->batching += dl_batch_cost(rq);
	return rq;
}

/* ------------------------------------------------------------------ */
/* Hooks.                                                              */

static int dl_init_queue(struct elevator_queue *eq)
{
	struct deadline_data *dd = dl_data(eq);
	int dir;

	/* The data arrives zeroed with the tunables set: lists only. */
	for (dir = ELV_READ; dir <= ELV_WRITE; dir++) {
		elv_list_init(&dd->sort_list[dir]);
		elv_list_init(&dd->fifo_list[dir]);
	}
	return 0;
}

static void dl_exit_queue(struct elevator_queue *eq)
{
	struct deadline_data *dd = dl_data(eq);

	/* The host only exits an empty scheduler; say so if it did not. */
	if (dd->nr_queued[ELV_READ] != 0 || dd->nr_queued[ELV_WRITE] != 0)
		elv_log(eq, ELV_LOG_ERR,
			"deadline: exit with %u reads and %u writes queued",
			dd->nr_queued[ELV_READ], dd->nr_queued[ELV_WRITE]);
}

/* front_merges 0 turns off front merges of new requests, as in the kernel. */
static bool dl_allow_merge(struct elevator_queue *eq,
			   const struct elv_request *rq,
			   const struct elv_request *next, enum elv_merge type)
{
	return type != ELV_FRONT_MERGE || dl_data(eq)->front_merges != 0;
}

/* A front merge moved rq's first sector down: put it back in order. */
static void dl_merged(struct elevator_queue *eq, struct elv_request *rq,
		      enum elv_merge type)
{
	struct deadline_data *dd = dl_data(eq);

	if (type != ELV_FRONT_MERGE)
		return;
	dl_sort_del(dd, rq);
	dl_sort_add(dd, rq);
}

/*
 * next was merged into rq.  rq takes over next's place in the FIFO if next
 * was older, so that the merged request is not served later than the
 * oldest data it carries; then next is forgotten.
 */
static void dl_merged_requests(struct elevator_queue *eq,
			       struct elv_request *rq,
			       struct elv_request *next)
{
	struct deadline_data *dd = dl_data(eq);

	elv_rq_merge_fifo(rq, next);
	dl_remove(dd, next);

	/* If the merge moved rq's first sector, keep the sort order. */
	if (elv_rq_sort_misplaced(&dd->sort_list[rq->dir], rq)) {
		dl_sort_del(dd, rq);
		dl_sort_add(dd, rq);
	}
}

static void dl_add_request(struct elevator_queue *eq, struct elv_request *rq,
			   uint64_t now_ns)
{
	struct deadline_data *dd = dl_data(eq);

	dl_sort_add(dd, rq);
	/*
	 * Count from arrival, not from now: time spent waiting for a free
	 * slot in a full queue is latency the process sees all the same.
	 */
	rq->elv_deadline_ns = rq->arrival_ns + dl_expire_ns(dd, rq->dir);
	elv_list_add_tail(&rq->elv_fifo, &dd->fifo_list[rq->dir]);
	dd->nr_queued[rq->dir]++;
}

/*
 * Pick the next request.  Deadline never idles, so force makes no
 * difference: whenever something is queued, something is returned.
 */
static struct elv_request *dl_dispatch(struct elevator_queue *eq,
				       uint64_t now_ns,
				       bool force)
{
	struct deadline_data *dd = dl_data(eq);
	bool reads = !elv_list_empty(&dd->fifo_list[ELV_READ]);
	bool writes = !elv_list_empty(&dd->fifo_list[ELV_WRITE]);
	struct elv_request *rq;
	enum elv_dir dir;

	(void)force;

	/* Go on with the batch while it is entitled to. */
	rq = dd->next_rq[ELV_WRITE] != NULL ? dd->next_rq[ELV_WRITE] :
		dd->next_rq[ELV_READ];
	if (rq != NULL && (int64_t)dd->batching < dd->fifo_batch)
		return dl_move_to_dispatch(dd, rq);

	/* A new batch: reads first, unless writes have waited too long. */
	if (reads) {
		if (writes && (int64_t)dd->starved++ >= dd->writes_starved)
			dir = ELV_WRITE;
		else
			dir = ELV_READ;
	} else if (writes) {
		dir = ELV_WRITE;
	} else {
		return NULL;
	}
	if (dir == ELV_WRITE)
		dd->starved = 0;

	/*
	 * Start at the oldest request if it expired or the sweep is over;
	 * otherwise carry on sweeping from where the last batch stopped.
	 */
	if (dl_fifo_expired(dd, dir, now_ns) || dd->next_rq[dir] == NULL)
		rq = dl_fifo_entry(dd->fifo_list[dir].next);
	else
		rq = dd->next_rq[dir];
	dd->batching = 0;
	return dl_move_to_dispatch(dd, rq);
}

static bool dl_has_work(struct elevator_queue *eq)
{
	struct deadline_data *dd = dl_data(eq);

	return dd->nr_queued[ELV_READ] != 0 || dd->nr_queued[ELV_WRITE] != 0;
}

/* ------------------------------------------------------------------ */
/* Tunables, shown and set under .control/iosched/.                    */

static const struct elv_tunable dl_tunables[] = {
	ELV_TUNABLE(struct deadline_data, read_expire, DL_READ_EXPIRE,
		    0, 3600000, "ms",
		    "longest a read waits before its batch starts at it"),
	ELV_TUNABLE(struct deadline_data, write_expire, DL_WRITE_EXPIRE,
		    0, 3600000, "ms",
		    "longest a write waits before its batch starts at it"),
	ELV_TUNABLE(struct deadline_data, writes_starved, DL_WRITES_STARVED,
		    0, 1000, "",
		    "read batches that may pass over waiting writes"),
	ELV_TUNABLE(struct deadline_data, front_merges, DL_FRONT_MERGES,
		    0, 1, "",
		    "merge a request in front of a queued one (1) or not (0)"),
	ELV_TUNABLE(struct deadline_data, fifo_batch, DL_FIFO_BATCH,
		    1, 1024, "",
		    "requests (per 128 KiB) served in sector order before checking expiry"),
	{ .name = NULL },
};

/* ------------------------------------------------------------------ */
/* The scheduler and its registration.                                 */

static struct elevator_type deadline_type = {
	.name = "deadline",
	.description = "sector-sorted batches with read and write expiry",
	.data_size = sizeof(struct deadline_data),
	.ops = {
		.init_queue = dl_init_queue,
		.exit_queue = dl_exit_queue,
		.allow_merge = dl_allow_merge,
		.merged = dl_merged,
		.merged_requests = dl_merged_requests,
		.add_request = dl_add_request,
		.dispatch = dl_dispatch,
		.has_work = dl_has_work,
	},
	.tunables = dl_tunables,
};

IOSCHED_ELEVATOR(deadline_type);
