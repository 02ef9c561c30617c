/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cfq: Completely Fair Queueing, after the Linux 2.6 one (Jens Axboe).
 * What it does, and where it differs from the kernel's on purpose, is in
 * fuse-iosched(8), SCHEDULERS, cfq.
 *
 * pidq.c holds the queues (one per process for its sync requests, pooled
 * ones for the rest) and the order within each; this file decides which
 * queue owns the device and for how long.  Busy queues other than the
 * active one are on cd->tree, one list sorted by class, then key; an idle
 * per-process queue is on cd->parked until freed.  elv_priv[1] of a
 * dispatched request says which in-flight counts it is in, so that its
 * completion undoes exactly those.
 */
#include <stdbool.h>
#include <stdint.h>

#include "fuse-iosched/elevator.h"
#include "pidq.h"

/*
 * Requests the active queue may have in flight before it must wait.  The
 * FIFO expiry (pidq.h) is checked once per slice.
 */
#define CFQ_QUANTUM		8
/* Slices (ms) at the middle level 4; see cfq_slice_ns for the others. */
#define CFQ_SLICE_SYNC		100
#define CFQ_SLICE_ASYNC		40
/* An async slice also ends after this many requests per level step. */
#define CFQ_SLICE_ASYNC_RQ	2

/* Each level away from 4 changes a slice by a SCALEth of its base. */
#define CFQ_SLICE_SCALE		5

/*
 * The idle class may start only after the other classes have been quiet
 * (nothing queued or in flight) for this long (ms), as the kernel's
 * CFQ_IDLE_GRACE: a best-effort process pausing between two reads does not
 * let the idle class in.  Nothing else lets it in: under a steady load it
 * gets nothing, as ionice(1) promises.
 */
#define CFQ_IDLE_GRACE_MS	100

/*
 * A process whose mean seek distance exceeds this (sectors) is seeky, the
 * kernel's CIC_SEEKY: waiting for its next request saves no seek, so it
 * is waited for at most CFQ_MIN_TT_MS (just enough to keep its slice if
 * it issues back to back), and not at all on a device that queues
 * (CFQ_HW_QUEUE_MIN), where others' requests cost it nothing.
 */
#define CFQ_SEEKY_SECTORS	8192
#define CFQ_MIN_TT_MS		2
#define CFQ_HW_QUEUE_MIN	4

/*
 * Seek distances are averaged in fixed point, the newest weighing 1/8:
 * the weight of the samples tends to CFQ_SEEK_ONE, and the mean counts
 * once it passes CFQ_SEEK_VALID (three samples).
 */
#define CFQ_SEEK_ONE		256
#define CFQ_SEEK_VALID		80

/*
 * How long (ms) an idle per-process queue is kept for its process: longer
 * than the turns of many readers take, short enough that the queues of
 * processes that have exited do not pile up.
 */
#define CFQ_PARK_MS		10000

/* elv_priv[1] of a dispatched request: what it counts in. */
#define CFQ_RQ_SYNC_FLIGHT	0x1u	/* cd->sync_flight */
#define CFQ_RQ_NONIDLE_FLIGHT	0x2u	/* cd->nonidle_flight */

struct cfq_queue {
	struct pidq q;			/* first: see pidq.h */
	struct elv_list rr;		/* on cd->tree while busy, not active */
	int64_t key;			/* its place on cd->tree (ns) */
	struct elv_list park;		/* on cd->parked while idle */
	uint64_t parked_ns;		/* since when */

	enum pidq_class cls;
	int level;			/* 0 (highest) to 7 */
	bool per_process;		/* malloc'd; sync: may be idled on */
	bool exited;			/* its process exited: never idled
					 * on, freed once idle */

	unsigned dispatched;		/* requests in flight */

	/* The slice, while active. */
	uint64_t slice_end;		/* 0 until its first completion */
	int64_t slice_resid;		/* left over (> 0) or overrun (< 0) */
	unsigned slice_dispatch;	/* requests dispatched in this slice */
	bool fifo_checked;		/* FIFO looked at in this slice */

	struct pidq_ttime ttime;

	/* Seek distance of a per-process queue's requests. */
	bool seek_started;		/* last_pos is set */
	uint64_t last_pos;		/* end of its last request */
	uint64_t seek_total;		/* weighted sum, fixed point */
	uint64_t seek_mean;		/* sectors */
	unsigned seek_weight;		/* of the samples, fixed point */
};

