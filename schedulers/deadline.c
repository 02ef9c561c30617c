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
 * Expiry is soft: within a class the scheduler never holds work back.
 *
 * I/O priority classes, as mq-deadline has them since Linux 5.14: the
 * real-time, best-effort (with class none) and idle classes each have
 * their own lists and sweep, and a class is served only while no request
 * of a higher class is queued or in flight.  A request of a lower class
 * that has waited prio_aging_expire goes out all the same, so that no
 * class starves for ever.  One difference is forced by the host: the
 * kernel's blk-mq does not run a queue when a request completes, and runs
 * one whose scheduler held everything back again only after 3 ms, while
 * our host calls dispatch at every completion, in the gap before a busy
 * process sends its next request.  So a class held back is looked at
 * again DL_PRIO_RERUN_MS later, on a wake-up, not at the next call.
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
/* Longest a lower class waits behind a higher one (ms), as the kernel's. */
#define DL_PRIO_AGING_EXPIRE	10000
/*
 * When a class was held back behind a higher one, look at it again this
 * much later (ms): the kernel's BLK_MQ_BUDGET_DELAY, after which blk-mq
 * runs a queue again when its scheduler dispatched nothing.
 */
#define DL_PRIO_RERUN_MS	3

/* The classes in the order served: mq-deadline's dd_prio. */
/* In elv_ioprio_class_index's order. */
enum dl_class {
	DL_RT,
	DL_BE,
	DL_IDLE,
	DL_NR_CLASSES,
};

/* One class's requests and sweep. */
struct dl_class_data {
	/* Each queued request is in the tree and on the list of its dir. */
	struct elv_rb_root sort_tree[2];	/* by sector, via elv_rb */
	struct elv_list fifo_list[2];	/* by arrival, via elv_fifo */
	unsigned nr_queued[2];
	/*
	 * Queued and in flight: the kernel's dd_queued(), added minus
	 * completed (or merged away).  While it is not zero, lower classes
	 * wait.
	 */
	unsigned nr_held;
	/* Held back behind a higher class: looked at again from then. */
	uint64_t rerun_ns;

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
};


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
	int64_t prio_aging_expire;	/* ms */

	struct dl_class_data cls[DL_NR_CLASSES];

	/* Shared by the classes, as in the kernel. */
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

static enum dl_class dl_class_of(const struct elv_request *rq)
{
	return elv_ioprio_class_index(rq->ioprio);
}

static struct dl_class_data *dl_cls(struct deadline_data *dd,
				    const struct elv_request *rq)
{
	return &dd->cls[dl_class_of(rq)];
}

static bool dl_class_queued(const struct dl_class_data *cd)
{
	return cd->nr_queued[ELV_READ] != 0 || cd->nr_queued[ELV_WRITE] != 0;
}

static uint64_t dl_expire_ns(const struct deadline_data *dd, enum elv_dir dir)
{
	int64_t ms = dir == ELV_READ ? dd->read_expire : dd->write_expire;

	return elv_ms_to_ns(ms);
}

/* The request after rq in sector order, or NULL at the end. */
static struct elv_request *dl_latter(struct dl_class_data *cd,
				     struct elv_request *rq)
{
	return elv_rq_sort_next(rq);
}

/* Insert rq in sector order. */
static void dl_sort_add(struct dl_class_data *cd, struct elv_request *rq)
{
	struct elv_request *next;

	elv_rq_sort_add(&cd->sort_tree[rq->dir], rq);

	/* A request just ahead of the sweep is the sweep's next stop. */
	if (cd->head_valid[rq->dir] && rq->sector >= cd->head[rq->dir]) {
		next = cd->next_rq[rq->dir];
		if (next == NULL || rq->sector < next->sector)
			cd->next_rq[rq->dir] = rq;
	}
}

static void dl_sort_del(struct dl_class_data *cd, struct elv_request *rq)
{
	if (cd->next_rq[rq->dir] == rq)
		cd->next_rq[rq->dir] = dl_latter(cd, rq);
	elv_rq_sort_del(&cd->sort_tree[rq->dir], rq);
}

