/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bfq: Budget Fair Queueing, after Paolo Valente and Fabio Checconi's
 * scheduler (Linux block/bfq-*.c), much reduced.  What it does, and
 * where it differs from the kernel's on purpose, is in fuse-iosched(8),
 * SCHEDULERS, bfq.
 *
 * pidq.c holds the queues and the order within each; this file gives the
 * device to one queue at a time for a budget of sectors, the queue chosen
 * by B-WF2Q+ in its class's virtual time (bfq_wf2q_pick).  A queue or a
 * control group is a struct bfq_entity on a class's heaps or idle tree; a
 * group (struct bfq_group) has classes of its own, and a queue's service
 * is charged at both levels.  A queue is freed once it holds nothing, has
 * nothing in flight, is not in service and is off its idle tree; what it
 * knew of its process stays in bd->hist.  With every request in the root
 * group, nothing of the groups runs.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuse-iosched/elevator.h"
#include "pidq.h"

/*
 * Longest service (ms) of one budget (the kernel's bfq_timeout, HZ / 8).
 * The FIFO expiry (pidq.h) is checked once per budget.
 */
#define BFQ_TIMEOUT_SYNC	125
/*
 * The largest budget until the peak rate is known, and always when the
 * user sets max_budget (the kernel's bfq_default_max_budget).
 */
#define BFQ_DEFAULT_MAX_BUDGET	16384
/* The smallest budget, as a fraction of the largest. */
#define BFQ_MIN_BUDGET_DIV	32
/* slice_idle's default, in microseconds (the kernel's 8 ms). */
#define BFQ_SLICE_IDLE_US	(PIDQ_SLICE_IDLE * 1000)
/* strict_guarantees idles at least this long (us). */
#define BFQ_STRICT_MIN_IDLE_US	8000

/* Weight of a level: (8 - level) * BFQ_WEIGHT_STEP (bfq_ioprio_to_weight). */
#define BFQ_WEIGHT_STEP		10
/* Only queues of this weight (level 4, the default) are raised. */
#define BFQ_DEFAULT_WEIGHT	40
/* Async sectors cost this many times their number. */
#define BFQ_ASYNC_CHARGE	3

/*
 * Peak rate, in sectors per second.  The kernel starts from 2/3 of a
 * reference rate and measures from there; the interactive raising lasts
 * BFQ_REF_WR_MS at BFQ_REF_RATE, inversely proportional to the rate
 * measured, within [BFQ_WR_MIN_MS, BFQ_WR_MAX_MS].  Rotational reference
 * values (ref_rate[0], 14000 >> 16 sectors per microsecond, and
 * ref_wr_duration[0]): a model of a disk is what we serve.
 */
#define BFQ_REF_RATE		213623
#define BFQ_REF_WR_MS		7000
#define BFQ_WR_MIN_MS		3000
#define BFQ_WR_MAX_MS		13000
/* A rate sample spans at least this long and this many dispatches. */
#define BFQ_RATE_MIN_INTERVAL_MS 300
#define BFQ_RATE_MIN_SAMPLES	32
/* A gap this long with nothing in flight starts a new sample (ms). */
#define BFQ_RATE_GAP_MS		100

/* Weight raising (the kernel's bfq_wr_* defaults). */
#define BFQ_WR_COEFF		30
#define BFQ_SOFTRT_WEIGHT_FACTOR 100
#define BFQ_WR_RT_MAX_MS	300
#define BFQ_WR_MIN_IDLE_MS	2000
/* Interactive raising ends after this many sectors of raised service. */
#define BFQ_MAX_SERVICE_FROM_WR	120000
/* Sectors per second below which a returning reader is soft real-time. */
#define BFQ_SOFTRT_RATE		7000
/* And it must not come back sooner than slice_idle plus this (ms). */
#define BFQ_SOFTRT_MIN_GAP_MS	4
/* A raised queue is idled on at least this long (ms). */
#define BFQ_WR_MIN_IDLE_SLICE_MS 20

/* Seekiness: a jump past this many sectors is a seek (BFQQ_SEEK_THR). */
#define BFQ_SEEK_THR		800
/* More than this many of the last 32 requests seeked: seeky. */
#define BFQ_SEEKY_COUNT		19
/* A seeky queue is waited for at most this long (ms, BFQ_MIN_TT). */
#define BFQ_MIN_TT_MS		2

/*
 * The idle class waits until the other classes have nothing, except that
 * once this long (ms, the kernel's BFQ_CL_IDLE_TIMEOUT, HZ / 5) has passed
 * since the idle class was last considered, it is served first.
 */
#define BFQ_CL_IDLE_TIMEOUT_MS	200

/* What outlives per-process queues, by pid. */
#define BFQ_HIST_SIZE		64

/* Virtual time: service << BFQ_SERVICE_SHIFT / weight. */
#define BFQ_SERVICE_SHIFT	20

/*
 * Distinct weights bd->weights can hold: one per level (raised queues
 * are left out, and the classes share the levels' weights).
 */
#define BFQ_NR_WEIGHTS		PIDQ_LEVELS

#define BFQ_NS_PER_S		1000000000ULL
#define BFQ_NS_PER_US		1000ULL

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
	uint64_t finish;		/* virtual finish of the last budget,
					 * kept here while the queue is freed */
	uint64_t cgroup;		/* the group finish belongs to */
	uint64_t max_budget;		/* sectors, for the next service */

	unsigned wr_coeff;		/* weight factor, 1 when not raised */
	bool wr_softrt;			/* raised as soft real-time */
	uint64_t wr_end;		/* raising ends then */
	/* Soft real-time: when the interactive raising it cut into ends. */
	uint64_t wr_interactive_end;
	uint64_t wr_service;		/* sectors served while raised */
	uint64_t idle_since;		/* stopped being busy */
	uint64_t soft_rt_next;		/* soft real-time if back after */
	/*
	 * Emptied for a reason other than a budget timeout or exhaustion
	 * (the kernel's non_blocking_wait_rq): back in time, it goes on
	 * with what is left of its budget, from where it stopped.
	 */
	bool wait_rq;
	uint64_t budget_left;		/* sectors, with wait_rq */

	uint32_t seek_history;		/* 1 bits: requests that seeked */
	uint64_t last_pos;		/* end sector of its last request */
	struct pidq_ttime ttime;
};

/* A node of a pairing heap (bfq_heap_add, bfq_heap_del). */
struct bfq_hnode {
	struct bfq_hnode *child;	/* the first of its children */
	struct bfq_hnode *next;		/* its next sibling */
	struct bfq_hnode *prev;		/* previous sibling, or the parent */
};

struct bfq_group;

/*
 * What B-WF2Q+ schedules: a queue, or a group (group set) in the root's
 * best-effort class.
 */
struct bfq_entity {
	/* On its class's idle tree (idle_tree). */
	struct elv_list active;
	/*
	 * Busy and out of service: in its class's eligible heap (eligible)
	 * or waiting heap, added as the seq-th.
	 */
	struct bfq_hnode node;
	bool eligible;
	bool idle_tree;
	uint64_t seq;
	unsigned weight;
	uint64_t start;			/* virtual start of this budget */
	uint64_t finish;		/* and finish */
	struct bfq_group *group;	/* the group this is, NULL: a queue */
};

struct bfq_queue {
	struct pidq q;			/* first: see pidq.h */
	struct bfq_entity e;
	struct bfq_group *bfqg;		/* the group it belongs to */

	enum pidq_class cls;
	int level;			/* 0 (highest) to 7 */
	bool per_process;		/* malloc'd, sync; may be idled on */
	bool exited;			/* its process exited: never idled
					 * on, freed once idle, forgotten */

	unsigned dispatched;		/* requests in flight */

	/*
	 * Busy: holding requests or in service.  A busy queue's weight is
	 * counted in its class's wsum, and so is an idle one's while its
	 * finish time is ahead of V (e.idle_tree).
	 */
	bool busy;
	unsigned counted_weight;	/* counted in bd->weights, 0: not */
	uint64_t busy_since;
	uint64_t busy_served;		/* sectors charged since then */
	bool softrt_pending;		/* compute soft_rt_next when idle */

	/* The budget being served, and what of it is used. */
	uint64_t budget;
	uint64_t served;
	/* The service, while in service. */
	uint64_t service_start;		/* set in service */
	uint64_t idling_start;		/* its last wait began */
	uint64_t budget_timeout;	/* 0 until its first dispatch */
	bool fifo_checked;		/* FIFO looked at in this service */

	struct bfq_proc p;
};

/* How many queues of bd->weights have one weight. */
struct bfq_weight_count {
	unsigned weight;
	unsigned count;			/* never 0 in the table */
};

/* One class: its busy queues, its idle tree and its virtual clock. */
struct bfq_sched {
	/*
	 * The busy queues not in service, those not eligible yet (S > V)
	 * in order of start, the eligible in order of finish, then of
	 * addition (seq, from next_seq): see bfq_wf2q_pick.
	 */
	struct bfq_hnode *waiting;
	struct bfq_hnode *eligible;
	uint64_t next_seq;
	struct elv_list idle;		/* idle, finish ahead of vtime, by finish */
	uint64_t vtime;
	uint64_t wsum;			/* weights of busy and idle-tree */
	unsigned busy;			/* its busy entities, in service too */
};

/*
 * A control group: its classes' schedules and async pool, and its entity
 * in the root's best-effort class.  The root group is bd->root; its
 * entity is unused.
 */
struct bfq_group {
	struct bfq_entity e;
	struct elv_list link;		/* in bd->groups */
	uint64_t id;			/* rq->cgroup */
	/* On the root's schedule or in service: has busy queues, or had
	 * when its service began. */
	bool busy;
	bool in_service;		/* a queue of it is in service */
	bool has_finish;
	uint64_t served;		/* sectors charged in this service */
	unsigned busy_queues;		/* busy queues, in service too */
	unsigned nr_procs;		/* per-process queues in it */
	struct bfq_sched sched[PIDQ_NR_CLASSES];
	struct bfq_queue pool[PIDQ_NR_CLASSES][PIDQ_LEVELS];
};

struct bfq_data {
	struct pidq_data pq;		/* first: see pidq.h */