struct cfq_data {
	struct pidq_data pq;		/* first: see pidq.h */

	/* Tunables, as pq's: read when used. */
	int64_t quantum;		/* requests */
	int64_t slice_sync;		/* ms */
	int64_t slice_async;		/* ms */
	int64_t slice_async_rq;		/* requests */

	/* Busy queues waiting for their slice: RT, BE, IDLE, each by key. */
	struct elv_list tree;
	unsigned busy;			/* queues holding requests */
	unsigned busy_class[PIDQ_NR_CLASSES];	/* the same, per class */

	/* Idle per-process queues, the longest parked first. */
	struct elv_list parked;

	/* The pooled queues, also known to pq. */
	struct cfq_queue pool[PIDQ_NR_CLASSES][PIDQ_LEVELS];

	/* The queue owning the slice, and whether it is being waited for. */
	struct cfq_queue *active;
	bool idling;
	uint64_t idle_until;

	unsigned in_flight;		/* dispatched, not completed */
	bool hw_tag;			/* in_flight went past HW_QUEUE_MIN */
	unsigned sync_flight;		/* in flight from per-process queues */
	unsigned nonidle_flight;	/* in flight from RT and BE queues */
	bool nonidle_seen;		/* an RT or BE request completed */
	uint64_t last_nonidle_end;	/* when it last happened */

	/*
	 * Counters (cfq_counters), named after the kernel's blktrace
	 * messages where it has one: slices begun (set_active); slices
	 * ended because their time was used, because the process did not
	 * come back within the idle window (idle timer fired), because the
	 * queue emptied and was not worth waiting for, after their share of
	 * requests (an async queue's, or the idle class's one), or by a
	 * preempting queue; idle windows armed (arm_idle), and how many of
	 * those the process ended by coming back.
	 */
	uint64_t set_active;
	uint64_t expired_slice_used;
	uint64_t expired_idle_timer;
	uint64_t expired_empty;
	uint64_t expired_rq_limit;
	uint64_t preempt;
	uint64_t arm_idle;
	uint64_t idle_hit;
};

/* pidq frees the queues it allocates, and its hooks find their data. */
_Static_assert(offsetof(struct cfq_queue, q) == 0, "pidq first in a queue");
_Static_assert(offsetof(struct cfq_data, pq) == 0, "pidq_data first");

/* ------------------------------------------------------------------ */
/* Helpers.                                                            */

static struct cfq_data *cfq_data(struct elevator_queue *eq)
{
	return eq->elevator_data;
}

static struct cfq_queue *cfq_queue(struct pidq *q)
{
	return elv_container_of(q, struct cfq_queue, q);
}

static struct cfq_queue *cfq_rq_queue(const struct elv_request *rq)
{
	return cfq_queue(rq->elv_priv[0]);
}

/*
 * The slice of a queue: base + base/5 * (4 - level), so with a sync base
 * of 100 ms level 0 gets 180 ms and level 7 gets 40 ms.
 */
static uint64_t cfq_slice_ns(const struct cfq_data *cd,
			     const struct cfq_queue *cfqq)
{
	int64_t base = cfqq->per_process ? cd->slice_sync : cd->slice_async;
	int64_t ms = base + base / CFQ_SLICE_SCALE *
		(PIDQ_DEFAULT_LEVEL - cfqq->level);

	return elv_ms_to_ns(ms < 1 ? 1 : ms);
}

/*
 * How much later than a level-0 sync queue cfqq should be served, with
 * the others busy: the kernel's slice_offset, its approximation of the
 * slices the others get before it.
 */
static int64_t cfq_slice_offset(const struct cfq_data *cd,
				const struct cfq_queue *cfqq)
{
	struct cfq_queue top = { .per_process = true, .level = 0 };

	return (int64_t)(cd->busy - 1) *
		(int64_t)(cfq_slice_ns(cd, &top) - cfq_slice_ns(cd, cfqq));
}

/* Put cfqq on the tree by its class, then key; after equal ones. */
static void cfq_tree_insert(struct cfq_data *cd, struct cfq_queue *cfqq)
{
	struct elv_list *pos;
	struct cfq_queue *o;

	elv_list_for_each(pos, &cd->tree) {
		o = elv_list_entry(pos, struct cfq_queue, rr);
		if (o->cls > cfqq->cls ||
		    (o->cls == cfqq->cls && o->key > cfqq->key))
			break;
	}
	elv_list_add_tail(&cfqq->rr, pos);
}

