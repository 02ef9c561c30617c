/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bfq: Budget Fair Queueing, after Paolo Valente and Fabio Checconi's
 * scheduler (Linux block/bfq-*.c), much reduced.
 *
 * As in cfq, every process gets a queue of its own for its synchronous
 * requests, and asynchronous ones (and the kernel's, pid 0) are pooled in
 * one queue per priority class and level.  What differs is what the
 * queues are given: not time slices but budgets, counted in sectors.  The
 * queue in service dispatches until it has used its budget, until its
 * budget times out (timeout_sync: a slow or seeky process must not hold
 * the device forever), or until it runs dry and is not worth waiting for.
 *
 * Which queue is served next is decided by B-WF2Q+, a weighted fair
 * queueing algorithm working in virtual time.  Each class keeps a virtual
 * clock V that advances by the service handed out divided by the sum of
 * the weights of its busy queues.  A queue becoming busy gets a virtual
 * start S = max(V, its previous finish) and a virtual finish
 * F = S + budget / weight.  Among the eligible queues (S <= V) the one
 * with the smallest F is served; when its service ends, F is recomputed
 * from the sectors it really used, so bandwidth (not time) is what gets
 * shared out in proportion to the weights.  A queue that timed out is
 * charged its whole budget, so a slow process pays for the time it took.
 *
 * Weights come from the I/O priority: (8 - level) * 10 within a class.
 * Classes are served in strict order (real-time, best-effort, idle); the
 * idle class gets one request whenever it has waited BFQ_IDLE_STARVE_MS,
 * so that it is never starved for good.  Async requests are charged
 * BFQ_ASYNC_CHARGE times their size, as in the kernel: writes are cheap
 * to delay, reads have someone waiting.
 *
 * Low latency (low_latency 1).  Two kinds of processes get their weight
 * multiplied by BFQ_WR_COEFF for a while:
 *  - interactive ones: a process that starts issuing I/O, or comes back
 *    after BFQ_WR_MIN_IDLE_MS without any, is raised for
 *    BFQ_WR_INTERACTIVE_MS (a program starting up, loading its files);
 *  - soft real-time ones: a process that comes back with sync reads soon,
 *    but not too soon, after its previous ones (it consumes less than
 *    BFQ_SOFTRT_RATE sectors per second and does not come straight back)
 *    is raised for BFQ_WR_SOFTRT_MS, renewed each time it comes back so.
 * A raised queue becoming busy takes the device from a queue that is not
 * raised, so a program starting under a heavy writer gets its data almost
 * as fast as on an idle disk.
 *
 * Idling: when the queue in service runs dry and its process usually
 * comes back within slice_idle (a sync reader between two reads), the
 * device is kept for it: dispatch returns NULL and asks for a wake-up at
 * the end of the wait.  With force (draining) nobody is waited for.
 *
 * strict_guarantees 1 trades throughput and latency for predictability:
 * every queue that runs dry is waited for (async and slow-thinking ones
 * too), and nobody is weight-raised.
 *
 * The busy queues of a class sit in a plain list scanned linearly at each
 * pick.  The kernel keeps augmented red-black trees; here the number of
 * processes with I/O pending at once is small (tens at most), a pick
 * happens once per budget, not per request, and a list keeps the code
 * short.
 *
 * Per-process queues are allocated on a process's first request and freed
 * once they hold nothing, have nothing in flight and are not in service.
 * What bfq knows about a process (its finish time, budget, think time,
 * raising) outlives its queue in a small table indexed by pid, so that a
 * process pausing briefly is neither taken for a new one nor forgiven its
 * debt.  What bfq shares with cfq (the queues' hash, their requests'
 * order, the seek rule, merges) is in pidq.c.
 */
#include <stdbool.h>
#include <stdint.h>

#include "fuse-iosched/elevator.h"
#include "pidq.h"

/*
 * Longest service (ms) before a budget ends whatever is left of it.  The
 * FIFO expiry (pidq.h) is checked once per budget.
 */
#define BFQ_TIMEOUT_SYNC	125
/*
 * max_budget 0 picks this many sectors (8 MiB): about what a disk
 * streams in three quarters of timeout_sync.  The kernel measures the
 * device's peak rate to set it; we have no device to measure, only files.
 */
#define BFQ_DEFAULT_MAX_BUDGET	16384
/* The smallest budget, as a fraction of the largest. */
#define BFQ_MIN_BUDGET_DIV	32

/* Weight of a level: (8 - level) * BFQ_WEIGHT_STEP. */
#define BFQ_WEIGHT_STEP		10
/* Async sectors cost this many times their number. */
#define BFQ_ASYNC_CHARGE	3

/* Weight raising: factor, and the kernel's time constants (ms). */
#define BFQ_WR_COEFF		30
#define BFQ_WR_INTERACTIVE_MS	500
#define BFQ_WR_MIN_IDLE_MS	2000
#define BFQ_WR_SOFTRT_MS	300
/* Sectors per second below which a returning reader is soft real-time. */
#define BFQ_SOFTRT_RATE		7000
/* And it must not come back sooner than slice_idle plus this (ms). */
#define BFQ_SOFTRT_MIN_GAP_MS	4

/*
 * The idle class waits until the other classes have nothing, except that
 * once it has waited this long (ms, the kernel's BFQ_CL_IDLE_TIMEOUT) one
 * of its requests goes ahead of everybody.
 */
#define BFQ_IDLE_STARVE_MS	200

/* What outlives per-process queues, by pid. */
#define BFQ_HIST_SIZE		64

/* Virtual time: service << BFQ_SERVICE_SHIFT / weight. */
#define BFQ_SERVICE_SHIFT	20

#define BFQ_NS_PER_S		1000000000ULL

/* Where a queue becoming busy starts in virtual time. */
enum bfq_start {
	BFQ_START_FAIR,		/* max(V, F): no gain from leaving */
	BFQ_START_FORGIVE,	/* V: back after a long pause */
	BFQ_START_RESUME,	/* F: it only waited for its own request */
};

/* Why a queue's service ended: decides its charge and next budget. */
enum bfq_expire_why {
	BFQ_EXP_PREEMPTED,	/* someone with a better claim came */
	BFQ_EXP_TOO_IDLE,	/* waited for its process in vain */
	BFQ_EXP_NO_MORE,	/* ran dry, not worth waiting for */
	BFQ_EXP_TIMEOUT,	/* held the device for timeout_sync */
	BFQ_EXP_EXHAUSTED,	/* used its budget */
};

/*
 * What bfq remembers of a process, in its queue and, after the queue is
 * freed, in bd->hist.
 */
struct bfq_proc {
	pid_t pid;			/* 0: a free history slot */
	bool seen;			/* has been busy before */
	enum pidq_class cls;		/* the class finish belongs to */
	bool has_finish;
	uint64_t finish;		/* virtual finish of the last budget */
	uint64_t budget;		/* sectors, for the next service */

	unsigned wr_coeff;		/* weight factor, 1 when not raised */
	uint64_t wr_end;		/* raising ends then */
	uint64_t idle_since;		/* stopped being busy */
	uint64_t soft_rt_next;		/* soft real-time if back after */
	bool wait_rq;			/* expired dry, not by its choice */

	struct pidq_ttime ttime;
};

struct bfq_queue {
	struct pidq q;			/* first: see pidq.h */
	struct elv_list active;		/* on its class's list: busy, waiting */

	enum pidq_class cls;
	int level;			/* 0 (highest) to 7 */
	bool per_process;		/* malloc'd, sync; may be idled on */

	unsigned dispatched;		/* requests in flight */

	/*
	 * Busy: holding requests or in service.  A busy queue's weight is
	 * counted in its class's wsum.
	 */
	bool busy;
	unsigned weight;
	uint64_t start;			/* virtual start of this budget */
	uint64_t busy_since;
	uint64_t busy_served;		/* sectors charged since then */
	bool softrt_pending;		/* compute soft_rt_next when idle */

	/* The service, while in service. */
	uint64_t served;		/* sectors charged in it */
	uint64_t budget_timeout;	/* 0 until its first dispatch */
	bool fifo_checked;		/* FIFO looked at in this service */

	struct bfq_proc p;
};

/* One class: its busy queues and its virtual clock. */
struct bfq_sched {
	struct elv_list active;		/* busy queues not in service */
	uint64_t vtime;
	uint64_t wsum;			/* weights of its busy queues */
	unsigned busy;			/* its busy queues, in service too */
};

struct bfq_data {
	struct pidq_data pq;		/* first: see pidq.h */

	/* Tunables, as pq's: read when used. */
	int64_t low_latency;		/* flag */
	int64_t timeout_sync;		/* ms */
	int64_t max_budget;		/* sectors, 0: BFQ_DEFAULT_MAX_BUDGET */
	int64_t strict_guarantees;	/* flag */

	struct bfq_sched sched[PIDQ_NR_CLASSES];
	/* The pooled queues, also known to pq. */
	struct bfq_queue pool[PIDQ_NR_CLASSES][PIDQ_LEVELS];
	struct bfq_proc hist[BFQ_HIST_SIZE];	/* of freed queues */

	/* The queue in service, and whether it is being waited for. */
	struct bfq_queue *active;
	bool idling;
	uint64_t idle_until;

	uint64_t idle_stamp;		/* idle class last served, or waiting */
	uint64_t now;			/* the latest clock seen */
};

/* pidq frees the queues it allocates, and its hooks find their data. */
_Static_assert(offsetof(struct bfq_queue, q) == 0, "pidq first in a queue");
_Static_assert(offsetof(struct bfq_data, pq) == 0, "pidq_data first");

/* ------------------------------------------------------------------ */
/* Helpers.                                                            */

static struct bfq_data *bfq_data(struct elevator_queue *eq)
{
	return eq->elevator_data;
}

static struct bfq_queue *bfq_queue(struct pidq *q)
{
	return elv_container_of(q, struct bfq_queue, q);
}

static struct bfq_queue *bfq_rq_queue(const struct elv_request *rq)
{
	return bfq_queue(rq->elv_priv[0]);
}

/* Virtual times wrap around; compare them as the kernel does. */
static bool bfq_gt(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) > 0;
}