	/* Tunables, as pq's: read when used. */
	int64_t low_latency;		/* flag */
	int64_t timeout_sync;		/* ms */
	int64_t max_budget;		/* sectors, 0: from the peak rate */
	int64_t strict_guarantees;	/* flag */
	int64_t slice_idle_us;		/* us; pq.slice_idle in ms */

	struct elevator_queue *eq;	/* for the host's services */
	/* The root group; its pooled queues are known to pq. */
	struct bfq_group root;
	struct elv_list groups;		/* the others, allocated */
	unsigned busy_groups;		/* the others busy */
	unsigned busy_queues;		/* of all groups */
	struct bfq_proc hist[BFQ_HIST_SIZE];	/* of freed queues */
	/*
	 * The weights of the queues with requests queued or in flight,
	 * raised ones left out, whatever their class, lightest first, each
	 * with its number of queues (the kernel's queue_weights_tree):
	 * whether the weights differ is one comparison (bfq_asymmetric),
	 * asked at every async request's charge.
	 */
	struct bfq_weight_count weights[BFQ_NR_WEIGHTS];
	unsigned nr_weights;

	/* The queue in service, and whether it is being waited for. */
	struct bfq_queue *active;
	bool idling;
	uint64_t idle_until;

	unsigned in_flight;		/* all queues' dispatched */
	uint64_t idle_stamp;		/* idle class last considered */
	bool started;			/* idle_stamp set: first request came */
	uint64_t now;			/* the latest clock seen */

	/* Peak rate estimation: the sample being taken, and the estimate. */
	uint64_t peak_rate;		/* sectors per second */
	uint64_t rate_first_ns;		/* 0: no sample under way */
	uint64_t rate_last_ns;		/* its latest dispatch */
	uint64_t rate_sectors;
	unsigned rate_samples, rate_seq;

	/*
	 * Counters (bfq_counters), under the queue lock like the rest: the
	 * services ended by each reason (the kernel's bfqq_expiration
	 * names), raisings started, and waits that ended without the
	 * process coming back.
	 */
	uint64_t expired_preempted;
	uint64_t expired_too_idle;
	uint64_t expired_no_more_requests;
	uint64_t expired_budget_timeout;
	uint64_t expired_budget_exhausted;
	uint64_t wr_interactive_starts;
	uint64_t wr_softrt_starts;
	uint64_t idle_timeouts;
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

static uint64_t bfq_slice_idle_ns(const struct bfq_data *bd)
{
	return bd->slice_idle_us > 0 ?
		(uint64_t)bd->slice_idle_us * BFQ_NS_PER_US : 0;
}

/*
 * The largest budget: max_budget when set, else what the device serves
 * in timeout_sync at its peak rate (the kernel's bfq_calc_max_budget).
 */
static uint64_t bfq_max_budget(const struct bfq_data *bd)
{
	uint64_t b;

	if (bd->max_budget > 0)
		return (uint64_t)bd->max_budget;
	b = bd->peak_rate * (uint64_t)bd->timeout_sync / 1000;
	return b != 0 ? b : 1;
}

static uint64_t bfq_min_budget(const struct bfq_data *bd)
{
	uint64_t min = bfq_max_budget(bd) / BFQ_MIN_BUDGET_DIV;

	return min != 0 ? min : 1;
}

/*
 * A queue's next budget: what its feedback says, but no more than the
 * largest budget now (which follows the peak rate, once measured).
 */
static uint64_t bfq_next_budget(const struct bfq_data *bd,
				const struct bfq_queue *bfqq)
{
	uint64_t max = bfq_max_budget(bd);

	return bfqq->p.max_budget < max ? bfqq->p.max_budget : max;
}

/* How long an interactive raising lasts at the rate measured (ns). */
static uint64_t bfq_wr_duration(const struct bfq_data *bd)
{
	uint64_t ms = (uint64_t)BFQ_REF_RATE * BFQ_REF_WR_MS /
		(bd->peak_rate != 0 ? bd->peak_rate : 1);

	if (ms < BFQ_WR_MIN_MS)
		ms = BFQ_WR_MIN_MS;
	if (ms > BFQ_WR_MAX_MS)
		ms = BFQ_WR_MAX_MS;
	return elv_ms_to_ns((int64_t)ms);
}

static bool bfq_asymmetric(const struct bfq_data *bd,
			   const struct bfq_queue *bfqq);

/*
 * What rq costs bfqq's budget, in sectors (bfq_serv_to_charge): async
 * ones BFQ_ASYNC_CHARGE times their size, unless the weights differ
 * (then the weights alone share the device).
 */
static uint64_t bfq_charge(const struct bfq_data *bd,
			   const struct bfq_queue *bfqq,
			   const struct elv_request *rq)
{
	if (rq->sync || bfqq->p.wr_coeff > 1 || bfq_asymmetric(bd, bfqq))
		return rq->nr_sectors;
	return rq->nr_sectors * BFQ_ASYNC_CHARGE;
}

static unsigned bfq_level_weight(const struct bfq_queue *bfqq)
{
	return (unsigned)(PIDQ_LEVELS - bfqq->level) * BFQ_WEIGHT_STEP;
}

static unsigned bfq_weight(const struct bfq_queue *bfqq)
{
	return bfq_level_weight(bfqq) * bfqq->p.wr_coeff;
}

/* The schedule bfqq is on: its class's in its group. */
static struct bfq_sched *bfq_st(const struct bfq_queue *bfqq)
{
	return &bfqq->bfqg->sched[bfqq->cls];
}

/* The schedule groups are on: the root's best-effort class. */
static struct bfq_sched *bfq_groups_st(struct bfq_data *bd)
{
	return &bd->root.sched[PIDQ_BE];
}

static bool bfq_seeky(const struct bfq_queue *bfqq)
{
	return __builtin_popcount(bfqq->p.seek_history) > BFQ_SEEKY_COUNT;
}

static unsigned bfq_hist_key(pid_t pid)
{
	return (uint32_t)pid % BFQ_HIST_SIZE;
}

/* bfqq arrives zeroed, its struct pidq set up. */
static void bfq_queue_init(struct bfq_queue *bfqq, const struct bfq_data *bd,
			   struct bfq_group *bfqg, enum pidq_class cls,
			   int level, bool per_process)
{
	elv_list_init(&bfqq->e.active);
	bfqq->bfqg = bfqg;
	bfqq->cls = cls;
	bfqq->level = level;
	bfqq->per_process = per_process;
	bfqq->p.pid = bfqq->q.node.pid;
	bfqq->p.cls = cls;
	bfqq->p.cgroup = bfqg->id;
	bfqq->p.max_budget = bfq_max_budget(bd);
	bfqq->p.wr_coeff = 1;
	/* A new process is assumed to come back until it proves otherwise. */
	bfqq->p.ttime.idle_window = per_process;
}

/* A process's first request since its queue was freed, or ever. */
static struct bfq_queue *bfq_new_process(struct bfq_data *bd, pid_t pid,
					 struct bfq_group *bfqg,
					 enum pidq_class cls, int level)
{
	struct bfq_proc *h = &bd->hist[bfq_hist_key(pid)];
	struct bfq_queue *bfqq = pidq_new_process(&bd->pq, sizeof *bfqq, pid);

	if (bfqq == NULL)
		return NULL;
	bfq_queue_init(bfqq, bd, bfqg, cls, level, true);
	bfqg->nr_procs++;
	if (h->pid == pid) {
		bfqq->p = *h;
		h->pid = 0;
		/* A finish time means nothing in another class or group. */
		if (bfqq->p.cls != cls || bfqq->p.cgroup != bfqg->id)
			bfqq->p.has_finish = false;
		bfqq->p.cls = cls;
		bfqq->p.cgroup = bfqg->id;
		bfqq->e.finish = bfqq->p.finish;
	}
	return bfqq;
}

static void bfq_put_group(struct bfq_data *bd, struct bfq_group *bfqg);

/*
 * Free a per-process queue nobody needs any more; remember the process,
 * unless it exited.  True when bfqq is unused (freed if per-process).
 */
static bool bfq_free_queue(struct bfq_data *bd, struct bfq_queue *bfqq)
{
	if (bfqq->busy || bfqq->e.idle_tree || bfqq->q.queued != 0 ||
	    bfqq->dispatched != 0 || bfqq == bd->active)
		return false;
	if (!bfqq->per_process)
		return true;
	bfqq->p.finish = bfqq->e.finish;
	if (!bfqq->exited)
		bd->hist[bfq_hist_key(bfqq->p.pid)] = bfqq->p;
	bfqq->bfqg->nr_procs--;
	pidq_free_process(&bd->pq, &bfqq->q);
	return true;
}

/* The same, and its group's when that is unused too. */
static void bfq_put_queue(struct bfq_data *bd, struct bfq_queue *bfqq)
{
	struct bfq_group *bfqg = bfqq->bfqg;

	if (bfq_free_queue(bd, bfqq))
		bfq_put_group(bd, bfqg);
}

/* ------------------------------------------------------------------ */
/* Peak rate.                                                          */

static void bfq_rate_reset(struct bfq_data *bd, uint64_t now_ns)
{
	bd->rate_first_ns = now_ns;
	bd->rate_sectors = 0;
	bd->rate_samples = 0;
	bd->rate_seq = 0;
}

/*
 * A dispatch, as a sample of the device's rate: the sectors handed out
 * over at least BFQ_RATE_MIN_INTERVAL_MS of continuous work.  The estimate
 * moves towards a sample by a weight that grows with the share of
 * sequential dispatches in it, and only upwards unless three quarters
 * were sequential, as the kernel's bfq_update_rate_reset: random I/O says
 * little about what the device can stream.
 */
static void bfq_update_peak_rate(struct bfq_data *bd,
				 const struct elv_request *rq, uint64_t now_ns)
{
	uint64_t elapsed, rate, div, w;

	if (bd->rate_first_ns == 0 || (bd->in_flight == 0 &&
	    now_ns - bd->rate_last_ns > elv_ms_to_ns(BFQ_RATE_GAP_MS)))
		bfq_rate_reset(bd, now_ns);
	bd->rate_samples++;
	if (rq->sector - bd->pq.last_position + BFQ_SEEK_THR <=
	    2 * BFQ_SEEK_THR)
		bd->rate_seq++;
	bd->rate_sectors += rq->nr_sectors;
	bd->rate_last_ns = now_ns;
	elapsed = now_ns - bd->rate_first_ns;
	if (elapsed < elv_ms_to_ns(BFQ_RATE_MIN_INTERVAL_MS) ||
	    bd->rate_samples < BFQ_RATE_MIN_SAMPLES)
		return;
	rate = bd->rate_sectors * BFQ_NS_PER_S / elapsed;
	if (bd->rate_seq * 4 >= bd->rate_samples * 3 || rate > bd->peak_rate) {
		w = 9 * bd->rate_seq / bd->rate_samples;
		div = 10 - w;
		bd->peak_rate = (bd->peak_rate * (div - 1) + rate) / div;
		if (bd->peak_rate == 0)
			bd->peak_rate = 1;
	}
	bfq_rate_reset(bd, now_ns);
}

/* ------------------------------------------------------------------ */
/* Weight raising.                                                     */

static bool bfq_wr_allowed(const struct bfq_data *bd,
			   const struct bfq_queue *bfqq)
{
	return bd->low_latency != 0 && bfqq->per_process &&
		bfqq->cls != PIDQ_IDLE &&
		bfq_level_weight(bfqq) == BFQ_DEFAULT_WEIGHT;
}

/*
 * End a raising whose time is up, or whose interactive part has had its
 * BFQ_MAX_SERVICE_FROM_WR, or that is no longer allowed.  A soft
 * real-time raising that cut into an interactive one goes back to it
 * while its time lasts (the kernel's switch_back_to_interactive_wr).
 */
static void bfq_update_raising(const struct bfq_data *bd,
			       struct bfq_queue *bfqq, uint64_t now_ns)
{
	struct bfq_proc *p = &bfqq->p;