/*
 * (Re)place cfqq on the tree: at the front of its class (a preempting
 * queue), or at now + slice_offset, corrected by its residual.  The
 * kernel adds slice_resid to the key, which would delay a queue for the
 * slice it was robbed of and advance one that overran; the sign is taken
 * the way its comment means it (see fuse-iosched(8)).
 */
static void cfq_tree_add(struct cfq_data *cd, struct cfq_queue *cfqq,
			 uint64_t now_ns, bool front)
{
	if (front) {
		cfqq->key = INT64_MIN;
	} else {
		cfqq->key = (int64_t)now_ns + cfq_slice_offset(cd, cfqq) -
			cfqq->slice_resid;
		cfqq->slice_resid = 0;
	}
	if (!elv_list_empty(&cfqq->rr))
		elv_list_del(&cfqq->rr);
	cfq_tree_insert(cd, cfqq);
}

/* Requests an async slice may dispatch: more for higher levels. */
static unsigned cfq_async_max_rq(const struct cfq_data *cd,
				 const struct cfq_queue *cfqq)
{
	int64_t base = cd->slice_async_rq;

	return (unsigned)(2 * (base + base * (PIDQ_LEVELS - 1 - cfqq->level)));
}

static bool cfq_seek_valid(const struct cfq_queue *cfqq)
{
	return cfqq->seek_weight > CFQ_SEEK_VALID;
}

static bool cfq_seeky(const struct cfq_queue *cfqq)
{
	return cfq_seek_valid(cfqq) && cfqq->seek_mean > CFQ_SEEKY_SECTORS;
}

/*
 * Fold the distance from the end of the process's last request into its
 * mean.  A single long seek counts at most 2 Mi sectors beyond four means
 * early on and 128 Ki later, so that one odd jump does not mark a
 * sequential reader seeky for long.  The kernel measures a process's first
 * request from sector 0; here the first request of a new queue is not
 * counted: measured from 0 it would make every new reader of a file far
 * into the disk look seeky for its first forty requests or so, and a
 * queue is new again after CFQ_PARK_MS idle.
 */
static void cfq_update_seek(struct cfq_queue *cfqq, const struct elv_request *rq)
{
	uint64_t d, cap;

	if (!cfqq->seek_started) {
		cfqq->seek_started = true;
		cfqq->last_pos = elv_rq_end_sector(rq);
		return;
	}
	d = rq->sector > cfqq->last_pos ? rq->sector - cfqq->last_pos :
		cfqq->last_pos - rq->sector;
	cap = 4 * cfqq->seek_mean + (cfqq->seek_weight <= 60 ?
		2 * 1024 * 1024 : 2 * 1024 * 64);
	if (d > cap)
		d = cap;
	cfqq->seek_weight = (7 * cfqq->seek_weight + CFQ_SEEK_ONE) / 8;
	cfqq->seek_total = (7 * cfqq->seek_total + CFQ_SEEK_ONE * d) / 8;
	cfqq->seek_mean = (cfqq->seek_total + cfqq->seek_weight / 2) /
		cfqq->seek_weight;
	cfqq->last_pos = elv_rq_end_sector(rq);
}

/* cfqq arrives zeroed, its struct pidq set up. */
static void cfq_queue_init(struct cfq_queue *cfqq, enum pidq_class cls,
			   int level, bool per_process)
{
	elv_list_init(&cfqq->rr);
	elv_list_init(&cfqq->park);
	cfqq->cls = cls;
	cfqq->level = level;
	cfqq->per_process = per_process;
	/* A new process is assumed to come back until it proves otherwise. */
	cfqq->ttime.idle_window = per_process;
}

/*
 * A queue whose process exited and whose pid comes back: a new process,
 * with nothing of the old one's think time or seeks.
 */
static void cfq_queue_reuse(struct cfq_queue *cfqq)
{
	cfqq->exited = false;
	cfqq->ttime = (struct pidq_ttime){ .idle_window = true };
	cfqq->seek_started = false;
	cfqq->seek_total = cfqq->seek_mean = 0;
	cfqq->seek_weight = 0;
}

/*
 * Park a per-process queue that has nothing to do now, or free it if its
 * process exited.
 */