static uint64_t bfq_delta(uint64_t service, uint64_t weight)
{
	return (service << BFQ_SERVICE_SHIFT) / (weight != 0 ? weight : 1);
}

static uint64_t bfq_max_budget(const struct bfq_data *bd)
{
	return bd->max_budget > 0 ? (uint64_t)bd->max_budget :
		BFQ_DEFAULT_MAX_BUDGET;
}

static uint64_t bfq_min_budget(const struct bfq_data *bd)
{
	uint64_t min = bfq_max_budget(bd) / BFQ_MIN_BUDGET_DIV;

	return min != 0 ? min : 1;
}

/* What a request costs a queue's budget, in sectors. */
static uint64_t bfq_charge(const struct elv_request *rq)
{
	return rq->sync ? rq->nr_sectors : rq->nr_sectors * BFQ_ASYNC_CHARGE;
}

static bool bfq_raising_allowed(const struct bfq_data *bd)
{
	return bd->low_latency != 0 && bd->strict_guarantees == 0;
}

static unsigned bfq_weight(const struct bfq_queue *bfqq)
{
	return (unsigned)(PIDQ_LEVELS - bfqq->level) * BFQ_WEIGHT_STEP *
		bfqq->p.wr_coeff;
}

static unsigned bfq_hist_key(pid_t pid)
{
	return (uint32_t)pid % BFQ_HIST_SIZE;
}