	if (p->wr_coeff == 1)
		return;
	if (p->wr_softrt && now_ns >= p->wr_end &&
	    now_ns < p->wr_interactive_end) {
		p->wr_coeff = BFQ_WR_COEFF;
		p->wr_softrt = false;
		p->wr_end = p->wr_interactive_end;
	}
	if (!bfq_wr_allowed(bd, bfqq) || now_ns >= p->wr_end ||
	    (!p->wr_softrt && p->wr_service > BFQ_MAX_SERVICE_FROM_WR)) {
		p->wr_coeff = 1;
		p->wr_softrt = false;
	}
}

/*
 * A process's queue becomes busy: raise it if it is starting up (new, or
 * back after BFQ_WR_MIN_IDLE_MS) or soft real-time (back with nothing in
 * flight, after soft_rt_next), as bfq_update_bfqq_wr_on_rq_arrival.
 */
static void bfq_raise_on_busy(struct bfq_data *bd,
			      struct bfq_queue *bfqq, uint64_t now_ns)
{
	struct bfq_proc *p = &bfqq->p;
	bool interactive, soft_rt;

	if (!bfq_wr_allowed(bd, bfqq))
		return;
	interactive = !p->seen ||
		now_ns >= p->idle_since + elv_ms_to_ns(BFQ_WR_MIN_IDLE_MS);
	soft_rt = p->seek_history != UINT32_MAX && bfqq->dispatched == 0 &&
		p->seen && now_ns >= p->soft_rt_next;
	if (interactive) {
		if (p->wr_coeff == 1 || p->wr_softrt)
			bd->wr_interactive_starts++;
		p->wr_coeff = BFQ_WR_COEFF;
		p->wr_softrt = false;
		p->wr_service = 0;
		p->wr_end = now_ns + bfq_wr_duration(bd);
	} else if (soft_rt) {
		if (!p->wr_softrt) {
			bd->wr_softrt_starts++;
			p->wr_interactive_end = p->wr_coeff > 1 ? p->wr_end : 0;
		}
		p->wr_coeff = BFQ_WR_COEFF * BFQ_SOFTRT_WEIGHT_FACTOR;
		p->wr_softrt = true;
		p->wr_end = now_ns + elv_ms_to_ns(BFQ_WR_RT_MAX_MS);
	}
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
	uint64_t by_gap = now_ns + bfq_slice_idle_ns(bd) +
		elv_ms_to_ns(BFQ_SOFTRT_MIN_GAP_MS);

	bfqq->p.soft_rt_next = by_rate > by_gap ? by_rate : by_gap;
	bfqq->softrt_pending = false;
}

/* ------------------------------------------------------------------ */
/* B-WF2Q+: queues entering and leaving their class's schedule.        */

/* Count a queue of weight w in bd->weights, kept lightest first. */
static void bfq_weights_add(struct bfq_data *bd, unsigned w)
{
	struct bfq_weight_count *wc = bd->weights;
	unsigned i = 0, n = bd->nr_weights;

	while (i < n && wc[i].weight < w)
		i++;
	if (i == n || wc[i].weight != w) {
		memmove(&wc[i + 1], &wc[i], (n - i) * sizeof *wc);
		wc[i].weight = w;
		wc[i].count = 0;
		bd->nr_weights++;
	}
	wc[i].count++;
}

static void bfq_weights_remove(struct bfq_data *bd, unsigned w)
{
	struct bfq_weight_count *wc = bd->weights;
	unsigned i = 0, n = bd->nr_weights;

	while (wc[i].weight != w)
		i++;
	if (--wc[i].count == 0) {
		memmove(&wc[i], &wc[i + 1], (n - i - 1) * sizeof *wc);
		bd->nr_weights--;
	}
}

/*
 * bfqq is counted in bd->weights, under its weight, while it is busy or
 * has requests in flight and is not raised, as in the kernel: added when
 * it becomes busy with nothing in flight (bfq_add_bfqq_busy), removed
 * when it is neither busy nor has anything in flight any more
 * (bfq_del_bfqq_busy, bfq_completed_request), and moved or taken out
 * when its weight changes, raised ones not put back
 * (__bfq_entity_update_weight_prio).  Called after each of these.
 */
static void bfq_weights_update(struct bfq_data *bd, struct bfq_queue *bfqq)
{
	unsigned w = (bfqq->busy || bfqq->dispatched != 0) &&
		bfqq->p.wr_coeff == 1 ? bfqq->e.weight : 0;

	if (w == bfqq->counted_weight)
		return;
	if (bfqq->counted_weight != 0)
		bfq_weights_remove(bd, bfqq->counted_weight);
	if (w != 0)
		bfq_weights_add(bd, w);
	bfqq->counted_weight = w;
}

/*
 * bfqq, busy, off the heaps (in service or between budgets), takes the
 * weight its raising gives it now.  At each dispatch, as the kernel's
 * bfq_update_wr_data: a raising that ended mid-budget lowers the weight
 * its finish time is charged at when the budget ends.
 */
static void bfq_reweigh(struct bfq_data *bd, struct bfq_queue *bfqq,
			uint64_t now_ns)
{
	struct bfq_sched *st = bfq_st(bfqq);

	st->wsum -= bfqq->e.weight;
	bfq_update_raising(bd, bfqq, now_ns);
	bfqq->e.weight = bfq_weight(bfqq);
	st->wsum += bfqq->e.weight;
	bfq_weights_update(bd, bfqq);
}

/* ------------------------------------------------------------------ */
/* B-WF2Q+'s heaps (pairing heaps: Fredman, Sedgewick, Sleator, Tarjan). */

static struct bfq_entity *bfq_hentity(struct bfq_hnode *n)
{
	return elv_container_of(n, struct bfq_entity, node);
}

static struct bfq_queue *bfq_equeue(struct bfq_entity *ent)
{
	return elv_container_of(ent, struct bfq_queue, e);
}

/*
 * Does a go before b: by start in the waiting heap, by finish then by
 * order of addition in the eligible one.
 */
static bool bfq_heap_before(struct bfq_hnode *a, struct bfq_hnode *b,
			    bool by_finish)
{
	const struct bfq_entity *x = bfq_hentity(a), *y = bfq_hentity(b);

	if (!by_finish)
		return bfq_gt(y->start, x->start);
	if (x->finish != y->finish)
		return bfq_gt(y->finish, x->finish);
	return x->seq < y->seq;
}

/* One heap of two roots (either may be NULL; neither has siblings). */
static struct bfq_hnode *bfq_heap_meld(struct bfq_hnode *a,
				       struct bfq_hnode *b, bool by_finish)
{
	struct bfq_hnode *t;