static void cfq_put_queue(struct cfq_data *cd, struct cfq_queue *cfqq,
			  uint64_t now_ns)
{
	if (!cfqq->per_process || cfqq->q.queued != 0 ||
	    cfqq->dispatched != 0 || cfqq == cd->active ||
	    !elv_list_empty(&cfqq->park))
		return;
	if (cfqq->exited) {
		pidq_free_process(&cd->pq, &cfqq->q);
		return;
	}
	cfqq->parked_ns = now_ns;
	elv_list_add_tail(&cfqq->park, &cd->parked);
}

/* Free the queues parked for longer than CFQ_PARK_MS. */
static void cfq_reap(struct cfq_data *cd, uint64_t now_ns)
{
	struct cfq_queue *cfqq;

	while (!elv_list_empty(&cd->parked)) {
		cfqq = elv_list_first(&cd->parked, struct cfq_queue, park);
		if (now_ns < cfqq->parked_ns + elv_ms_to_ns(CFQ_PARK_MS))
			return;
		elv_list_del(&cfqq->park);
		pidq_free_process(&cd->pq, &cfqq->q);
	}
}

/* A process's priority changed (ionice -p): move its queue. */
static void cfq_set_prio(struct cfq_data *cd, struct cfq_queue *cfqq,
			 enum pidq_class cls, int level)
{
	if (cfqq->q.queued != 0 && cfqq->cls != cls) {
		cd->busy_class[cfqq->cls]--;
		cd->busy_class[cls]++;
	}
	cfqq->cls = cls;
	cfqq->level = level;
	/* Same key, in its new class. */
	if (!elv_list_empty(&cfqq->rr)) {
		elv_list_del(&cfqq->rr);
		cfq_tree_insert(cd, cfqq);
	}
}

/* ------------------------------------------------------------------ */
/* Queues entering and leaving the service lists.                      */

/* cfqq got a request (pidq_add_rq): a first one makes it busy. */
static void cfq_rq_added(struct cfq_data *cd, struct cfq_queue *cfqq,
			 uint64_t now_ns)
{
	if (cfqq->q.queued != 1)
		return;
	cd->busy++;
	cd->busy_class[cfqq->cls]++;
	if (cfqq != cd->active)
		cfq_tree_add(cd, cfqq, now_ns, false);
}

/* rq leaves its queue (dispatched or merged away). */
static void cfq_remove_rq(struct cfq_data *cd, struct cfq_queue *cfqq,
			  struct elv_request *rq)
{
	if (!pidq_remove_rq(&cd->pq, &cfqq->q, rq))
		return;
	cd->busy--;
	cd->busy_class[cfqq->cls]--;
	elv_list_del(&cfqq->rr);
}

static void cfq_activate(struct cfq_data *cd, struct cfq_queue *cfqq)
{
	elv_list_del(&cfqq->rr);
	cd->set_active++;
	cd->active = cfqq;
	cd->idling = false;
	cfqq->slice_end = 0;
	cfqq->slice_dispatch = 0;
	cfqq->fifo_checked = false;
}

/*
 * End the active queue's slice.  When it was cut short (preempted) or
 * found overrun at a completion, the kernel's timed_out, what was left of
 * it, or overrun, is kept as slice_resid and moves the queue's next turn
 * earlier or later.
 */
static void cfq_expire(struct cfq_data *cd, uint64_t now_ns, bool timed_out)
{
	struct cfq_queue *cfqq = cd->active;

	if (cfqq == NULL)
		return;
	cd->active = NULL;
	cd->idling = false;
	if (timed_out && cfqq->slice_end != 0)
		cfqq->slice_resid = (int64_t)cfqq->slice_end - (int64_t)now_ns;
	cfqq->slice_end = 0;
	/* An empty queue keeps its residual for when it is busy again. */
	if (cfqq->q.queued == 0) {
		cfq_put_queue(cd, cfqq, now_ns);
		return;
	}
	cfq_tree_add(cd, cfqq, now_ns, false);
}

static struct cfq_queue *cfq_tree_first(struct cfq_data *cd)
{
	if (elv_list_empty(&cd->tree))
		return NULL;
	return elv_list_first(&cd->tree, struct cfq_queue, rr);
}

/*
 * The queue to get the next slice: real-time, best-effort, and the idle
 * class once the others have been quiet for CFQ_IDLE_GRACE_MS.
 */
static struct cfq_queue *cfq_next_queue(struct elevator_queue *eq,
					struct cfq_data *cd, uint64_t now_ns)
{
	struct cfq_queue *cfqq;
	uint64_t at;