/* bfqq arrives zeroed, its struct pidq set up. */
static void bfq_queue_init(struct bfq_queue *bfqq, const struct bfq_data *bd,
			   enum pidq_class cls, int level, bool per_process)
{
	elv_list_init(&bfqq->active);
	bfqq->cls = cls;
	bfqq->level = level;
	bfqq->per_process = per_process;
	bfqq->p.pid = bfqq->q.pid;
	bfqq->p.cls = cls;
	bfqq->p.budget = bfq_max_budget(bd);
	bfqq->p.wr_coeff = 1;
	/* A new process is assumed to come back until it proves otherwise. */
	bfqq->p.ttime.idle_window = per_process;
}

/* A process's first request since its queue was freed, or ever. */
static struct bfq_queue *bfq_new_process(struct bfq_data *bd, pid_t pid,
					 enum pidq_class cls, int level)
{
	struct bfq_proc *h = &bd->hist[bfq_hist_key(pid)];
	struct bfq_queue *bfqq = pidq_new_process(&bd->pq, sizeof *bfqq, pid);

	if (bfqq == NULL)
		return NULL;
	bfq_queue_init(bfqq, bd, cls, level, true);
	if (h->pid == pid) {
		bfqq->p = *h;
		h->pid = 0;
		/* A finish time means nothing in another class. */
		if (bfqq->p.cls != cls)
			bfqq->p.has_finish = false;
		bfqq->p.cls = cls;
	}
	return bfqq;
}

/* Free a per-process queue nobody needs any more; remember the process. */
static void bfq_put_queue(struct bfq_data *bd, struct bfq_queue *bfqq)
{
	if (!bfqq->per_process || bfqq->busy || bfqq->dispatched != 0 ||
	    bfqq == bd->active)
		return;
	bd->hist[bfq_hist_key(bfqq->p.pid)] = bfqq->p;
	pidq_free_process(&bfqq->q);
}

/* ------------------------------------------------------------------ */
/* Weight raising.                                                     */

/* End a raising whose time is up, or that is no longer allowed. */
static void bfq_update_raising(const struct bfq_data *bd,
			       struct bfq_queue *bfqq, uint64_t now_ns)
{
	if (bfqq->p.wr_coeff > 1 && (!bfq_raising_allowed(bd) ||
	    bfqq->cls == PIDQ_IDLE || now_ns >= bfqq->p.wr_end))
		bfqq->p.wr_coeff = 1;
}

/*
 * A process's queue becomes busy: raise it if it is starting up (new, or
 * back after a long pause) or soft real-time.  Returns true for a start-up,
 * whose old debt is forgiven.
 */
static bool bfq_raise_on_busy(const struct bfq_data *bd,
			      struct bfq_queue *bfqq, uint64_t now_ns)
{
	struct bfq_proc *p = &bfqq->p;
	bool interactive;

	if (!bfqq->per_process || bfqq->cls == PIDQ_IDLE ||
	    !bfq_raising_allowed(bd))
		return false;
	interactive = !p->seen ||
		now_ns >= p->idle_since + elv_ms_to_ns(BFQ_WR_MIN_IDLE_MS);
	if (interactive) {
		p->wr_coeff = BFQ_WR_COEFF;
		p->wr_end = now_ns + elv_ms_to_ns(BFQ_WR_INTERACTIVE_MS);
		return true;
	}
	if (now_ns >= p->soft_rt_next) {
		p->wr_coeff = BFQ_WR_COEFF;
		if (p->wr_end < now_ns + elv_ms_to_ns(BFQ_WR_SOFTRT_MS))
			p->wr_end = now_ns + elv_ms_to_ns(BFQ_WR_SOFTRT_MS);
	}
	return false;
}

/*
 * The earliest time a process that just went idle may come back and be
 * soft real-time: late enough that its rate since it became busy stays
 * under BFQ_SOFTRT_RATE, and not straight away (a greedy reader comes
 * straight back).
 */