/* rq leaves the lists: dispatched, or merged into another. */
static void dl_remove(struct dl_class_data *cd, struct elv_request *rq)
{
	dl_sort_del(cd, rq);
	elv_list_del(&rq->elv_fifo);
	cd->nr_queued[rq->dir]--;
}

/* True if the oldest request of dir has reached its deadline. */
static bool dl_fifo_expired(struct dl_class_data *cd, enum elv_dir dir,
			    uint64_t now_ns)
{
	struct elv_request *rq;

	if (elv_list_empty(&cd->fifo_list[dir]))
		return false;
	rq = dl_fifo_entry(cd->fifo_list[dir].next);
	return now_ns >= rq->elv_deadline_ns;
}

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

/*
 * Hand rq over to the host and move its class's sweep past it.  Turning
 * to a direction ends the sweep of the other one: when that direction's
 * turn comes again, its batch starts from its oldest request.
 */
static struct elv_request *dl_move_to_dispatch(struct deadline_data *dd,
					       struct dl_class_data *cd,
					       struct elv_request *rq)
{
	enum elv_dir dir = rq->dir;
	enum elv_dir other = dir == ELV_READ ? ELV_WRITE : ELV_READ;

	cd->next_rq[other] = NULL;
	cd->head_valid[other] = false;
	cd->next_rq[dir] = dl_latter(cd, rq);
	cd->head[dir] = elv_rq_end_sector(rq);
	cd->head_valid[dir] = true;
	dl_remove(cd, rq);
	dd->batching += dl_batch_cost(rq);
	return rq;
}

/*
 * The request class cd would hand out next, or NULL when it holds none;
 * *new_batch says whether it starts a batch.  Nothing changes yet, so
 * that prio aging can look and pass.
 */
static struct elv_request *dl_class_pick(struct deadline_data *dd,
					 struct dl_class_data *cd,
					 uint64_t now_ns, bool *new_batch)
{
	bool reads = !elv_list_empty(&cd->fifo_list[ELV_READ]);
	bool writes = !elv_list_empty(&cd->fifo_list[ELV_WRITE]);
	struct elv_request *rq;
	enum elv_dir dir;

	/* Go on with the batch while it is entitled to. */
	*new_batch = false;
	rq = cd->next_rq[ELV_WRITE] != NULL ? cd->next_rq[ELV_WRITE] :
		cd->next_rq[ELV_READ];
	if (rq != NULL && (int64_t)dd->batching < dd->fifo_batch)
		return rq;

	/* A new batch: reads first, unless writes have waited too long. */
	*new_batch = true;
	if (reads)
		dir = writes && (int64_t)dd->starved >= dd->writes_starved ?
			ELV_WRITE : ELV_READ;
	else if (writes)
		dir = ELV_WRITE;
	else
		return NULL;

	/*
	 * Start at the oldest request if it expired or the sweep is over;
	 * otherwise carry on sweeping from where the last batch stopped.
	 */
	if (dl_fifo_expired(cd, dir, now_ns) || cd->next_rq[dir] == NULL)
		return dl_fifo_entry(cd->fifo_list[dir].next);
	return cd->next_rq[dir];
}

/*
 * Dispatch from class cd what its batch and direction rules pick, if that
 * arrived no later than latest_ns; else NULL.
 */
static struct elv_request *dl_class_dispatch(struct deadline_data *dd,
					     struct dl_class_data *cd,
					     uint64_t now_ns,
					     uint64_t latest_ns)
{
	struct elv_request *rq;
	bool new_batch;

	rq = dl_class_pick(dd, cd, now_ns, &new_batch);
	if (rq == NULL || rq->arrival_ns > latest_ns)
		return NULL;
	if (new_batch) {
		/* A read batch passes over waiting writes once more. */
		if (rq->dir == ELV_WRITE)
			dd->starved = 0;
		else if (!elv_list_empty(&cd->fifo_list[ELV_WRITE]))
			dd->starved++;
		dd->batching = 0;
	}
	return dl_move_to_dispatch(dd, cd, rq);
}