	cfqq = cfq_tree_first(cd);
	if (cfqq == NULL || cfqq->cls != PIDQ_IDLE)
		return cfqq;
	/* An RT or BE completion will call dispatch again. */
	if (cd->nonidle_flight != 0)
		return NULL;
	at = cd->last_nonidle_end + elv_ms_to_ns(CFQ_IDLE_GRACE_MS);
	if (!cd->nonidle_seen || now_ns >= at)
		return cfqq;
	elv_wakeup_at(eq, at);
	return NULL;
}

/*
 * The queue to dispatch from, or NULL to wait (for a completion, or for
 * the wake-up asked for).  The active queue keeps its slice while it has
 * time and work, or while its process is expected back.
 */
static struct cfq_queue *cfq_select_queue(struct elevator_queue *eq,
					  struct cfq_data *cd, uint64_t now_ns)
{
	struct cfq_queue *cfqq = cd->active;

	if (cfqq != NULL) {
		if (cfqq->slice_end != 0 && now_ns >= cfqq->slice_end) {
			cd->expired_slice_used++;
			goto expire;
		}
		if (cfqq->q.queued != 0) {
			cd->idling = false;
			return cfqq;
		}
		if (cd->idling) {
			if (now_ns < cd->idle_until) {
				/* The timer may have fired early: ask again. */
				elv_wakeup_at(eq, cd->idle_until);
				return NULL;
			}
			cd->expired_idle_timer++;
			goto expire;
		}
		/* Its completion decides whether to idle. */
		if (cfqq->dispatched != 0 && cfqq->ttime.idle_window &&
		    cd->pq.slice_idle > 0)
			return NULL;
		cd->expired_empty++;
expire:
		cfq_expire(cd, now_ns, false);
	}
	cfqq = cfq_next_queue(eq, cd, now_ns);
	if (cfqq != NULL)
		cfq_activate(cd, cfqq);
	return cfqq;
}

/* Hand rq of the active queue over to the host. */
static struct elv_request *cfq_take(struct cfq_data *cd, struct cfq_queue *cfqq,
				struct elv_request *rq)
{
	uintptr_t flags = 0;

	cd->pq.last_position = elv_rq_end_sector(rq);
	cfq_remove_rq(cd, cfqq, rq);
	if (++cd->in_flight > CFQ_HW_QUEUE_MIN)
		cd->hw_tag = true;
	cfqq->dispatched++;
	cfqq->slice_dispatch++;
	if (cfqq->per_process) {
		cd->sync_flight++;
		flags |= CFQ_RQ_SYNC_FLIGHT;
	}
	if (cfqq->cls != PIDQ_IDLE) {
		cd->nonidle_flight++;
		flags |= CFQ_RQ_NONIDLE_FLIGHT;
	}
	rq->elv_priv[1] = (void *)flags;
	return rq;
}

/*
 * Draining: no idling, no quantum, no class delays.  Whatever is queued
 * goes out, the active queue first.
 */
static struct elv_request *cfq_dispatch_forced(struct cfq_data *cd,
					       uint64_t now_ns)
{
	struct cfq_queue *cfqq = cd->active;

	cd->idling = false;
	if (cfqq == NULL || cfqq->q.queued == 0) {
		cfq_expire(cd, now_ns, false);
		cfqq = cfq_tree_first(cd);
		if (cfqq == NULL)
			return NULL;
		cfq_activate(cd, cfqq);
	}
	return cfq_take(cd, cfqq, cfqq->q.next_rq);
}

/* ------------------------------------------------------------------ */
/* Hooks.                                                              */

static int cfq_init_queue(struct elevator_queue *eq)
{
	struct cfq_data *cd = cfq_data(eq);
	struct cfq_queue *cfqq;
	int c, l;

	elv_list_init(&cd->tree);
	elv_list_init(&cd->parked);
	for (c = 0; c < PIDQ_NR_CLASSES; c++) {
		for (l = 0; l < PIDQ_LEVELS; l++) {
			cfqq = &cd->pool[c][l];
			pidq_init_pool(&cd->pq, &cfqq->q, (enum pidq_class)c,
				       l);
			cfq_queue_init(cfqq, (enum pidq_class)c, l, false);
		}
	}
	return 0;
}

/*
 * next was merged into rq: it leaves its queue, which still holds rq
 * (pidq_allow_merge keeps merges within a queue).
 */
static void cfq_merged_requests(struct elevator_queue *eq,
				struct elv_request *rq,
				struct elv_request *next)
{
	struct cfq_data *cd = cfq_data(eq);