static void bfq_set_soft_rt_next(const struct bfq_data *bd,
				 struct bfq_queue *bfqq, uint64_t now_ns)
{
	uint64_t by_rate = bfqq->busy_since +
		bfqq->busy_served * BFQ_NS_PER_S / BFQ_SOFTRT_RATE;
	uint64_t by_gap = now_ns + elv_ms_to_ns(bd->pq.slice_idle) +
		elv_ms_to_ns(BFQ_SOFTRT_MIN_GAP_MS);

	bfqq->p.soft_rt_next = by_rate > by_gap ? by_rate : by_gap;
	bfqq->softrt_pending = false;
}

/* ------------------------------------------------------------------ */
/* B-WF2Q+: queues entering and leaving their class's schedule.        */

/*
 * Put busy bfqq on its class's schedule, starting as how says (F only
 * counts if it is of this class), with F = S + budget / weight.
 */
static void bfq_schedule(struct bfq_data *bd, struct bfq_queue *bfqq,
			 enum bfq_start how, uint64_t now_ns)
{
	struct bfq_sched *st = &bd->sched[bfqq->cls];
	bool has_finish = bfqq->p.has_finish && bfqq->p.cls == bfqq->cls;

	bfqq->weight = bfq_weight(bfqq);
	if (has_finish && (how == BFQ_START_RESUME ||
	    (how == BFQ_START_FAIR && bfq_gt(bfqq->p.finish, st->vtime))))
		bfqq->start = bfqq->p.finish;
	else
		bfqq->start = st->vtime;
	bfqq->p.finish = bfqq->start + bfq_delta(bfqq->p.budget, bfqq->weight);
	bfqq->p.has_finish = true;
	bfqq->p.cls = bfqq->cls;
	st->wsum += bfqq->weight;
	if (st->busy++ == 0 && bfqq->cls == PIDQ_IDLE)
		bd->idle_stamp = now_ns;	/* the idle class starts waiting */
	elv_list_add_tail(&bfqq->active, &st->active);
}

/* Take bfqq (not in service) off its class's schedule. */
static void bfq_unschedule(struct bfq_data *bd, struct bfq_queue *bfqq)
{
	struct bfq_sched *st = &bd->sched[bfqq->cls];

	elv_list_del(&bfqq->active);
	st->wsum -= bfqq->weight;
	st->busy--;
}

/*
 * bfqq becomes busy: raise it if it deserves it, then schedule it.  A
 * queue whose budget ended while its process waited for its last request
 * and that comes straight back is a stream, not a newcomer: it resumes
 * from its finish time, as the kernel's non_blocking_wait_rq, or a reader
 * of one request at a time would lose whatever V gained meanwhile.
 */
static void bfq_activate(struct bfq_data *bd, struct bfq_queue *bfqq,
			 uint64_t now_ns)
{
	enum bfq_start how = BFQ_START_FAIR;

	bfq_update_raising(bd, bfqq, now_ns);
	if (bfq_raise_on_busy(bd, bfqq, now_ns))
		how = BFQ_START_FORGIVE;
	else if (bfqq->p.wait_rq && (bfqq->dispatched != 0 ||
		 now_ns <= bfqq->p.ttime.last_end_ns +
		 3 * elv_ms_to_ns(bd->pq.slice_idle)))
		how = BFQ_START_RESUME;
	bfqq->p.wait_rq = false;
	bfqq->p.seen = true;
	bfqq->busy = true;
	bfqq->busy_since = now_ns;
	bfqq->busy_served = 0;
	bfq_schedule(bd, bfqq, how, now_ns);
}

/* bfqq is busy no more (empty, out of service). */
static void bfq_deactivate(struct bfq_data *bd, struct bfq_queue *bfqq,
			   uint64_t now_ns)
{
	bfq_unschedule(bd, bfqq);
	bfqq->busy = false;
	bfqq->p.idle_since = now_ns;
	if (bfqq->dispatched == 0)
		bfq_set_soft_rt_next(bd, bfqq, now_ns);
	else
		bfqq->softrt_pending = true;	/* at its last completion */
}

/*
 * A process's priority changed (ionice -p): move its queue, not in
 * service, to its new class; a finish time means nothing in another.
 */
static void bfq_set_prio(struct bfq_data *bd, struct bfq_queue *bfqq,
			 enum pidq_class cls, int level, uint64_t now_ns)
{
	if (bfqq->busy)
		bfq_unschedule(bd, bfqq);
	bfqq->cls = cls;
	bfqq->level = level;
	bfq_update_raising(bd, bfqq, now_ns);
	if (bfqq->busy)
		bfq_schedule(bd, bfqq, BFQ_START_FAIR, now_ns);
}

/*
 * The busy queue of class st to serve next: among the eligible ones
 * (S <= V), the smallest finish.  When none is eligible V jumps to the
 * smallest start, as B-WF2Q+ does when the class was idle.  A linear scan:
 * see the header comment.
 */
static struct bfq_queue *bfq_wf2q_pick(struct bfq_sched *st)
{
	struct bfq_queue *bfqq, *best = NULL, *first = NULL;
	struct elv_list *pos;