	if (a == NULL || b == NULL)
		return a != NULL ? a : b;
	if (bfq_heap_before(b, a, by_finish)) {
		t = a;
		a = b;
		b = t;
	}
	b->prev = a;
	b->next = a->child;
	if (a->child != NULL)
		a->child->prev = b;
	a->child = b;
	return a;
}

/*
 * One heap of a list of siblings: melded in pairs left to right, then
 * the pairs right to left (the two passes that keep pairing heaps at
 * O(log n) amortized).
 */
static struct bfq_hnode *bfq_heap_merge_pairs(struct bfq_hnode *n,
					      bool by_finish)
{
	struct bfq_hnode *a, *b, *pairs = NULL, *root = NULL;

	while (n != NULL) {
		a = n;
		b = a->next;
		n = b != NULL ? b->next : NULL;
		a->next = a->prev = NULL;
		if (b != NULL)
			b->next = b->prev = NULL;
		a = bfq_heap_meld(a, b, by_finish);
		a->next = pairs;
		pairs = a;
	}
	while (pairs != NULL) {
		a = pairs;
		pairs = a->next;
		a->next = NULL;
		root = bfq_heap_meld(root, a, by_finish);
	}
	return root;
}

static void bfq_heap_add(struct bfq_hnode **root, struct bfq_hnode *n,
			 bool by_finish)
{
	n->child = n->next = n->prev = NULL;
	*root = bfq_heap_meld(*root, n, by_finish);
}

static void bfq_heap_del(struct bfq_hnode **root, struct bfq_hnode *n,
			 bool by_finish)
{
	struct bfq_hnode *sub = bfq_heap_merge_pairs(n->child, by_finish);

	if (n == *root) {
		*root = sub;
		return;
	}
	if (n->prev->child == n)
		n->prev->child = n->next;
	else
		n->prev->next = n->next;
	if (n->next != NULL)
		n->next->prev = n->prev;
	*root = bfq_heap_meld(*root, sub, by_finish);
}

/* Busy ent, out of service, goes on its class's schedule. */
static void bfq_active_add(struct bfq_sched *st, struct bfq_entity *ent)
{
	ent->seq = st->next_seq++;
	ent->eligible = !bfq_gt(ent->start, st->vtime);
	bfq_heap_add(ent->eligible ? &st->eligible : &st->waiting,
		     &ent->node, ent->eligible);
}

/* ent leaves its class's schedule (put in service, or idle). */
static void bfq_active_del(struct bfq_sched *st, struct bfq_entity *ent)
{
	bfq_heap_del(ent->eligible ? &st->eligible : &st->waiting,
		     &ent->node, ent->eligible);
}

/* The waiting entities V has reached become eligible. */
static void bfq_wf2q_update_eligible(struct bfq_sched *st)
{
	struct bfq_entity *ent;

	while (st->waiting != NULL &&
	       !bfq_gt((ent = bfq_hentity(st->waiting))->start, st->vtime)) {
		bfq_heap_del(&st->waiting, &ent->node, false);
		ent->eligible = true;
		bfq_heap_add(&st->eligible, &ent->node, true);
	}
}

/* Take ent off the idle tree of st; its weight leaves the sum. */
static void bfq_idle_extract(struct bfq_sched *st, struct bfq_entity *ent)
{
	elv_list_del(&ent->active);
	st->wsum -= ent->weight;
	ent->idle_tree = false;
}

/*
 * V has moved: the idle entities whose finish it has passed no longer
 * count in the weight sum (the kernel's bfq_forget_idle), and may be
 * freed.  The idle tree is in order of finish: they are at its head.
 * Asked at every dispatch, this looks at one entity when none is due.
 */
static void bfq_forget_idle(struct bfq_data *bd, struct bfq_sched *st)
{
	struct bfq_entity *ent;

	while (st->idle.next != &st->idle) {
		ent = elv_list_entry(st->idle.next, struct bfq_entity, active);
		if (bfq_gt(ent->finish, st->vtime))
			break;
		bfq_idle_extract(st, ent);
		if (ent->group != NULL)
			bfq_put_group(bd, ent->group);
		else
			bfq_put_queue(bd, bfq_equeue(ent));
	}
}

/* ent goes onto the idle tree of st, in order of finish. */
static void bfq_idle_insert(struct bfq_sched *st, struct bfq_entity *ent)
{
	struct elv_list *pos = st->idle.next;

	while (pos != &st->idle && !bfq_gt(elv_list_entry(pos,
	       struct bfq_entity, active)->finish, ent->finish))
		pos = pos->next;
	elv_list_add_tail(&ent->active, pos);
	ent->idle_tree = true;
}

/* Service handed out in class st: V advances by it over the weights. */
static void bfq_served(struct bfq_data *bd, struct bfq_sched *st,
		       uint64_t service)
{
	st->vtime += bfq_delta(service, st->wsum);
	bfq_forget_idle(bd, st);
}

/*
 * Service charged to bfqq is charged to its group's entity too, and
 * advances the clocks of both levels (bfq_bfqq_served's walk up).
 */
static void bfq_queue_served(struct bfq_data *bd, struct bfq_queue *bfqq,
			     uint64_t service)
{
	bfq_served(bd, bfq_st(bfqq), service);
	if (bfqq->bfqg != &bd->root) {
		bfqq->bfqg->served += service;
		bfq_served(bd, bfq_groups_st(bd), service);
	}
}

/* ------------------------------------------------------------------ */
/* Groups: their entities on the root's schedule.                      */

/* The group of id, or NULL if it has none yet. */
static struct bfq_group *bfq_find_group(struct bfq_data *bd, uint64_t id)
{
	struct elv_list *pos;
	struct bfq_group *bfqg;

	if (id == 0)
		return &bd->root;
	elv_list_for_each(pos, &bd->groups) {
		bfqg = elv_list_entry(pos, struct bfq_group, link);
		if (bfqg->id == id)
			return bfqg;
	}
	return NULL;
}

static void bfq_group_init(struct bfq_data *bd, struct bfq_group *bfqg,
			   uint64_t id);

/*
 * The group of id, made on its first request; the root's without memory
 * (unfair but safe).  Groups are few: a list will do.
 */
static struct bfq_group *bfq_get_group(struct bfq_data *bd, uint64_t id)
{
	struct bfq_group *bfqg = bfq_find_group(bd, id);

	if (bfqg != NULL)
		return bfqg;
	bfqg = calloc(1, sizeof *bfqg);
	if (bfqg == NULL)
		return &bd->root;
	bfq_group_init(bd, bfqg, id);
	elv_list_add(&bfqg->link, &bd->groups);
	return bfqg;
}

/*
 * A queue of bfqg became busy: so does the group, if it was not, with
 * the weight the host gives it now, starting at the root's V or at its
 * finish if that is ahead (it is then on the idle tree), its finish a
 * budget of bfqq's later (__bfq_activate_entity one level up).
 */
static void bfq_group_busy(struct bfq_data *bd, struct bfq_queue *bfqq)
{
	struct bfq_group *bfqg = bfqq->bfqg;
	struct bfq_sched *st = bfq_groups_st(bd);

	bfqg->busy_queues++;
	if (bfqg == &bd->root || bfqg->busy)
		return;
	if (bfqg->e.idle_tree)
		bfq_idle_extract(st, &bfqg->e);
	bfqg->e.weight = elv_cgroup_weight(bd->eq, bfqg->id);
	if (bfqg->has_finish && bfq_gt(bfqg->e.finish, st->vtime))
		bfqg->e.start = bfqg->e.finish;
	else
		bfqg->e.start = st->vtime;
	bfqg->e.finish = bfqg->e.start +
		bfq_delta(bfqq->budget, bfqg->e.weight);
	bfqg->has_finish = true;
	bfqg->busy = true;
	bd->busy_groups++;
	st->wsum += bfqg->e.weight;
	st->busy++;
	bfq_active_add(st, &bfqg->e);
}

/*
 * bfqg, off the root's heaps, leaves its schedule: onto the idle tree
 * while its finish is ahead of the root's V.
 */
static void bfq_group_unschedule(struct bfq_data *bd, struct bfq_group *bfqg)
{
	struct bfq_sched *st = bfq_groups_st(bd);

	st->busy--;
	bd->busy_groups--;
	bfqg->busy = false;
	if (bfq_gt(bfqg->e.finish, st->vtime))
		bfq_idle_insert(st, &bfqg->e);
	else
		st->wsum -= bfqg->e.weight;
}

/*
 * A queue of bfqg is busy no more: the group leaves the schedule with
 * its last busy queue, unless in service (its end decides then).
 */
static void bfq_group_idle(struct bfq_data *bd, struct bfq_group *bfqg)
{
	bfqg->busy_queues--;
	if (bfqg == &bd->root || bfqg->in_service || bfqg->busy_queues != 0)
		return;
	bfq_active_del(bfq_groups_st(bd), &bfqg->e);
	bfq_group_unschedule(bd, bfqg);
}

/*
 * The service of a queue of bfqg ended, and so does the group's: its
 * finish is set from what it was charged, and it goes back on the root's
 * schedule for another budget if a queue of it is still busy.
 */
static void bfq_group_expire(struct bfq_data *bd, struct bfq_group *bfqg)
{
	if (bfqg == &bd->root)
		return;
	bfqg->in_service = false;
	bfqg->e.finish = bfqg->e.start +
		bfq_delta(bfqg->served, bfqg->e.weight);
	bfqg->served = 0;
	if (bfqg->busy_queues == 0) {
		bfq_group_unschedule(bd, bfqg);
		bfq_put_group(bd, bfqg);
		return;
	}
	bfqg->e.start = bfqg->e.finish;
	bfqg->e.finish = bfqg->e.start +
		bfq_delta(bfq_max_budget(bd), bfqg->e.weight);
	bfq_active_add(bfq_groups_st(bd), &bfqg->e);
}

/*
 * Put busy bfqq on its class's schedule (__bfq_activate_entity).  It
 * starts at V, or at its finish if that is ahead (it is then still on the
 * idle tree), or at its finish whatever V when backshift (it comes back
 * in time to what is left of its budget).  F = S + budget / weight.
 */
static void bfq_schedule(struct bfq_data *bd, struct bfq_queue *bfqq,
			 bool backshift)
{
	struct bfq_sched *st = bfq_st(bfqq);
	bool has_finish = bfqq->p.has_finish && bfqq->p.cls == bfqq->cls;
	uint64_t delta;

	if (bfqq->e.idle_tree)
		bfq_idle_extract(st, &bfqq->e);
	bfqq->e.weight = bfq_weight(bfqq);
	if (has_finish && (backshift || bfq_gt(bfqq->e.finish, st->vtime)))
		bfqq->e.start = bfqq->e.finish;
	else
		bfqq->e.start = st->vtime;
	bfqq->e.finish = bfqq->e.start +
		bfq_delta(bfqq->budget, bfqq->e.weight);
	/*
	 * Backshifted, a process that keeps leaving briefly would fall
	 * further and further behind V, then monopolize the device once it
	 * stays: push it up to finish at V, raised ones less (the kernel's
	 * bfq_update_fin_time_enqueue).
	 */
	if (backshift && bfq_gt(st->vtime, bfqq->e.finish)) {
		delta = (st->vtime - bfqq->e.finish) / bfqq->p.wr_coeff;
		bfqq->e.start += delta;
		bfqq->e.finish += delta;
	}
	bfqq->p.has_finish = true;
	bfqq->p.cls = bfqq->cls;
	st->wsum += bfqq->e.weight;
	st->busy++;
	bd->busy_queues++;
	bfq_active_add(st, &bfqq->e);
	bfq_weights_update(bd, bfqq);
	bfq_group_busy(bd, bfqq);
}

/*
 * Take bfqq (out of service, off the active list) off its class's
 * schedule: onto the idle tree if its finish is ahead of V and into_idle.
 */
static void bfq_unschedule(struct bfq_data *bd, struct bfq_queue *bfqq,
			   bool into_idle)
{
	struct bfq_sched *st = bfq_st(bfqq);

	st->busy--;
	bd->busy_queues--;
	if (into_idle && bfq_gt(bfqq->e.finish, st->vtime)) {
		bfq_idle_insert(st, &bfqq->e);
	} else {
		st->wsum -= bfqq->e.weight;
	}
	bfq_group_idle(bd, bfqq->bfqg);
}

/*
 * bfqq (not busy, not in service) gets a request: raise it if it deserves
 * it, give it a budget and schedule it (bfq_bfqq_handle_idle_busy_switch).
 * Returns true when it comes back in time to the rest of a budget it
 * emptied without using, the kernel's bfqq_wants_to_preempt.
 */
static bool bfq_activate(struct bfq_data *bd, struct bfq_queue *bfqq,
			 const struct elv_request *rq, uint64_t now_ns)
{
	struct bfq_proc *p = &bfqq->p;
	bool in_time, resume;

	in_time = p->ttime.has_end &&
		now_ns <= p->ttime.last_end_ns + 3 * bfq_slice_idle_ns(bd);
	bfq_update_raising(bd, bfqq, now_ns);
	bfq_raise_on_busy(bd, bfqq, now_ns);
	resume = p->wait_rq && in_time && p->budget_left > 0;
	if (resume) {
		bfqq->budget = p->budget_left;
		if (bfqq->budget > p->max_budget)
			bfqq->budget = p->max_budget;
	} else {
		bfqq->budget = bfq_next_budget(bd, bfqq);
		if (bfqq->budget < bfq_charge(bd, bfqq, rq))
			bfqq->budget = bfq_charge(bd, bfqq, rq);
	}
	bfqq->served = 0;
	p->wait_rq = false;
	p->seen = true;
	bfqq->busy = true;
	bfqq->busy_since = now_ns;
	bfqq->busy_served = 0;
	bfq_schedule(bd, bfqq, resume);
	return resume;
}

/* bfqq, out of service and empty, is busy no more. */
static void bfq_deactivate(struct bfq_data *bd, struct bfq_queue *bfqq,
			   uint64_t now_ns)
{
	bfq_unschedule(bd, bfqq, true);
	bfqq->busy = false;
	bfq_weights_update(bd, bfqq);
	bfqq->p.idle_since = now_ns;
	if (bfqq->dispatched == 0)
		bfq_set_soft_rt_next(bd, bfqq, now_ns);
	else
		bfqq->softrt_pending = true;	/* at its last completion */
}

/*
 * A process's priority or group changed (ionice -p, a move to another
 * group): move its queue, not in service, to its new class and group; a
 * finish time means nothing in another.
 */
static void bfq_move(struct bfq_data *bd, struct bfq_queue *bfqq,
		     struct bfq_group *bfqg, enum pidq_class cls, int level,
		     uint64_t now_ns)
{
	struct bfq_group *old = bfqq->bfqg;

	if (bfqq->e.idle_tree)
		bfq_idle_extract(bfq_st(bfqq), &bfqq->e);
	if (bfqq->busy) {
		bfq_active_del(bfq_st(bfqq), &bfqq->e);
		bfq_unschedule(bd, bfqq, false);
	}
	if (bfqg != old) {
		old->nr_procs--;
		bfqg->nr_procs++;
		bfqq->bfqg = bfqg;
		bfqq->p.has_finish = false;
		bfqq->p.cgroup = bfqg->id;
	}
	bfqq->cls = cls;
	bfqq->level = level;
	bfq_update_raising(bd, bfqq, now_ns);
	if (bfqq->busy)
		bfq_schedule(bd, bfqq, false);
	bfq_put_group(bd, old);
}

/*
 * The busy entity of class st to serve next: among the eligible ones
 * (S <= V), the smallest finish, the first added of equals.  When none is
 * eligible V jumps to the smallest start, as B-WF2Q+ does when the class
 * was idle.  The kernel keeps one tree by finish, each node holding the
 * smallest start below it; here two heaps do: V only moves forward and an
 * entity's timestamps stay put while it is on the schedule, so once
 * eligible it stays so, and each pick moves those V has reached from
 * the waiting heap (by start) to the eligible one (by finish).
 */
static struct bfq_entity *bfq_wf2q_pick(struct bfq_data *bd,
					struct bfq_sched *st)
{
	bfq_wf2q_update_eligible(st);
	if (st->eligible == NULL && st->waiting != NULL) {
		st->vtime = bfq_hentity(st->waiting)->start;
		bfq_forget_idle(bd, st);
		bfq_wf2q_update_eligible(st);
	}
	return st->eligible != NULL ? bfq_hentity(st->eligible) : NULL;
}

/*
 * The queue to serve next in bfqg, from class c on: B-WF2Q+ at each
 * level, into the group picked (bfq_lookup_next_entity's walk down).  A
 * group on the schedule has a busy queue on its own, none in service.
 */
static struct bfq_queue *bfq_lookup(struct bfq_data *bd,
				    struct bfq_group *bfqg, int c)
{
	struct bfq_entity *ent;