	pidq_merged_fifo(rq, next);
	cfq_remove_rq(cd, cfq_rq_queue(next), next);
}

/*
 * cfq_rq_close: is rq as near the head as the active process's next
 * request would likely be (within its mean seek distance)?
 */
static bool cfq_rq_close(const struct cfq_data *cd,
			 const struct cfq_queue *active,
			 const struct elv_request *rq)
{
	uint64_t pos = cd->pq.last_position;
	uint64_t d = rq->sector > pos ? rq->sector - pos : pos - rq->sector;

	return cfq_seek_valid(active) && d <= active->seek_mean;
}

/*
 * Should cfqq, which just got rq, take the device from the active queue
 * at once?  The idle class never does.  Otherwise, as in the kernel: a
 * higher class; a process's sync queue against an async one; and, while
 * cfq idles for the active process, a request as close to the head as
 * that process's would be, which saves the wait without costing a seek.
 * (The kernel also preempts a queue whose slice is used up; here the next
 * dispatch, which the submitter asks for at once, expires it.)
 */
static bool cfq_should_preempt(const struct cfq_data *cd,
			       const struct cfq_queue *cfqq,
			       const struct elv_request *rq)
{
	const struct cfq_queue *active = cd->active;

	if (active == NULL || active == cfqq || cfqq->cls == PIDQ_IDLE)
		return false;
	if (active->cls != cfqq->cls)
		return cfqq->cls < active->cls;
	if (cfqq->per_process && !active->per_process)
		return true;
	return cd->idling && active->per_process &&
		cfq_rq_close(cd, active, rq);
}

static void cfq_add_request(struct elevator_queue *eq, struct elv_request *rq,
			    uint64_t now_ns)
{
	struct cfq_data *cd = cfq_data(eq);
	struct cfq_queue *cfqq = NULL;
	struct pidq *q;
	enum pidq_class cls;
	int level;

	cfq_reap(cd, now_ns);
	pidq_prio(rq->ioprio, &cls, &level);
	if (rq->sync && rq->pid != 0) {
		q = pidq_find_process(&cd->pq, rq->pid);
		if (q == NULL) {
			/* No memory: the pool serves it (unfair but safe). */
			cfqq = pidq_new_process(&cd->pq, sizeof *cfqq, rq->pid);
			if (cfqq != NULL)
				cfq_queue_init(cfqq, cls, level, true);
		} else {
			cfqq = cfq_queue(q);
			elv_list_del(&cfqq->park);
			if (cfqq->exited)
				cfq_queue_reuse(cfqq);
			if (cfqq->cls != cls || cfqq->level != level)
				cfq_set_prio(cd, cfqq, cls, level);
			pidq_think_time(&cd->pq, &cfqq->ttime, now_ns);
		}
		if (cfqq != NULL) {
			cfq_update_seek(cfqq, rq);
			if (cd->hw_tag && cfq_seeky(cfqq))
				cfqq->ttime.idle_window = false;
		}
	}
	if (cfqq == NULL)
		cfqq = &cd->pool[cls][level];

	pidq_add_rq(&cd->pq, &cfqq->q, rq);
	cfq_rq_added(cd, cfqq, now_ns);

	if (cfqq == cd->active) {
		/* The process came back within the wait: serve it. */
		if (cd->idling)
			cd->idle_hit++;
		cd->idling = false;
	} else if (cfq_should_preempt(cd, cfqq, rq)) {
		cd->preempt++;
		cfq_expire(cd, now_ns, true);
		/* Next, ahead of the queue it preempted. */
		cfq_tree_add(cd, cfqq, now_ns, true);
	}
}