	elv_list_for_each(pos, &st->active) {
		bfqq = elv_list_entry(pos, struct bfq_queue, active);
		if (first == NULL || bfq_gt(first->start, bfqq->start))
			first = bfqq;
		if (bfq_gt(bfqq->start, st->vtime))
			continue;
		if (best == NULL || bfq_gt(best->p.finish, bfqq->p.finish))
			best = bfqq;
	}
	if (best != NULL || first == NULL)
		return best;
	st->vtime = first->start;
	elv_list_for_each(pos, &st->active) {
		bfqq = elv_list_entry(pos, struct bfq_queue, active);
		if (bfq_gt(bfqq->start, st->vtime))
			continue;
		if (best == NULL || bfq_gt(best->p.finish, bfqq->p.finish))
			best = bfqq;
	}
	return best;
}

/* ------------------------------------------------------------------ */
/* The service.                                                        */

static void bfq_set_in_service(struct bfq_data *bd, struct bfq_queue *bfqq)
{
	uint64_t need = bfq_charge(bfqq->q.next_rq);

	elv_list_del(&bfqq->active);
	bd->active = bfqq;
	bd->idling = false;
	bfqq->served = 0;
	bfqq->budget_timeout = 0;
	bfqq->fifo_checked = false;
	/* A budget always covers at least the first request. */
	if (bfqq->p.budget < need)
		bfqq->p.budget = need;
}

/* The next budget, from how the last one ended (the kernel's feedback). */
static void bfq_budget_feedback(const struct bfq_data *bd,
				struct bfq_queue *bfqq,
				enum bfq_expire_why why)
{
	uint64_t max = bfq_max_budget(bd), min = bfq_min_budget(bd);
	uint64_t budget = bfqq->p.budget;

	/* Async queues: latency does not matter, throughput does. */
	if (!bfqq->per_process) {
		bfqq->p.budget = max;
		return;
	}
	switch (why) {
	case BFQ_EXP_PREEMPTED:
		break;
	case BFQ_EXP_TOO_IDLE:
	case BFQ_EXP_NO_MORE:
		/* It needed this much: a small budget is served sooner. */
		budget = bfqq->served;
		break;
	case BFQ_EXP_TIMEOUT:
		/* Perhaps a slow stretch of the device: give it a chance. */
		budget *= 2;
		break;
	case BFQ_EXP_EXHAUSTED:
		budget *= 4;
		break;
	}
	if (budget < min)
		budget = min;
	if (budget > max)
		budget = max;
	bfqq->p.budget = budget;
}

/*
 * End the service of the queue in service.  Its finish time is set from
 * what it used (the whole budget if it timed out), then it goes back on
 * its class's list with a new budget if it still has requests.
 */
static void bfq_expire(struct bfq_data *bd, uint64_t now_ns,
		       enum bfq_expire_why why)
{
	struct bfq_queue *bfqq = bd->active;
	struct bfq_sched *st;
	uint64_t charge;

	if (bfqq == NULL)
		return;
	st = &bd->sched[bfqq->cls];
	bd->active = NULL;
	bd->idling = false;
	charge = bfqq->served;
	if (why == BFQ_EXP_TIMEOUT && charge < bfqq->p.budget)
		charge = bfqq->p.budget;
	bfqq->p.finish = bfqq->start + bfq_delta(charge, bfqq->weight);
	bfq_budget_feedback(bd, bfqq, why);

	if (bfqq->q.queued == 0) {
		bfqq->p.wait_rq = why == BFQ_EXP_EXHAUSTED ||
			why == BFQ_EXP_TIMEOUT || why == BFQ_EXP_PREEMPTED;
		bfq_deactivate(bd, bfqq, now_ns);
		bfq_put_queue(bd, bfqq);
		return;
	}
	/* Still busy: next budget, at the weight it has now. */
	st->wsum -= bfqq->weight;
	bfq_update_raising(bd, bfqq, now_ns);
	bfqq->weight = bfq_weight(bfqq);
	st->wsum += bfqq->weight;
	bfqq->start = bfqq->p.finish;
	bfqq->p.finish = bfqq->start + bfq_delta(bfqq->p.budget, bfqq->weight);
	elv_list_add_tail(&bfqq->active, &st->active);
}

static bool bfq_idle_starved(const struct bfq_data *bd, uint64_t now_ns)
{
	return bd->sched[PIDQ_IDLE].busy != 0 &&
		now_ns >= bd->idle_stamp + elv_ms_to_ns(BFQ_IDLE_STARVE_MS);
}

/* Are queues of the other classes than the idle one busy? */
static bool bfq_others_busy(const struct bfq_data *bd)
{
	return bd->sched[PIDQ_RT].busy + bd->sched[PIDQ_BE].busy != 0;
}

/* Is bfqq, run dry, worth waiting for? */
static bool bfq_may_idle(const struct bfq_data *bd,
			 const struct bfq_queue *bfqq)
{
	if (bd->pq.slice_idle <= 0)
		return false;
	if (bd->strict_guarantees != 0)
		return true;
	if (bfqq->cls == PIDQ_IDLE && bfq_others_busy(bd))
		return false;
	return bfqq->per_process && bfqq->p.ttime.idle_window;
}