/*
 * With requests of two classes or more about, a request of a lower class
 * that arrived prio_aging_expire ago or more goes first.
 */
static struct elv_request *dl_dispatch_aged(struct deadline_data *dd,
					    uint64_t now_ns)
{
	uint64_t aging_ns = elv_ms_to_ns(dd->prio_aging_expire);
	struct elv_request *rq;
	int c, busy = 0;

	for (c = DL_RT; c < DL_NR_CLASSES; c++)
		busy += dd->cls[c].nr_held != 0;
	if (busy < 2 || now_ns < aging_ns)
		return NULL;
	for (c = DL_BE; c < DL_NR_CLASSES; c++) {
		rq = dl_class_dispatch(dd, &dd->cls[c], now_ns,
				       now_ns - aging_ns);
		if (rq != NULL)
			return rq;
	}
	return NULL;
}

/*
 * Class c has requests in flight, so the classes below it wait.  Look at
 * each again DL_PRIO_RERUN_MS from now, as blk-mq would, and not at the
 * completions before: one of them would let it in ahead of the next
 * request of c, which its process is about to send.
 */
static void dl_hold_back(struct elevator_queue *eq, struct deadline_data *dd,
			 int c, uint64_t now_ns)
{
	struct dl_class_data *cd;

	for (c++; c < DL_NR_CLASSES; c++) {
		cd = &dd->cls[c];
		if (dl_class_queued(cd) && now_ns >= cd->rerun_ns) {
			cd->rerun_ns = now_ns + elv_ms_to_ns(DL_PRIO_RERUN_MS);
			elv_wakeup_at(eq, cd->rerun_ns);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Hooks.                                                              */

static int dl_init_queue(struct elevator_queue *eq)
{
	struct deadline_data *dd = dl_data(eq);
	int c, dir;

	/* The data arrives zeroed (empty trees) with the tunables set. */
	for (c = DL_RT; c < DL_NR_CLASSES; c++)
		for (dir = ELV_READ; dir <= ELV_WRITE; dir++)
			elv_list_init(&dd->cls[c].fifo_list[dir]);
	return 0;
}

static void dl_exit_queue(struct elevator_queue *eq)
{
	struct deadline_data *dd = dl_data(eq);
	struct dl_class_data *cd;
	int c;

	/* The host only exits an empty scheduler; say so if it did not. */
	for (c = DL_RT; c < DL_NR_CLASSES; c++) {
		cd = &dd->cls[c];
		if (cd->nr_held != 0 || dl_class_queued(cd))
			elv_log(eq, ELV_LOG_ERR,
				"deadline: exit with %u requests of class %d "
				"held (%u reads and %u writes queued)",
				cd->nr_held, c, cd->nr_queued[ELV_READ],
				cd->nr_queued[ELV_WRITE]);
	}
}

/*
 * front_merges 0 turns off front merges of new requests, as in the kernel.
 * Requests of different classes stay apart, since they wait on different
 * lists (the kernel keeps apart requests of different ioprio altogether).
 */
static bool dl_allow_merge(struct elevator_queue *eq,
			   const struct elv_request *rq,
			   const struct elv_request *next, enum elv_merge type)
{
	if (dl_class_of(rq) != dl_class_of(next))
		return false;
	return type != ELV_FRONT_MERGE || dl_data(eq)->front_merges != 0;
}

/* A front merge moved rq's first sector down: put it back in order. */
static void dl_merged(struct elevator_queue *eq, struct elv_request *rq,
		      enum elv_merge type)
{
	struct dl_class_data *cd = dl_cls(dl_data(eq), rq);

	if (type != ELV_FRONT_MERGE)
		return;
	dl_sort_del(cd, rq);
	dl_sort_add(cd, rq);
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
	struct dl_class_data *cd = dl_cls(dl_data(eq), rq);

	elv_rq_merge_fifo(rq, next);
	dl_remove(cd, next);
	cd->nr_held--;

	/* If the merge moved rq's first sector, keep the sort order. */
	if (elv_rq_sort_misplaced(rq)) {
		dl_sort_del(cd, rq);
		dl_sort_add(cd, rq);
	}
}

static void dl_add_request(struct elevator_queue *eq, struct elv_request *rq,
			   uint64_t now_ns)
{
	struct deadline_data *dd = dl_data(eq);
	struct dl_class_data *cd = dl_cls(dd, rq);

	dl_sort_add(cd, rq);
	/*
	 * Count from arrival, not from now: time spent waiting for a free
	 * slot in a full queue is latency the process sees all the same.
	 */
	rq->elv_deadline_ns = rq->arrival_ns + dl_expire_ns(dd, rq->dir);
	elv_list_add_tail(&rq->elv_fifo, &cd->fifo_list[rq->dir]);
	cd->nr_queued[rq->dir]++;
	cd->nr_held++;
}

/*
 * Pick the next request: an aged one of a lower class, else one of the
 * highest class that has requests, unless a higher class still has some
 * in flight.  With force (a drain), every class is served.
 */
static struct elv_request *dl_dispatch(struct elevator_queue *eq,
				       uint64_t now_ns,
				       bool force)
{
	struct deadline_data *dd = dl_data(eq);
	struct dl_class_data *cd;
	struct elv_request *rq;
	int c;

	rq = dl_dispatch_aged(dd, now_ns);
	if (rq != NULL)
		return rq;
	for (c = DL_RT; c < DL_NR_CLASSES; c++) {
		cd = &dd->cls[c];
		/*
		 * Held back a moment ago.  Ask for the wake-up again: the
		 * host keeps only the earliest, and one that was due may
		 * have displaced ours and fired since.
		 */
		if (!force && dl_class_queued(cd) && now_ns < cd->rerun_ns) {
			elv_wakeup_at(eq, cd->rerun_ns);
			return NULL;
		}
		rq = dl_class_dispatch(dd, cd, now_ns, UINT64_MAX);
		if (rq != NULL)
			return rq;
		if (cd->nr_held != 0 && !force) {
			dl_hold_back(eq, dd, c, now_ns);
			return NULL;
		}
	}
	return NULL;
}

static void dl_completed(struct elevator_queue *eq, struct elv_request *rq,
			 uint64_t now_ns)
{
	(void)now_ns;
	dl_cls(dl_data(eq), rq)->nr_held--;
}

static bool dl_has_work(struct elevator_queue *eq)
{
	struct deadline_data *dd = dl_data(eq);
	int c;

	for (c = DL_RT; c < DL_NR_CLASSES; c++)
		if (dl_class_queued(&dd->cls[c]))
			return true;
	return false;
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
	ELV_TUNABLE(struct deadline_data, prio_aging_expire,
		    DL_PRIO_AGING_EXPIRE, 0, 3600000, "ms",
		    "longest a request waits behind a higher I/O priority class"),
	{ .name = NULL },
};

/* ------------------------------------------------------------------ */
/* The scheduler and its registration.                                 */

static struct elevator_type deadline_type = {
	.name = "deadline",
	.description = "sector-sorted batches with read and write expiry, "
		       "by I/O priority class",
	.data_size = sizeof(struct deadline_data),
	.init_queue = dl_init_queue,
	.exit_queue = dl_exit_queue,
	.allow_merge = dl_allow_merge,
	.merged = dl_merged,
	.merged_requests = dl_merged_requests,
	.add_request = dl_add_request,
	.dispatch = dl_dispatch,
	.completed = dl_completed,
	.has_work = dl_has_work,
	.tunables = dl_tunables,
};

IOSCHED_ELEVATOR(deadline_type);