static struct elv_request *cfq_dispatch(struct elevator_queue *eq,
					uint64_t now_ns,
					bool force)
{
	struct cfq_data *cd = cfq_data(eq);
	struct cfq_queue *cfqq;
	struct elv_request *rq = NULL;
	unsigned max;
	bool others;

	if (cd->pq.queued == 0)
		return NULL;
	if (force)
		return cfq_dispatch_forced(cd, now_ns);

	cfqq = cfq_select_queue(eq, cd, now_ns);
	if (cfqq == NULL || cfqq->q.queued == 0)
		return NULL;

	/*
	 * Async work waits while sync requests are in flight: they are what
	 * processes wait for, and the async queue gets the device after.
	 */
	if (!cfqq->per_process && cd->sync_flight != 0)
		return NULL;

	/* At most quantum in flight, or one for the idle class. */
	max = cfqq->cls == PIDQ_IDLE ? 1 :
		(unsigned)(cd->quantum < 1 ? 1 : cd->quantum);
	if (cfqq->dispatched >= max) {
		if (cfqq->cls == PIDQ_IDLE || cd->busy > 1)
			return NULL;
		/* Alone: a deeper queue does no harm to anyone. */
		if (cfqq->dispatched >= 4 * max)
			return NULL;
	}

	/* An expired request goes first, looked for once per slice. */
	if (!cfqq->fifo_checked) {
		cfqq->fifo_checked = true;
		rq = pidq_fifo_expired(&cd->pq, &cfqq->q, now_ns);
	}
	if (rq == NULL)
		rq = cfqq->q.next_rq;

	cfq_take(cd, cfqq, rq);

	/*
	 * With others waiting, an async slice also ends after its share of
	 * requests, and the idle class gets one request per turn.
	 */
	others = cd->busy > (cfqq->q.queued != 0 ? 1u : 0u);
	if (others && (cfqq->cls == PIDQ_IDLE || (!cfqq->per_process &&
	    cfqq->slice_dispatch >= cfq_async_max_rq(cd, cfqq)))) {
		cd->expired_rq_limit++;
		cfq_expire(cd, now_ns, false);
	}
	return rq;
}

/*
 * Completion: the moment to decide what the active queue does next.  When
 * its last request is done and its process usually returns within
 * slice_idle, wait for it (but not past the slice).
 */
static void cfq_completed(struct elevator_queue *eq, struct elv_request *rq,
			  uint64_t now_ns)
{
	struct cfq_data *cd = cfq_data(eq);
	struct cfq_queue *cfqq = cfq_rq_queue(rq);
	uintptr_t flags = (uintptr_t)rq->elv_priv[1];

	cfqq->dispatched--;
	cd->in_flight--;
	if (flags & CFQ_RQ_SYNC_FLIGHT)
		cd->sync_flight--;
	if (flags & CFQ_RQ_NONIDLE_FLIGHT) {
		cd->nonidle_flight--;
		cd->nonidle_seen = true;
		cd->last_nonidle_end = now_ns;
	}
	if (cfqq->per_process) {
		cfqq->ttime.has_end = true;
		cfqq->ttime.last_end_ns = now_ns;
	}

	if (cfqq != cd->active) {
		cfq_put_queue(cd, cfqq, now_ns);
		return;
	}
	/*
	 * The slice runs from the first completion, as the kernel's
	 * slice_new: the time the first request waited behind the previous
	 * queue's is not charged to this one.
	 */
	if (cfqq->slice_end == 0)
		cfqq->slice_end = now_ns + cfq_slice_ns(cd, cfqq);
	/* An overrun is charged to the queue's next turn. */
	if (cfqq->cls == PIDQ_IDLE || now_ns >= cfqq->slice_end) {
		if (cfqq->cls == PIDQ_IDLE)
			cd->expired_rq_limit++;
		else
			cd->expired_slice_used++;
		cfq_expire(cd, now_ns, cfqq->cls != PIDQ_IDLE);
		return;
	}
	if (cfqq->q.queued == 0 && cfqq->dispatched == 0 && cfqq->per_process &&
	    cfqq->ttime.idle_window && cd->pq.slice_idle > 0) {
		cd->idling = true;
		cd->arm_idle++;
		cd->idle_until = now_ns + elv_ms_to_ns(
			cfq_seeky(cfqq) && cd->pq.slice_idle > CFQ_MIN_TT_MS ?
			CFQ_MIN_TT_MS : cd->pq.slice_idle);
		if (cfqq->slice_end != 0 && cd->idle_until > cfqq->slice_end)
			cd->idle_until = cfqq->slice_end;
		elv_wakeup_at(eq, cd->idle_until);
	}
}

/* ------------------------------------------------------------------ */
/* Tunables under .control/iosched/, counters in .control/stats.      */

/*
 * pid exited (the kernel's cfq_exit_cfqq): its queue is never idled on
 * again, its slice ends if it has nothing queued, and it is freed once it
 * has nothing queued or in flight (cfq_put_queue), now if it is idle.
 */