	for (; c < PIDQ_NR_CLASSES; c++) {
		ent = bfq_wf2q_pick(bd, &bfqg->sched[c]);
		if (ent != NULL)
			return ent->group != NULL ?
				bfq_lookup(bd, ent->group, 0) :
				bfq_equeue(ent);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The service.                                                        */

static void bfq_set_in_service(struct bfq_data *bd, struct bfq_queue *bfqq,
			       uint64_t now_ns)
{
	/* Empty if kept busy when preempted (bfq_keeps_busy). */
	uint64_t need = bfqq->q.next_rq != NULL ?
		bfq_charge(bd, bfqq, bfqq->q.next_rq) : 0;

	bfq_active_del(bfq_st(bfqq), &bfqq->e);
	/* Its group is in service with it (one level up). */
	if (bfqq->bfqg != &bd->root) {
		bfq_active_del(bfq_groups_st(bd), &bfqq->bfqg->e);
		bfqq->bfqg->in_service = true;
	}
	bd->active = bfqq;
	bd->idling = false;
	bfqq->served = 0;
	bfqq->service_start = now_ns;
	bfqq->idling_start = 0;
	bfqq->budget_timeout = 0;
	bfqq->fifo_checked = false;
	/* A budget always covers at least the first request. */
	if (bfqq->budget < need)
		bfqq->budget = need;
}

/*
 * The next budget, from how the last one ended (the kernel's
 * __bfq_bfqq_recalc_budget).  Async and raised queues get the largest.
 */
static void bfq_budget_feedback(const struct bfq_data *bd,
				struct bfq_queue *bfqq,
				enum bfq_expire_why why)
{
	uint64_t max = bfq_max_budget(bd), min = bfq_min_budget(bd);
	uint64_t budget = bfqq->p.max_budget;

	if (!bfqq->per_process || bfqq->p.wr_coeff > 1) {
		bfqq->p.max_budget = max;
		return;
	}
	switch (why) {
	case BFQ_EXP_PREEMPTED:
		return;
	case BFQ_EXP_TOO_IDLE:
		/*
		 * The budget was probably too large for the process's
		 * batch: cut it, so that its next one is served sooner.
		 * The kernel doubles it instead when the queue still has
		 * requests in flight, which happens there only when the
		 * idle timer races with a dispatch; here a wait starts
		 * with nothing in flight and ends under the queue lock.
		 */
		if (budget > 5 * min)
			budget -= 4 * min;
		else
			budget = min;
		break;
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
	bfqq->p.max_budget = budget;
}

/*
 * Is the queue in service slow (bfq_bfqq_is_slow)?  Over a service of
 * more than 20 ms, when it got less than half of what the device could
 * have given it; over a shorter one, when it is seeky.  *ms is the time
 * to charge it: the service's, at least slice_idle (one seek).
 */
static bool bfq_slow(const struct bfq_data *bd, const struct bfq_queue *bfqq,
		     enum bfq_expire_why why, uint64_t now_ns, uint64_t *ms)
{
	uint64_t end = why == BFQ_EXP_TOO_IDLE && bfqq->idling_start != 0 ?
		bfqq->idling_start : now_ns;
	uint64_t d = end > bfqq->service_start ? end - bfqq->service_start : 0;

	if (!bfqq->per_process)
		return false;
	if (d < elv_ms_to_ns(1)) {
		*ms = (uint64_t)(bfq_slice_idle_ns(bd) / elv_ms_to_ns(1));
		return bfq_seeky(bfqq);
	}
	*ms = d / (uint64_t)elv_ms_to_ns(1);
	if (d > elv_ms_to_ns(20))
		return bfqq->served < bfq_max_budget(bd) / 2;
	return bfq_seeky(bfqq);
}

/*
 * Charge a slow or timed-out queue for the time it held the device, as
 * the share of the largest budget that time is worth, not for the sectors
 * it moved (bfq_bfqq_charge_time): a seeky process pays for its seeks.  A
 * queue that timed out after using 2/3 of its budget is only unlucky.
 */
static void bfq_charge_time(struct bfq_data *bd, struct bfq_queue *bfqq,
			    enum bfq_expire_why why, uint64_t now_ns)
{
	uint64_t ms = 0, timeout = (uint64_t)bd->timeout_sync, tot;
	bool slow = bfq_slow(bd, bfqq, why, now_ns, &ms);

	if (bfqq->p.wr_coeff > 1 || !(slow || (why == BFQ_EXP_TIMEOUT &&
	    bfqq->budget - bfqq->served >= bfqq->budget / 3)))
		return;
	if (ms > timeout)
		ms = timeout;
	tot = bfq_max_budget(bd) * ms / (timeout != 0 ? timeout : 1);
	if (tot <= bfqq->served)
		return;
	if (tot > bfqq->budget)
		bfqq->budget = tot;
	bfq_queue_served(bd, bfqq, tot - bfqq->served);
	bfqq->served = tot;
}

static void bfq_count_expiry(struct bfq_data *bd, enum bfq_expire_why why)
{
	switch (why) {
	case BFQ_EXP_PREEMPTED:
		bd->expired_preempted++;
		break;
	case BFQ_EXP_TOO_IDLE:
		bd->expired_too_idle++;
		break;
	case BFQ_EXP_NO_MORE:
		bd->expired_no_more_requests++;
		break;
	case BFQ_EXP_TIMEOUT:
		bd->expired_budget_timeout++;
		break;
	case BFQ_EXP_EXHAUSTED:
		bd->expired_budget_exhausted++;
		break;
	}
}

static bool bfq_keeps_busy(const struct bfq_data *bd,
			   const struct bfq_queue *bfqq,
			   enum bfq_expire_why why);

/*
 * End the service of the queue in service (bfq_bfqq_expire).  Its finish
 * time is set from what it was charged, then it goes back on its class's
 * schedule with a new budget if it still has requests (or was preempted
 * while the shares need it waited for: bfq_keeps_busy), or leaves it
 * (onto the idle tree while its finish is ahead of V) if not.
 */
static void bfq_expire(struct bfq_data *bd, uint64_t now_ns,
		       enum bfq_expire_why why)
{
	struct bfq_queue *bfqq = bd->active;
	struct bfq_group *bfqg;

	if (bfqq == NULL)
		return;
	bfqg = bfqq->bfqg;
	bfq_count_expiry(bd, why);
	bfq_charge_time(bd, bfqq, why, now_ns);
	bd->active = NULL;
	bd->idling = false;
	bfqq->e.finish = bfqq->e.start + bfq_delta(bfqq->served, bfqq->e.weight);
	bfq_budget_feedback(bd, bfqq, why);

	if (bfqq->q.queued == 0 && !bfq_keeps_busy(bd, bfqq, why)) {
		/*
		 * What is left of the budget is kept for a process that
		 * comes back in time, unless the budget ran out.
		 */
		bfqq->p.wait_rq = why != BFQ_EXP_EXHAUSTED &&
			why != BFQ_EXP_TIMEOUT;
		bfqq->p.budget_left = bfqq->budget > bfqq->served ?
			bfqq->budget - bfqq->served : 0;
		bfqq->served = 0;
		bfq_deactivate(bd, bfqq, now_ns);
		bfq_put_queue(bd, bfqq);
		bfq_group_expire(bd, bfqg);
		return;
	}
	/* Still busy: next budget, at the weight it has now. */
	bfqq->served = 0;
	bfqq->budget = bfq_next_budget(bd, bfqq);
	if (bfqq->q.next_rq != NULL &&
	    bfqq->budget < bfq_charge(bd, bfqq, bfqq->q.next_rq))
		bfqq->budget = bfq_charge(bd, bfqq, bfqq->q.next_rq);
	bfq_reweigh(bd, bfqq, now_ns);
	bfqq->e.start = bfqq->e.finish;
	bfqq->e.finish = bfqq->e.start +
		bfq_delta(bfqq->budget, bfqq->e.weight);
	bfq_active_add(bfq_st(bfqq), &bfqq->e);
	bfq_group_expire(bd, bfqg);
}

/*
 * Are queues of the other classes than the idle one busy?  At the root:
 * a group counts as best effort.
 */
static bool bfq_others_busy(const struct bfq_data *bd)
{
	return bd->root.sched[PIDQ_RT].busy + bd->root.sched[PIDQ_BE].busy != 0;
}

/* How many classes of bfqg have busy entities. */
static int bfq_busy_classes(const struct bfq_group *bfqg)
{
	int c, classes = 0;

	for (c = 0; c < PIDQ_NR_CLASSES; c++)
		if (bfqg->sched[c].busy != 0)
			classes++;
	return classes;
}

/*
 * Are busy queues of two classes, or is a queue counted in bd->weights
 * lighter than bfqq (bfq_asymmetric_scenario)?  Then only idling keeps
 * the shares.  A queue whose last request is still in flight counts: it
 * is coming back, most likely, and the share it is owed then must not
 * have gone to the others.  Raised queues do not: idling for them is
 * decided by their raising.  The lightest queue is not waited for on
 * these grounds: the device it does not use goes to heavier queues,
 * which is their due.  A queue not counted (raised, or becoming busy)
 * sees asymmetry when two weights are counted.  Two groups with busy
 * queues (the root counted when it has some) are asymmetric whatever
 * their weights, as the kernel's num_groups_with_pending_reqs: each group
 * is owed its share.
 */
static bool bfq_asymmetric(const struct bfq_data *bd,
			   const struct bfq_queue *bfqq)
{
	if (bd->busy_groups + (bd->root.busy_queues != 0 ? 1 : 0) > 1 ||
	    bfq_busy_classes(&bd->root) > 1 ||
	    bfq_busy_classes(bfqq->bfqg) > 1)
		return true;
	if (bfqq->counted_weight != 0)
		return bd->weights[0].weight < bfqq->counted_weight;
	return bd->nr_weights > 1;
}

/*
 * Does only idling for bfqq keep the shares (idling_needed_for_service_-
 * guarantees)?  When it is raised, or the busy queues differ in weight or
 * class, and also when it is the only busy queue (the kernel's since
 * 5.12): let go, it would leave the device to whichever queue comes next,
 * a lighter one perhaps, for a whole budget; the wait costs no one
 * anything meanwhile.  Whatever its think time: a process whose round
 * trip through FUSE is longer than slice_idle on a loaded host would
 * otherwise take turns with a lighter one request by request.
 */
static bool bfq_idling_for_guarantees(const struct bfq_data *bd,
				      const struct bfq_queue *bfqq)
{
	return bfqq->p.wr_coeff > 1 || bfq_asymmetric(bd, bfqq) ||
		bd->busy_queues == 1;
}

/*
 * Does bfqq, empty and preempted, stay busy (__bfq_bfqq_expire)?  When
 * only idling keeps the shares, as the kernel does since 5.2:
 * deactivated, it would come back as a new arrival and take the device
 * back from the queue that preempted it, which would do the same at its
 * own next request, and the two would alternate request by request
 * whatever their weights.  Kept on the schedule, it is served when its
 * timestamps say.
 */
static bool bfq_keeps_busy(const struct bfq_data *bd,
			   const struct bfq_queue *bfqq,
			   enum bfq_expire_why why)
{
	return why == BFQ_EXP_PREEMPTED && bfqq->per_process &&
		bfq_idling_for_guarantees(bd, bfqq);
}

/*
 * Is bfqq, run dry, worth waiting for (bfq_better_to_idle)?  Always with
 * strict_guarantees; never for async or idle-class queues.  Otherwise
 * when its process comes back within slice_idle (throughput), or when
 * not waiting would break the shares (bfq_idling_for_guarantees).
 */
static bool bfq_may_idle(const struct bfq_data *bd,
			 const struct bfq_queue *bfqq)
{
	if (bfqq->exited)
		return false;
	if (bd->strict_guarantees != 0)
		return true;
	if (bd->slice_idle_us <= 0 || bfqq->cls == PIDQ_IDLE ||
	    !bfqq->per_process)
		return false;
	return bfqq->p.ttime.idle_window ||
		bfq_idling_for_guarantees(bd, bfqq);
}

/*
 * How long to wait for bfqq's process (bfq_arm_slice_timer): raised ones
 * at least 20 ms; a seeky one at most BFQ_MIN_TT_MS when nothing but
 * throughput is at stake (not raised, equal weights).
 */
static uint64_t bfq_idle_slice(const struct bfq_data *bd,
			       const struct bfq_queue *bfqq)
{
	uint64_t ns = bfq_slice_idle_ns(bd);

	if (bfqq->p.wr_coeff > 1) {
		if (ns < (uint64_t)elv_ms_to_ns(BFQ_WR_MIN_IDLE_SLICE_MS))
			ns = elv_ms_to_ns(BFQ_WR_MIN_IDLE_SLICE_MS);
	} else if (bfq_seeky(bfqq) && !bfq_asymmetric(bd, bfqq) &&
		   ns > (uint64_t)elv_ms_to_ns(BFQ_MIN_TT_MS)) {
		ns = elv_ms_to_ns(BFQ_MIN_TT_MS);
	}
	return ns;
}

/*
 * The queue to serve next, by class, then by B-WF2Q+ within it; the idle
 * class first once BFQ_CL_IDLE_TIMEOUT_MS has passed since it was last
 * considered so (bfq_lookup_next_entity).
 */
static struct bfq_queue *bfq_next_queue(struct bfq_data *bd, uint64_t now_ns)
{
	int c = 0;

	if (now_ns >= bd->idle_stamp + elv_ms_to_ns(BFQ_CL_IDLE_TIMEOUT_MS)) {
		if (bd->root.sched[PIDQ_IDLE].busy != 0)
			c = PIDQ_IDLE;
		bd->idle_stamp = now_ns;
	}
	return bfq_lookup(bd, &bd->root, c);
}

/* Has bfqq's budget timeout (armed at its first dispatch) passed at t? */
static bool bfq_timed_out(const struct bfq_queue *bfqq, uint64_t t)
{
	return bfqq->budget_timeout != 0 && t >= bfqq->budget_timeout;
}

/*
 * The queue to dispatch from, or NULL to wait (for a completion, or for
 * the wake-up asked for).  The queue in service keeps the device while it
 * has budget, time and requests, or while its process is expected back.
 */
static struct bfq_queue *bfq_select_queue(struct elevator_queue *eq,
					  struct bfq_data *bd, uint64_t now_ns)
{
	struct bfq_queue *bfqq;

	/*
	 * Round again when the queue put in service is empty (kept busy
	 * when preempted): it is waited for, or expires and leaves.
	 */
	for (;;) {
		bfqq = bd->active;
		if (bfqq == NULL) {
			/* Nothing to do. */
		} else if (bfqq->q.queued == 0) {
			if (bd->idling) {
				if (now_ns < bd->idle_until) {
					/* The timer may fire early: ask again. */
					elv_wakeup_at(eq, bd->idle_until);
					return NULL;
				}
				bd->idle_timeouts++;
				bfq_expire(bd, now_ns, bfq_timed_out(bfqq, now_ns) ?
					   BFQ_EXP_TIMEOUT : BFQ_EXP_TOO_IDLE);
			} else if (bfqq->dispatched != 0 &&
				   bfq_may_idle(bd, bfqq)) {
				/* Its completion decides whether to wait. */
				return NULL;
			} else {
				bfq_expire(bd, now_ns, BFQ_EXP_NO_MORE);
			}
		} else if (bfq_timed_out(bfqq, now_ns)) {
			bfq_expire(bd, now_ns, BFQ_EXP_TIMEOUT);
		} else {
			return bfqq;
		}
		bfqq = bfq_next_queue(bd, now_ns);
		if (bfqq == NULL)
			return NULL;
		bfq_set_in_service(bd, bfqq, now_ns);
		if (bfqq->q.queued != 0)
			return bfqq;
	}
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
	uint64_t end;

	if (bfqq == NULL || bfqq->q.queued != 0)
		return;
	if (bd->idling && now_ns >= bd->idle_until) {
		/*
		 * The service ended when the wait did, not now: how long
		 * the process has been idle decides its raising.
		 */
		end = bd->idle_until;
		bd->idle_timeouts++;
		bfq_expire(bd, end, bfq_timed_out(bfqq, end) ?
			   BFQ_EXP_TIMEOUT : BFQ_EXP_TOO_IDLE);
	} else if (!bd->idling && bfqq->dispatched == 0)
		bfq_expire(bd, now_ns, BFQ_EXP_NO_MORE);
}

/* rq leaves its queue (dispatched or merged away). */
static void bfq_remove_rq(struct bfq_data *bd, struct bfq_queue *bfqq,
			  struct elv_request *rq)
{
	if (!pidq_remove_rq(&bd->pq, &bfqq->q, rq))
		return;
	/* The queue in service stays busy until it expires. */
	if (bfqq != bd->active) {
		bfq_active_del(bfq_st(bfqq), &bfqq->e);
		bfq_deactivate(bd, bfqq, bd->now);
	}
}

/* The seek history of bfqq's process, with rq (bfq_update_io_seektime). */
static void bfq_update_seek(struct bfq_queue *bfqq,
			    const struct elv_request *rq)
{
	uint64_t d = rq->sector > bfqq->p.last_pos ?
		rq->sector - bfqq->p.last_pos : bfqq->p.last_pos - rq->sector;

	bfqq->p.seek_history = bfqq->p.seek_history << 1 |
		(d > BFQ_SEEK_THR ? 1 : 0);
	bfqq->p.last_pos = elv_rq_end_sector(rq);
}

/* Hand rq of the queue in service over to the host, and charge it. */
static struct elv_request *bfq_take(struct bfq_data *bd, struct bfq_queue *bfqq,
				    struct elv_request *rq, uint64_t now_ns)
{
	uint64_t charge = bfq_charge(bd, bfqq, rq);

	bfq_update_peak_rate(bd, rq, now_ns);
	bd->pq.last_position = elv_rq_end_sector(rq);
	bfq_remove_rq(bd, bfqq, rq);
	bfqq->dispatched++;
	bd->in_flight++;
	bfqq->served += charge;
	bfqq->busy_served += charge;
	if (bfqq->p.wr_coeff > 1)
		bfqq->p.wr_service += rq->nr_sectors;
	bfqq->fifo_checked = true;
	if (bfqq->budget_timeout == 0)
		bfqq->budget_timeout = now_ns + elv_ms_to_ns(bd->timeout_sync);
	bfq_queue_served(bd, bfqq, charge);
	bfq_reweigh(bd, bfqq, now_ns);
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

	bd->idling = false;
	/* An empty queue picked (kept busy when preempted) leaves. */
	while (bfqq == NULL || bfqq->q.queued == 0) {
		bfq_expire(bd, now_ns, BFQ_EXP_NO_MORE);
		bfqq = bfq_lookup(bd, &bd->root, 0);
		if (bfqq == NULL)
			return NULL;
		bfq_set_in_service(bd, bfqq, now_ns);
	}
	return bfq_take(bd, bfqq, bfqq->q.next_rq, now_ns);
}

/* ------------------------------------------------------------------ */
/* Hooks.                                                              */

/*
 * slice_idle (ms, shared with cfq through pidq) and slice_idle_us are one
 * setting shown in two units, as in the kernel.  The configuration file
 * writes the fields directly: whichever differs from its default wins.
 */
static void bfq_sync_slice_idle(struct bfq_data *bd)
{
	if (bd->slice_idle_us != BFQ_SLICE_IDLE_US)
		bd->pq.slice_idle = bd->slice_idle_us / 1000;
	else
		bd->slice_idle_us = bd->pq.slice_idle * 1000;
}

/*
 * bfqg, zeroed, becomes group id; the root's pooled queues are pidq's
 * (pidq_allow_merge knows them), the others' are bfq's own.
 */
static void bfq_group_init(struct bfq_data *bd, struct bfq_group *bfqg,
			   uint64_t id)
{
	struct bfq_queue *bfqq;
	int c, l;

	bfqg->id = id;
	elv_list_init(&bfqg->e.active);
	bfqg->e.group = bfqg;
	for (c = 0; c < PIDQ_NR_CLASSES; c++) {
		elv_list_init(&bfqg->sched[c].idle);
		for (l = 0; l < PIDQ_LEVELS; l++) {
			bfqq = &bfqg->pool[c][l];
			if (bfqg == &bd->root)
				pidq_init_pool(&bd->pq, &bfqq->q,
					       (enum pidq_class)c, l);
			else
				pidq_init_queue(&bfqq->q);
			bfq_queue_init(bfqq, bd, bfqg, (enum pidq_class)c, l,
				       false);
		}
	}
}

/*
 * Free bfqg once it is of no use: not the root, off the root's schedule
 * and idle tree, without per-process queues, nothing of its pool in
 * flight.  Its queues' finish times on its idle trees mean nothing once
 * it is idle itself: they are dropped, the queues freed when they can.
 */
static void bfq_put_group(struct bfq_data *bd, struct bfq_group *bfqg)
{
	struct bfq_entity *ent;
	int c, l;

	if (bfqg == &bd->root || bfqg->busy || bfqg->e.idle_tree)
		return;
	for (c = 0; c < PIDQ_NR_CLASSES; c++)
		while (!elv_list_empty(&bfqg->sched[c].idle)) {
			ent = elv_list_first(&bfqg->sched[c].idle,
					     struct bfq_entity, active);
			bfq_idle_extract(&bfqg->sched[c], ent);
			bfq_free_queue(bd, bfq_equeue(ent));
		}
	if (bfqg->nr_procs != 0)
		return;
	for (c = 0; c < PIDQ_NR_CLASSES; c++)
		for (l = 0; l < PIDQ_LEVELS; l++)
			if (bfqg->pool[c][l].dispatched != 0)
				return;
	elv_list_del(&bfqg->link);
	free(bfqg);
}

static int bfq_init_queue(struct elevator_queue *eq)
{
	struct bfq_data *bd = bfq_data(eq);

	bd->eq = eq;
	elv_list_init(&bd->groups);
	/* As the kernel, an optimistic start: 2/3 of the reference rate. */
	bd->peak_rate = BFQ_REF_RATE * 2 / 3;
	bfq_sync_slice_idle(bd);
	if (bd->strict_guarantees != 0 &&
	    bd->slice_idle_us < BFQ_STRICT_MIN_IDLE_US) {
		bd->slice_idle_us = BFQ_STRICT_MIN_IDLE_US;
		bd->pq.slice_idle = BFQ_STRICT_MIN_IDLE_US / 1000;
	}
	bfq_group_init(bd, &bd->root, 0);
	return 0;
}

/* Groups go with the queue; pidq frees the per-process queues. */
static void bfq_exit_queue(struct elevator_queue *eq)
{
	struct bfq_data *bd = bfq_data(eq);
	struct bfq_group *bfqg;

	pidq_exit_queue(eq);
	while (!elv_list_empty(&bd->groups)) {
		bfqg = elv_list_first(&bd->groups, struct bfq_group, link);
		elv_list_del(&bfqg->link);
		free(bfqg);
	}
}

/*
 * pidq_allow_merge knows the root's pool only: a new pooled request of
 * another group (async, or the kernel's) may join its group's pool.
 */
static bool bfq_allow_merge(struct elevator_queue *eq,
			    const struct elv_request *rq,
			    const struct elv_request *next,
			    enum elv_merge type)
{
	struct bfq_data *bd = bfq_data(eq);
	struct bfq_group *bfqg;
	enum pidq_class cls;
	int level;

	if (type == ELV_REQUEST_MERGE || next->cgroup == 0 ||
	    (next->sync && next->pid != 0))
		return pidq_allow_merge(eq, rq, next, type);
	if (next->sync && !rq->sync)
		return false;
	bfqg = bfq_find_group(bd, next->cgroup);
	pidq_prio(next->ioprio, &cls, &level);
	return bfqg != NULL && rq->elv_priv[0] == &bfqg->pool[cls][level].q;
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
 * Where bfqq competes with other, a queue of another group or the same:
 * bfqq's entity on the level they share (bfqq itself in one group or in
 * the root, else its group), and that entity's class there.
 */
static const struct bfq_entity *bfq_top(const struct bfq_data *bd,
					const struct bfq_queue *bfqq,
					const struct bfq_queue *other,
					enum pidq_class *cls)
{
	if (bfqq->bfqg == other->bfqg || bfqq->bfqg == &bd->root) {
		*cls = bfqq->cls;
		return &bfqq->e;
	}
	*cls = PIDQ_BE;
	return &bfqq->bfqg->e;
}

/*
 * Would B-WF2Q+ serve bfqq next, if the queue in service stopped now (the
 * kernel's next_queue_may_preempt: the next in service is not the one in
 * service)?  Of a higher class, or eligible (S <= V) in the same, on the
 * level where the two part (bfq_top).
 */
static bool bfq_next_may_preempt(struct bfq_data *bd,
				 const struct bfq_queue *bfqq,
				 const struct bfq_queue *active)
{
	enum pidq_class cls, acls;
	const struct bfq_entity *ent = bfq_top(bd, bfqq, active, &cls);

	bfq_top(bd, active, bfqq, &acls);
	if (acls != cls)
		return cls < acls;
	return !bfq_gt(ent->start, ent->group != NULL ?
		       bfq_groups_st(bd)->vtime : bfq_st(bfqq)->vtime);
}

/*
 * Should bfqq, which just became busy or changed class, take the device
 * from the queue in service at once (bfq_bfqq_handle_idle_busy_switch)?
 * If it came back in time to its budget and is raised no less, if it is
 * (or its group is, against another group) of a higher class or weight,
 * or if the queue in service is not worth
 * idling for; and then only if the schedule would pick it.  The idle
 * class never does.
 */
static bool bfq_should_preempt(struct bfq_data *bd,
			       const struct bfq_queue *bfqq, bool resumed)
{
	const struct bfq_queue *active = bd->active;
	const struct bfq_entity *ent, *aent;
	enum pidq_class cls, acls;

	if (active == NULL || active == bfqq || bfqq->cls == PIDQ_IDLE)
		return false;
	ent = bfq_top(bd, bfqq, active, &cls);
	aent = bfq_top(bd, active, bfqq, &acls);
	if (!((resumed && bfqq->p.wr_coeff >= active->p.wr_coeff) ||
	      cls < acls || (cls == acls && ent->weight > aent->weight) ||
	      !bfq_may_idle(bd, active)))
		return false;
	return bfq_next_may_preempt(bd, bfqq, active);
}

static void bfq_add_request(struct elevator_queue *eq, struct elv_request *rq,
			    uint64_t now_ns)
{
	struct bfq_data *bd = bfq_data(eq);
	struct bfq_queue *bfqq = NULL;
	struct bfq_group *bfqg;
	struct pidq *q;
	enum pidq_class cls;
	bool moved, resumed = false;
	int level;

	bd->now = now_ns;
	/* The kernel starts the idle class's clock with the scheduler. */
	if (!bd->started) {
		bd->started = true;
		bd->idle_stamp = now_ns;
	}
	bfq_expire_stale(bd, now_ns);
	pidq_prio(rq->ioprio, &cls, &level);
	bfqg = bfq_get_group(bd, rq->cgroup);
	if (rq->sync && rq->pid != 0) {
		q = pidq_find_process(&bd->pq, rq->pid);
		/* No memory: the pool serves it (unfair but safe). */
		bfqq = q != NULL ? bfq_queue(q) :
			bfq_new_process(bd, rq->pid, bfqg, cls, level);
		/* Its pid back before the queue drained: a new process. */
		if (bfqq != NULL)
			bfqq->exited = false;
		/*
		 * Also when the queue was freed since the process's last
		 * request: a process that thinks long empties its queue every
		 * time, and its think time is what must say so.
		 */
		if (bfqq != NULL)
			pidq_think_time(&bd->pq, &bfqq->p.ttime, now_ns);
	}
	if (bfqq == NULL)
		bfqq = &bfqg->pool[cls][level];

	pidq_add_rq(&bd->pq, &bfqq->q, rq);
	bfq_update_seek(bfqq, rq);

	/* Holding rq, the queue cannot be freed by an expiry here. */
	moved = bfqq->cls != cls || bfqq->level != level ||
		bfqq->bfqg != bfqg;
	if (moved) {
		if (bfqq == bd->active)
			bfq_expire(bd, now_ns, BFQ_EXP_PREEMPTED);
		bfq_move(bd, bfqq, bfqg, cls, level, now_ns);
	}

	if (bfqq == bd->active) {
		/* The process came back within the wait: serve it. */
		bd->idling = false;
		return;
	}
	if (!bfqq->busy)
		resumed = bfq_activate(bd, bfqq, rq, now_ns);
	else if (!moved)
		return;
	if (bfq_should_preempt(bd, bfqq, resumed))
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
	/* strict_guarantees: one request in the device at a time. */
	if (bd->strict_guarantees != 0 && bd->in_flight != 0)
		return NULL;

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
		    bfqq->served + bfq_charge(bd, bfqq, rq) <= bfqq->budget)
			break;
		bfq_expire(bd, now_ns, BFQ_EXP_EXHAUSTED);
	}
	bfq_take(bd, bfqq, rq, now_ns);

	/*
	 * The idle class gets one request at a time while others wait.  A
	 * used-up budget is not expired here but at the next dispatch, once
	 * the queue's next request is there (the loop above): expired now, a
	 * process with one request at a time would be empty and leave the
	 * schedule (the kernel's bfq expires for exhaustion in
	 * bfq_select_queue, with next_rq in hand).
	 */
	if (bfqq->cls == PIDQ_IDLE && bfq_others_busy(bd))
		bfq_expire(bd, now_ns, BFQ_EXP_EXHAUSTED);
	return rq;
}

/*
 * Completion: the moment to decide what the queue in service does next
 * (bfq_completed_request).  When its last request is done and it is worth
 * waiting for, wait (even past its budget timeout, taken when the wait
 * ends or its next request comes); otherwise let the next queue have the
 * device at once.
 */
static void bfq_completed(struct elevator_queue *eq, struct elv_request *rq,
			  uint64_t now_ns)
{
	struct bfq_data *bd = bfq_data(eq);
	struct bfq_queue *bfqq = bfq_rq_queue(rq);
	bool timed_out;

	bd->now = now_ns;
	bfqq->dispatched--;
	bd->in_flight--;
	bfq_weights_update(bd, bfqq);
	bfqq->p.ttime.has_end = true;
	bfqq->p.ttime.last_end_ns = now_ns;
	if (bfqq->dispatched == 0 && bfqq->softrt_pending)
		bfq_set_soft_rt_next(bd, bfqq, now_ns);

	if (bfqq != bd->active) {
		bfq_put_queue(bd, bfqq);
		return;
	}
	timed_out = bfq_timed_out(bfqq, now_ns);
	if (bfqq->q.queued == 0 && bfq_may_idle(bd, bfqq)) {
		if (bfqq->dispatched != 0)
			return;
		bd->idling = true;
		bfqq->idling_start = now_ns;
		bd->idle_until = now_ns + bfq_idle_slice(bd, bfqq);
		elv_wakeup_at(eq, bd->idle_until);
		return;
	}
	if (timed_out)
		bfq_expire(bd, now_ns, BFQ_EXP_TIMEOUT);
	else if (bfqq->q.queued == 0 && bfqq->dispatched == 0)
		bfq_expire(bd, now_ns, BFQ_EXP_NO_MORE);
}

/*
 * pid exited (the kernel's bfq_exit_bfqq): its history is forgotten, its
 * queue never idled on again, its service ends if it has nothing queued
 * (as an exhausted budget, as the kernel's), and the queue is freed once
 * nothing of it is queued, in flight or on the idle tree (now, if so).
 */
static void bfq_exit_process(struct elevator_queue *eq, pid_t pid,
			     uint64_t now_ns)
{
	struct bfq_data *bd = bfq_data(eq);
	struct bfq_proc *h;
	struct bfq_queue *bfqq;
	struct pidq *q;

	if (pid == 0)
		return;
	bd->now = now_ns;
	h = &bd->hist[bfq_hist_key(pid)];
	if (h->pid == pid)
		h->pid = 0;
	q = pidq_find_process(&bd->pq, pid);
	if (q == NULL)
		return;
	bfqq = bfq_queue(q);
	bfqq->exited = true;
	if (bfqq == bd->active && bfqq->q.queued == 0)
		bfq_expire(bd, now_ns, BFQ_EXP_EXHAUSTED);
	else
		bfq_put_queue(bd, bfqq);
}

/* ------------------------------------------------------------------ */
/* Tunables' side effects.                                             */

static int bfq_store_slice_idle(struct elevator_queue *eq, int64_t ms)
{
	struct bfq_data *bd = bfq_data(eq);

	bd->pq.slice_idle = ms;
	bd->slice_idle_us = ms * 1000;
	return 0;
}

static int bfq_store_slice_idle_us(struct elevator_queue *eq, int64_t us)
{
	struct bfq_data *bd = bfq_data(eq);

	bd->slice_idle_us = us;
	bd->pq.slice_idle = us / 1000;
	return 0;
}

/* Turning strict_guarantees on raises slice_idle to 8 ms if lower. */
static int bfq_store_strict_guarantees(struct elevator_queue *eq, int64_t on)
{
	struct bfq_data *bd = bfq_data(eq);

	if (on != 0 && bd->strict_guarantees == 0 &&
	    bd->slice_idle_us < BFQ_STRICT_MIN_IDLE_US)
		bfq_store_slice_idle_us(eq, BFQ_STRICT_MIN_IDLE_US);
	bd->strict_guarantees = on;
	return 0;
}

/* The budget max_budget 0 stands for, from the peak rate (read-only). */
static int64_t bfq_show_peak_rate(struct elevator_queue *eq)
{
	return (int64_t)bfq_data(eq)->peak_rate;
}

/* ------------------------------------------------------------------ */
/* Tunables, shown and set under .control/iosched/.                    */

static const struct elv_tunable bfq_tunables[] = {
	{ "slice_idle", ELV_TUNABLE_OFFSET(struct bfq_data, pq.slice_idle),
	  PIDQ_SLICE_IDLE, 0, 1000, "ms",
	  "wait for a process to issue again (0: never)", 0, NULL,
	  bfq_store_slice_idle },
	ELV_TUNABLE_STORE(struct bfq_data, slice_idle_us, BFQ_SLICE_IDLE_US,
			  0, 1000000, "us", "slice_idle in microseconds",
			  bfq_store_slice_idle_us),
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
		    "largest budget (0: peak_rate times timeout_sync)"),
	ELV_TUNABLE_STORE(struct bfq_data, strict_guarantees, 0, 0, 1, "",
			  "one request in the device at a time, always idle",
			  bfq_store_strict_guarantees),
	ELV_TUNABLE_COMPUTED("peak_rate", bfq_show_peak_rate, "sectors/s",
			     "the device's peak rate as estimated"),
	{ .name = NULL },
};

static const struct elv_counter bfq_counters[] = {
	ELV_COUNTER(struct bfq_data, expired_preempted),
	ELV_COUNTER(struct bfq_data, expired_too_idle),
	ELV_COUNTER(struct bfq_data, expired_no_more_requests),
	ELV_COUNTER(struct bfq_data, expired_budget_timeout),
	ELV_COUNTER(struct bfq_data, expired_budget_exhausted),
	ELV_COUNTER(struct bfq_data, wr_interactive_starts),
	ELV_COUNTER(struct bfq_data, wr_softrt_starts),
	ELV_COUNTER(struct bfq_data, idle_timeouts),
	{ .name = NULL },
};

/* ------------------------------------------------------------------ */
/* The scheduler and its registration.                                 */

static struct elevator_type bfq_type = {
	.name = "bfq",
	.description = "per-process budgets in sectors, shared by weight",
	.data_size = sizeof(struct bfq_data),
	.init_queue = bfq_init_queue,
	.exit_queue = bfq_exit_queue,
	.allow_merge = bfq_allow_merge,
	.merged = pidq_merged,
	.merged_requests = bfq_merged_requests,
	.add_request = bfq_add_request,
	.dispatch = bfq_dispatch,
	.completed = bfq_completed,
	.has_work = pidq_has_work,
	.exit_process = bfq_exit_process,
	.tunables = bfq_tunables,
	.counters = bfq_counters,
};

IOSCHED_ELEVATOR(bfq_type);