/* The queue to serve next, by class, then by B-WF2Q+ within it. */
static struct bfq_queue *bfq_next_queue(struct bfq_data *bd, uint64_t now_ns)
{
	struct bfq_queue *bfqq;
	int c;

	if (bfq_idle_starved(bd, now_ns) &&
	    (bfqq = bfq_wf2q_pick(&bd->sched[PIDQ_IDLE])) != NULL)
		return bfqq;
	for (c = 0; c < PIDQ_NR_CLASSES; c++)
		if ((bfqq = bfq_wf2q_pick(&bd->sched[c])) != NULL)
			return bfqq;
	return NULL;
}

/*
 * The queue to dispatch from, or NULL to wait (for a completion, or for
 * the wake-up asked for).  The queue in service keeps the device while it
 * has budget, time and requests, or while its process is expected back.
 */
static struct bfq_queue *bfq_select_queue(struct elevator_queue *eq,
					  struct bfq_data *bd, uint64_t now_ns)
{
	struct bfq_queue *bfqq = bd->active;

	if (bfqq != NULL) {
		if (bfqq->cls != PIDQ_IDLE && bfq_idle_starved(bd, now_ns)) {
			bfq_expire(bd, now_ns, BFQ_EXP_PREEMPTED);
		} else if (bfqq->q.queued == 0) {
			if (bd->idling) {
				if (now_ns < bd->idle_until) {
					/* The timer may fire early: ask again. */
					elv_wakeup_at(eq, bd->idle_until);
					return NULL;
				}
				bfq_expire(bd, now_ns, BFQ_EXP_TOO_IDLE);
			} else if (bfqq->dispatched != 0 &&
				   bfq_may_idle(bd, bfqq)) {
				/* Its completion decides whether to wait. */
				return NULL;
			} else {
				bfq_expire(bd, now_ns, BFQ_EXP_NO_MORE);
			}
		} else if (bfqq->budget_timeout != 0 &&
			   now_ns >= bfqq->budget_timeout) {
			bfq_expire(bd, now_ns, BFQ_EXP_TIMEOUT);
		} else {
			return bfqq;
		}
	}
	bfqq = bfq_next_queue(bd, now_ns);
	if (bfqq != NULL)
		bfq_set_in_service(bd, bfqq);
	return bfqq;
}

/*
 * The queue in service is empty and the moment its wait has passed, or it
 * is not waited for and has nothing in flight: its service is over.  Found
 * at the next arrival when no dispatch call came in between (the host
 * does not call dispatch while nothing is queued).
 */
static void bfq_expire_stale(struct bfq_data *bd, uint64_t now_ns)
{
	struct bfq_queue *bfqq = bd->active;

	if (bfqq == NULL || bfqq->q.queued != 0)
		return;
	if (bd->idling && now_ns >= bd->idle_until)
		bfq_expire(bd, now_ns, BFQ_EXP_TOO_IDLE);
	else if (!bd->idling && bfqq->dispatched == 0)
		bfq_expire(bd, now_ns, BFQ_EXP_NO_MORE);
}

/* rq leaves its queue (dispatched or merged away). */
static void bfq_remove_rq(struct bfq_data *bd, struct bfq_queue *bfqq,
			  struct elv_request *rq)
{
	if (!pidq_remove_rq(&bd->pq, &bfqq->q, rq))
		return;
	/* The queue in service stays busy until it expires. */
	if (bfqq != bd->active)
		bfq_deactivate(bd, bfqq, bd->now);
}

/* Hand rq of the queue in service over to the host, and charge it. */
static struct elv_request *bfq_take(struct bfq_data *bd, struct bfq_queue *bfqq,
				    struct elv_request *rq, uint64_t now_ns)
{
	struct bfq_sched *st = &bd->sched[bfqq->cls];
	uint64_t charge = bfq_charge(rq);

	bd->pq.last_position = elv_rq_end_sector(rq);
	bfq_remove_rq(bd, bfqq, rq);
	bfqq->dispatched++;
	bfqq->served += charge;
	bfqq->busy_served += charge;
	bfqq->fifo_checked = true;
	if (bfqq->budget_timeout == 0)
		bfqq->budget_timeout = now_ns + elv_ms_to_ns(bd->timeout_sync);
	/* V advances by the service over the busy weights. */
	st->vtime += bfq_delta(charge, st->wsum);
	if (bfqq->cls == PIDQ_IDLE)
		bd->idle_stamp = now_ns;
	return rq;
}

/*
 * Draining: no idling, no budgets, no class delays.  Whatever is queued
 * goes out, the queue in service first.
 */
static struct elv_request *bfq_dispatch_forced(struct bfq_data *bd,
					       uint64_t now_ns)
{
	struct bfq_queue *bfqq = bd->active;
	int c;

	bd->idling = false;
	if (bfqq == NULL || bfqq->q.queued == 0) {
		bfq_expire(bd, now_ns, BFQ_EXP_NO_MORE);
		for (c = 0, bfqq = NULL; c < PIDQ_NR_CLASSES && !bfqq; c++)
			bfqq = bfq_wf2q_pick(&bd->sched[c]);
		if (bfqq == NULL)
			return NULL;
		bfq_set_in_service(bd, bfqq);
	}
	return bfq_take(bd, bfqq, bfqq->q.next_rq, now_ns);
}