static void cfq_exit_process(struct elevator_queue *eq, pid_t pid,
			     uint64_t now_ns)
{
	struct cfq_data *cd = cfq_data(eq);
	struct pidq *q = pid != 0 ? pidq_find_process(&cd->pq, pid) : NULL;
	struct cfq_queue *cfqq;

	if (q == NULL)
		return;
	cfqq = cfq_queue(q);
	cfqq->exited = true;
	cfqq->ttime.idle_window = false;
	elv_list_del(&cfqq->park);
	if (cfqq == cd->active && cfqq->q.queued == 0)
		cfq_expire(cd, now_ns, false);
	else
		cfq_put_queue(cd, cfqq, now_ns);
}

/*
 * As cfq_may_queue: while cfq idles for the active queue's process, that
 * process's next synchronous request is admitted over the limit, or the
 * slice would run out with its request stuck behind a full queue.
 */
static enum elv_may_queue cfq_may_queue(struct elevator_queue *eq,
					const struct elv_request *rq)
{
	const struct cfq_data *cd = cfq_data(eq);
	const struct cfq_queue *active = cd->active;

	if (cd->idling && active != NULL && active->per_process &&
	    rq->sync && active->q.node.pid == rq->pid)
		return ELV_MQUEUE_MUST;
	return ELV_MQUEUE_MAY;
}

static const struct elv_tunable cfq_tunables[] = {
	ELV_TUNABLE(struct cfq_data, quantum, CFQ_QUANTUM, 1, 1024, "",
		    "requests a queue may have in flight in its slice"),
	PIDQ_TUNABLE(struct cfq_data, fifo_expire_sync, PIDQ_FIFO_EXPIRE_SYNC,
		     0, 3600000, "ms",
		     "age at which a sync request goes first in its slice"),
	PIDQ_TUNABLE(struct cfq_data, fifo_expire_async,
		     PIDQ_FIFO_EXPIRE_ASYNC, 0, 3600000, "ms",
		     "age at which an async request goes first in its slice"),
	PIDQ_TUNABLE(struct cfq_data, back_seek_max, PIDQ_BACK_SEEK_MAX,
		     0, 1073741824, "KiB",
		     "longest backward seek taken within a queue"),
	PIDQ_TUNABLE(struct cfq_data, back_seek_penalty,
		     PIDQ_BACK_SEEK_PENALTY, 1, 1000, "",
		     "cost of a backward seek relative to a forward one"),
	ELV_TUNABLE(struct cfq_data, slice_sync, CFQ_SLICE_SYNC, 1, 60000,
		    "ms", "slice of a process's queue at level 4"),
	ELV_TUNABLE(struct cfq_data, slice_async, CFQ_SLICE_ASYNC, 1, 60000,
		    "ms", "slice of an async queue at level 4"),
	ELV_TUNABLE(struct cfq_data, slice_async_rq, CFQ_SLICE_ASYNC_RQ,
		    1, 1024, "",
		    "async requests per slice, per level below 8, times 2"),
	PIDQ_TUNABLE(struct cfq_data, slice_idle, PIDQ_SLICE_IDLE, 0, 1000,
		     "ms", "wait for a process to issue again (0: never)"),
	{ .name = NULL },
};

static const struct elv_counter cfq_counters[] = {
	ELV_COUNTER(struct cfq_data, set_active),
	ELV_COUNTER(struct cfq_data, expired_slice_used),
	ELV_COUNTER(struct cfq_data, expired_idle_timer),
	ELV_COUNTER(struct cfq_data, expired_empty),
	ELV_COUNTER(struct cfq_data, expired_rq_limit),
	ELV_COUNTER(struct cfq_data, preempt),
	ELV_COUNTER(struct cfq_data, arm_idle),
	ELV_COUNTER(struct cfq_data, idle_hit),
	{ .name = NULL },
};

/* ------------------------------------------------------------------ */
/* The scheduler and its registration.                                 */

static struct elevator_type cfq_type = {
	.name = "cfq",
	.description = "per-process queues in fair time slices, by priority",
	.data_size = sizeof(struct cfq_data),
	.init_queue = cfq_init_queue,
	.exit_queue = pidq_exit_queue,
	.allow_merge = pidq_allow_merge,
	.merged = pidq_merged,
	.merged_requests = cfq_merged_requests,
	.add_request = cfq_add_request,
	.dispatch = cfq_dispatch,
	.completed = cfq_completed,
	.has_work = pidq_has_work,
	.may_queue = cfq_may_queue,
	.exit_process = cfq_exit_process,
	.tunables = cfq_tunables,
	.counters = cfq_counters,
};

IOSCHED_ELEVATOR(cfq_type);