/* ------------------------------------------------------------------ */
/* Hooks.                                                              */

static int bfq_init_queue(struct elevator_queue *eq)
{
	struct bfq_data *bd = bfq_data(eq);
	struct bfq_queue *bfqq;
	int c, l;

	pidq_data_init(&bd->pq);
	for (c = 0; c < PIDQ_NR_CLASSES; c++) {
		elv_list_init(&bd->sched[c].active);
		for (l = 0; l < PIDQ_LEVELS; l++) {
			bfqq = &bd->pool[c][l];
			pidq_init_pool(&bd->pq, &bfqq->q, (enum pidq_class)c,
				       l);
			bfq_queue_init(bfqq, bd, (enum pidq_class)c, l, false);
		}
	}
	return 0;
}

/* next was merged into rq: it leaves its queue, which may go too. */
static void bfq_merged_requests(struct elevator_queue *eq,
				struct elv_request *rq,
				struct elv_request *next)
{
	struct bfq_data *bd = bfq_data(eq);
	struct bfq_queue *next_q = bfq_rq_queue(next);

	pidq_merged_fifo(rq, next);
	bfq_remove_rq(bd, next_q, next);
	bfq_put_queue(bd, next_q);
}

/*
 * Should bfqq, which just became busy or changed class, take the device
 * from the queue in service at once?  A higher class should, and a raised queue should from
 * one that is not raised; the idle class never does.
 */
static bool bfq_should_preempt(const struct bfq_data *bd,
			       const struct bfq_queue *bfqq)
{
	const struct bfq_queue *active = bd->active;

	if (active == NULL || active == bfqq || bfqq->cls == PIDQ_IDLE)
		return false;
	if (active->cls != bfqq->cls)
		return bfqq->cls < active->cls;
	return bfqq->p.wr_coeff > 1 && active->p.wr_coeff == 1;
}

static void bfq_add_request(struct elevator_queue *eq, struct elv_request *rq,
			    uint64_t now_ns)
{
	struct bfq_data *bd = bfq_data(eq);
	struct bfq_queue *bfqq = NULL;
	struct pidq *q;
	enum pidq_class cls;
	bool moved;
	int level;

	bd->now = now_ns;
	bfq_expire_stale(bd, now_ns);
	pidq_prio(rq->ioprio, &cls, &level);
	if (rq->sync && rq->pid != 0) {
		q = pidq_find_process(&bd->pq, rq->pid);
		if (q == NULL) {
			/* No memory: the pool serves it (unfair but safe). */
			bfqq = bfq_new_process(bd, rq->pid, cls, level);
		} else {
			bfqq = bfq_queue(q);
			pidq_think_time(&bd->pq, &bfqq->p.ttime, now_ns);
		}
	}
	if (bfqq == NULL)
		bfqq = &bd->pool[cls][level];

	pidq_add_rq(&bd->pq, &bfqq->q, rq);

	/* Holding rq, the queue cannot be freed by an expiry here. */
	moved = bfqq->cls != cls || bfqq->level != level;
	if (moved) {
		if (bfqq == bd->active)
			bfq_expire(bd, now_ns, BFQ_EXP_PREEMPTED);
		bfq_set_prio(bd, bfqq, cls, level, now_ns);
	}

	if (bfqq == bd->active) {
		/* The process came back within the wait: serve it. */
		bd->idling = false;
		return;
	}
	if (!bfqq->busy)
		bfq_activate(bd, bfqq, now_ns);
	else if (!moved)
		return;
	if (bfq_should_preempt(bd, bfqq))
		bfq_expire(bd, now_ns, BFQ_EXP_PREEMPTED);
}

static struct elv_request *bfq_dispatch(struct elevator_queue *eq,
					uint64_t now_ns,
					bool force)
{
	struct bfq_data *bd = bfq_data(eq);
	struct bfq_queue *bfqq;
	struct elv_request *rq;

	bd->now = now_ns;
	if (bd->pq.queued == 0)
		return NULL;
	if (force)
		return bfq_dispatch_forced(bd, now_ns);

	/*
	 * At most twice round: a queue just put in service has used none
	 * of its budget, which covers its first request.
	 */
	for (;;) {
		bfqq = bfq_select_queue(eq, bd, now_ns);
		if (bfqq == NULL)
			return NULL;
		/* An expired request goes first, looked for once a budget. */
		rq = NULL;
		if (!bfqq->fifo_checked)
			rq = pidq_fifo_expired(&bd->pq, &bfqq->q, now_ns);
		if (rq == NULL)
			rq = bfqq->q.next_rq;
		if (bfqq->served == 0 ||
		    bfqq->served + bfq_charge(rq) <= bfqq->p.budget)
			break;
		bfq_expire(bd, now_ns, BFQ_EXP_EXHAUSTED);
	}
	bfq_take(bd, bfqq, rq, now_ns);

	/*
	 * The idle class gets one request at a time while others wait.  A
	 * used-up budget is not expired here but at the next dispatch, once
	 * the queue's next request is there (the loop above): expired now, a
	 * process with one request at a time would be empty and leave the
	 * schedule, and the other queue, alone on it, would be served
	 * whatever the weights (the kernel's bfq expires for exhaustion in
	 * bfq_select_queue, with next_rq in hand).
	 */
	if (bfqq->cls == PIDQ_IDLE && bfq_others_busy(bd))
		bfq_expire(bd, now_ns, BFQ_EXP_PREEMPTED);
	return rq;
}

/*
 * Completion: the moment to decide what the queue in service does next.
 * When its last request is done and its process usually returns within
 * slice_idle, wait for it (but not past its budget timeout); otherwise let
 * the next queue have the device at once.
 */
static void bfq_completed(struct elevator_queue *eq, struct elv_request *rq,
			  uint64_t now_ns)
{
	struct bfq_data *bd = bfq_data(eq);
	struct bfq_queue *bfqq = bfq_rq_queue(rq);
	bool timed_out;

	bd->now = now_ns;
	bfqq->dispatched--;
	bfqq->p.ttime.has_end = true;
	bfqq->p.ttime.last_end_ns = now_ns;
	if (bfqq->dispatched == 0 && bfqq->softrt_pending)
		bfq_set_soft_rt_next(bd, bfqq, now_ns);

	if (bfqq != bd->active) {
		bfq_put_queue(bd, bfqq);
		return;
	}
	timed_out = bfqq->budget_timeout != 0 &&
		    now_ns >= bfqq->budget_timeout;
	if (bfqq->q.queued != 0) {
		if (timed_out)
			bfq_expire(bd, now_ns, BFQ_EXP_TIMEOUT);
		return;
	}
	if (bfqq->dispatched != 0)
		return;
	if (!bfq_may_idle(bd, bfqq)) {
		bfq_expire(bd, now_ns, timed_out ? BFQ_EXP_TIMEOUT :
			   BFQ_EXP_NO_MORE);
		return;
	}
	/*
	 * Idle even past the budget timeout: the timeout is taken when the
	 * process's next request arrives (bfq_select_queue), so that the
	 * queue is not empty then and keeps its place on the schedule, as
	 * the kernel idles first (bfq_completed_request) and expires in
	 * bfq_rq_enqueued.
	 */
	bd->idling = true;
	bd->idle_until = now_ns + elv_ms_to_ns(bd->pq.slice_idle);
	elv_wakeup_at(eq, bd->idle_until);
}

/* ------------------------------------------------------------------ */
/* Tunables, shown and set under .control/iosched/.                    */

static const struct elv_tunable bfq_tunables[] = {
	PIDQ_TUNABLE(struct bfq_data, slice_idle, PIDQ_SLICE_IDLE, 0, 1000,
		     "ms", "wait for a process to issue again (0: never)"),
	ELV_TUNABLE(struct bfq_data, low_latency, 1, 0, 1, "",
		    "raise the weight of starting and soft real-time "
		    "processes"),
	PIDQ_TUNABLE(struct bfq_data, back_seek_max, PIDQ_BACK_SEEK_MAX,
		     0, 1073741824, "KiB",
		     "longest backward seek taken within a queue"),
	PIDQ_TUNABLE(struct bfq_data, back_seek_penalty,
		     PIDQ_BACK_SEEK_PENALTY, 1, 1000, "",
		     "cost of a backward seek relative to a forward one"),
	PIDQ_TUNABLE(struct bfq_data, fifo_expire_sync, PIDQ_FIFO_EXPIRE_SYNC,
		     0, 3600000, "ms",
		     "age at which a sync request goes first in its budget"),
	PIDQ_TUNABLE(struct bfq_data, fifo_expire_async,
		     PIDQ_FIFO_EXPIRE_ASYNC, 0, 3600000, "ms",
		     "age at which an async request goes first in its budget"),
	ELV_TUNABLE(struct bfq_data, timeout_sync, BFQ_TIMEOUT_SYNC, 1, 60000,
		    "ms", "longest service of one budget"),
	ELV_TUNABLE(struct bfq_data, max_budget, 0, 0, 1048576, "sectors",
		    "largest budget (0: 16384)"),
	ELV_TUNABLE(struct bfq_data, strict_guarantees, 0, 0, 1, "",
		    "always idle, never raise weights"),
	{ .name = NULL },
};

/* ------------------------------------------------------------------ */
/* The scheduler and its registration.                                 */

static struct elevator_type bfq_type = {
	.name = "bfq",
	.description = "per-process budgets in sectors, shared by weight",
	.data_size = sizeof(struct bfq_data),
	.ops = {
		.init_queue = bfq_init_queue,
		.exit_queue = pidq_exit_queue,
		.allow_merge = pidq_allow_merge,
		.merged = pidq_merged,
		.merged_requests = bfq_merged_requests,
		.add_request = bfq_add_request,
		.dispatch = bfq_dispatch,
		.completed = bfq_completed,
		.has_work = pidq_has_work,
	},
	.tunables = bfq_tunables,
};

IOSCHED_ELEVATOR(bfq_type);
