/*
 * cfq: Completely Fair Queueing, after the Linux 2.6 one (Jens Axboe).
 *
 * Every process gets a queue of its own for its synchronous requests (the
 * ones it waits for), and the queues take turns: the active queue owns the
 * device for a time slice whose length depends on its I/O priority, then
 * goes to the back of the line.  Asynchronous requests, and those the
 * kernel makes on its own (pid 0), are pooled in one queue per priority
 * class and level.  Within a queue requests are served in a one-way sweep
 * that tolerates short backward seeks at a penalty, and a request that has
 * waited past its FIFO expiry goes first at the start of a slice.
 *
 * Priority classes, as ionice(1) sets them: real-time queues are served
 * before best-effort ones, which are served before idle ones.  Within a
 * class the queues take turns in round robin, a higher level meaning a
 * shorter slice.  The idle class gets the device only when nobody else has
 * used it for CFQ_IDLE_DELAY_MS, and at least one request every
 * CFQ_IDLE_STARVE_MS whatever the load, so that it is never stuck forever.
 *
 * A process reading a file issues one request, waits for it, thinks a
 * little and issues the next.  Switching to another process as soon as its
 * queue is empty would turn two sequential readers into one seeking mess,
 * so when the active queue's last request completes and its process
 * usually comes back quickly (its mean think time is below slice_idle),
 * cfq keeps the slice and waits up to slice_idle for it: dispatch returns
 * NULL and asks the host for a wake-up at the end of the wait.
 *
 * Per-process queues are allocated on a process's first request and freed
 * once they hold nothing, have nothing in flight and are not active.
 * elv_priv[0] of a request points to its queue from add_request until
 * completion (the host does not touch elv_* fields), elv_priv[1] holds
 * what completion must undo.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuse-iosched/elevator.h"

/* Requests the active queue may have in flight before it must wait. */
#define CFQ_QUANTUM		8
/* FIFO expiry of sync and async requests (ms), checked once per slice. */
#define CFQ_FIFO_EXPIRE_SYNC	125
#define CFQ_FIFO_EXPIRE_ASYNC	250
/* Backward seeks up to this far (KiB) are taken, at this cost factor. */
#define CFQ_BACK_SEEK_MAX	16384
#define CFQ_BACK_SEEK_PENALTY	2
/* Slices (ms) at the middle level 4; see cfq_slice_ns for the others. */
#define CFQ_SLICE_SYNC		100
#define CFQ_SLICE_ASYNC		40
/* An async slice also ends after this many requests per level step. */
#define CFQ_SLICE_ASYNC_RQ	2
/* How long (ms) to wait for a sync queue's process to issue again. */
#define CFQ_SLICE_IDLE		8

/* Each level away from 4 changes a slice by a SCALEth of its base. */
#define CFQ_SLICE_SCALE		5
#define CFQ_LEVELS		IOSCHED_IOPRIO_LEVELS
#define CFQ_DEFAULT_LEVEL	4

/*
 * The idle class may start only after the other classes have been quiet
 * (nothing queued or in flight) for this long (ms), as the kernel's
 * CFQ_IDLE_GRACE: a best-effort process pausing between two reads does not
 * let the idle class in.
 */
#define CFQ_IDLE_DELAY_MS	100
/*
 * But the idle class is never starved for good: once it has waited this
 * long (ms) since it last got a request served, the current slice is cut
 * short (the rest is kept for later) and one idle request goes out.  Under
 * full load an idle-class process thus gets a request every 250 ms, enough
 * to make progress, too little to matter to anyone else.
 */
#define CFQ_IDLE_STARVE_MS	250

/* A think-time mean counts once it has this many samples. */
#define CFQ_TTIME_MIN_SAMPLES	3

/* Per-process queues are found by pid in a hash of this many buckets. */
#define CFQ_HASH_BITS		6
#define CFQ_HASH_SIZE		(1u << CFQ_HASH_BITS)

/* The host's limit on a merged request, not offered beyond it. */
#define CFQ_MAX_MERGE_SECTORS	2048

#define CFQ_NS_PER_MS		1000000ULL

/* Service classes, in the order they are served. */
enum cfq_class {
	CFQ_RT = 0,
	CFQ_BE = 1,
	CFQ_IDLE = 2,
	CFQ_NR_CLASSES = 3,
};

/* elv_priv[1] of a dispatched request: what it counts in. */
#define CFQ_RQ_SYNC_FLIGHT	0x1u	/* cd->sync_flight */
#define CFQ_RQ_NONIDLE_FLIGHT	0x2u	/* cd->nonidle_flight */

struct cfq_queue {
	struct elv_list rr;		/* on cd->rr[cls] while busy, not active */
	struct elv_list hash;		/* per-process queues: in cd->hash */
	struct elv_list sort;		/* queued requests by sector */
	struct elv_list fifo;		/* queued requests by arrival */
	struct request *next_rq;	/* the next stop of the sweep */

	pid_t pid;			/* 0 for the pooled queues */
	enum cfq_class cls;
	int level;			/* 0 (highest) to 7 */
	bool per_process;		/* malloc'd; sync: may be idled on */

	unsigned queued;		/* requests held */
	unsigned dispatched;		/* requests in flight */

	/* The slice, while active. */
	uint64_t slice_end;		/* 0 until its first dispatch */
	uint64_t slice_resid;		/* left over from a preempted slice */
	unsigned slice_dispatch;	/* requests dispatched in this slice */
	bool fifo_checked;		/* FIFO looked at in this slice */

	/* Think time: from a completion to the process's next request. */
	bool idle_window;		/* worth idling for */
	bool has_end;
	uint64_t last_end_ns;
	uint64_t ttime_mean_ns;
	unsigned ttime_samples;
};

struct cfq_data {
	/*
	 * Tunables first: the host sets them before init_queue and may
	 * change them between any two calls, so they are read when used.
	 */
	int64_t quantum;		/* requests */
	int64_t fifo_expire_sync;	/* ms */
	int64_t fifo_expire_async;	/* ms */
	int64_t back_seek_max;		/* KiB */
	int64_t back_seek_penalty;	/* factor */
	int64_t slice_sync;		/* ms */
	int64_t slice_async;		/* ms */
	int64_t slice_async_rq;		/* requests */
	int64_t slice_idle;		/* ms */

	/* Busy queues waiting for their slice, per class, served in turn. */
	struct elv_list rr[CFQ_NR_CLASSES];
	unsigned busy;			/* queues holding requests */
	unsigned busy_class[CFQ_NR_CLASSES];	/* the same, per class */

	struct elv_list hash[CFQ_HASH_SIZE];	/* per-process queues */
	struct cfq_queue pool[CFQ_NR_CLASSES][CFQ_LEVELS];

	/* The queue owning the slice, and whether it is being waited for. */
	struct cfq_queue *active;
	bool idling;
	uint64_t idle_until;

	unsigned queued;		/* requests held, all queues */
	unsigned sync_flight;		/* in flight from per-process queues */
	unsigned nonidle_flight;	/* in flight from RT and BE queues */
	uint64_t last_position;		/* end sector of the last dispatch */
	bool nonidle_seen;		/* an RT or BE request completed */
	uint64_t last_nonidle_end;	/* when it last happened */
	uint64_t idle_stamp;		/* idle class last served, or waiting */
};

/* ------------------------------------------------------------------ */
/* Helpers.                                                            */

static struct cfq_data *cfq_data(struct elevator_queue *eq)
{
	return eq->elevator_data;
}

static struct request *cfq_sort_entry(struct elv_list *l)
{
	return elv_list_entry(l, struct request, elv_sort);
}

static struct request *cfq_fifo_entry(struct elv_list *l)
{
	return elv_list_entry(l, struct request, elv_fifo);
}

static struct cfq_queue *cfq_rq_queue(const struct request *rq)
{
	return rq->elv_priv[0];
}

static uint64_t cfq_ms(int64_t ms)
{
	return (uint64_t)(ms < 0 ? 0 : ms) * CFQ_NS_PER_MS;
}

/* Class NONE (never set with ionice) is best-effort, level 4. */
static void cfq_prio(int ioprio, enum cfq_class *cls, int *level)
{
	int c = IOSCHED_IOPRIO_CLASS(ioprio), l = IOSCHED_IOPRIO_LEVEL(ioprio);

	switch (c) {
	case IOPRIO_CLASS_RT:
		*cls = CFQ_RT;
		break;
	case IOPRIO_CLASS_IDLE:
		*cls = CFQ_IDLE;
		break;
	case IOPRIO_CLASS_BE:
		*cls = CFQ_BE;
		break;
	default:
		*cls = CFQ_BE;
		l = CFQ_DEFAULT_LEVEL;
		break;
	}
	*level = l >= 0 && l < CFQ_LEVELS ? l : CFQ_DEFAULT_LEVEL;
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
		(CFQ_DEFAULT_LEVEL - cfqq->level);

	return cfq_ms(ms < 1 ? 1 : ms);
}

/* Requests an async slice may dispatch: more for higher levels. */
static unsigned cfq_async_max_rq(const struct cfq_data *cd,
				 const struct cfq_queue *cfqq)
{
	int64_t base = cd->slice_async_rq;

	return (unsigned)(2 * (base + base * (CFQ_LEVELS - 1 - cfqq->level)));
}

static unsigned cfq_hash_key(pid_t pid)
{
	return ((uint32_t)pid * 0x9e3779b9u) >> (32 - CFQ_HASH_BITS);
}

static void cfq_queue_init(struct cfq_queue *cfqq, pid_t pid,
			   enum cfq_class cls, int level, bool per_process)
{
	elv_list_init(&cfqq->rr);
	elv_list_init(&cfqq->hash);
	elv_list_init(&cfqq->sort);
	elv_list_init(&cfqq->fifo);
	cfqq->pid = pid;
	cfqq->cls = cls;
	cfqq->level = level;
	cfqq->per_process = per_process;
	/* A new process is assumed to come back until it proves otherwise. */
	cfqq->idle_window = per_process;
}

static struct cfq_queue *cfq_find_process(struct cfq_data *cd, pid_t pid)
{
	struct elv_list *head = &cd->hash[cfq_hash_key(pid)], *pos;
	struct cfq_queue *cfqq;

	elv_list_for_each(pos, head) {
		cfqq = elv_list_entry(pos, struct cfq_queue, hash);
		if (cfqq->pid == pid)
			return cfqq;
	}
	return NULL;
}

/* The queue rq belongs on, if it exists already (NULL otherwise). */
static struct cfq_queue *cfq_find_queue(struct cfq_data *cd,
					const struct request *rq)
{
	enum cfq_class cls;
	int level;

	if (rq->sync && rq->pid != 0)
		return cfq_find_process(cd, rq->pid);
	cfq_prio(rq->ioprio, &cls, &level);
	return &cd->pool[cls][level];
}

/* Free a per-process queue nobody needs any more. */
static void cfq_put_queue(struct cfq_data *cd, struct cfq_queue *cfqq)
{
	if (!cfqq->per_process || cfqq->queued != 0 || cfqq->dispatched != 0 ||
	    cfqq == cd->active)
		return;
	elv_list_del(&cfqq->hash);
	free(cfqq);
}

/* A process's priority changed (ionice -p): move its queue. */
static void cfq_set_prio(struct cfq_data *cd, struct cfq_queue *cfqq,
			 enum cfq_class cls, int level)
{
	if (cfqq->queued != 0 && cfqq->cls != cls) {
		cd->busy_class[cfqq->cls]--;
		cd->busy_class[cls]++;
	}
	if (!elv_list_empty(&cfqq->rr)) {
		elv_list_del(&cfqq->rr);
		elv_list_add_tail(&cfqq->rr, &cd->rr[cls]);
	}
	cfqq->cls = cls;
	cfqq->level = level;
}

/*
 * Mean think time, a moving average weighing the newest sample 1/8.  A
 * process that thinks longer than slice_idle is not worth waiting for.
 */
static void cfq_update_think_time(struct cfq_data *cd,
				  struct cfq_queue *cfqq, uint64_t now_ns)
{
	uint64_t idle = cfq_ms(cd->slice_idle), t;

	if (!cfqq->has_end)
		return;
	t = now_ns > cfqq->last_end_ns ? now_ns - cfqq->last_end_ns : 0;
	if (t > 2 * idle)
		t = 2 * idle;
	if (cfqq->ttime_samples == 0)
		cfqq->ttime_mean_ns = t;
	else
		cfqq->ttime_mean_ns = (7 * cfqq->ttime_mean_ns + t) / 8;
	if (cfqq->ttime_samples < CFQ_TTIME_MIN_SAMPLES)
		cfqq->ttime_samples++;
	cfqq->idle_window = cfqq->ttime_samples < CFQ_TTIME_MIN_SAMPLES ||
		cfqq->ttime_mean_ns <= idle;
}

/* ------------------------------------------------------------------ */
/* Choosing the next request within a queue.                           */

/*
 * Which of two requests should follow the last dispatch: sync before
 * async, then the shorter seek, forward seeks costing their distance and
 * backward ones within back_seek_max costing back_seek_penalty times
 * theirs.  A request further behind than that would need the sweep to
 * wrap around: it loses to any other, and of two such, the one furthest
 * back goes first (one long backward seek, then forward again).
 */
static struct request *cfq_choose_req(const struct cfq_data *cd,
				      struct request *a, struct request *b)
{
	uint64_t last = cd->last_position, back_max, da = 0, db = 0;
	bool wrap_a = false, wrap_b = false;
	uint64_t penalty;

	if (a == NULL || a == b)
		return b;
	if (b == NULL)
		return a;
	if (a->sync != b->sync)
		return a->sync ? a : b;

	/* KiB to sectors. */
	back_max = (uint64_t)(cd->back_seek_max < 0 ? 0 : cd->back_seek_max) *
		(1024 >> IOSCHED_SECTOR_SHIFT);
	penalty = (uint64_t)(cd->back_seek_penalty < 1 ? 1 :
			     cd->back_seek_penalty);

	if (a->sector >= last)
		da = a->sector - last;
	else if (a->sector + back_max >= last)
		da = (last - a->sector) * penalty;
	else
		wrap_a = true;

	if (b->sector >= last)
		db = b->sector - last;
	else if (b->sector + back_max >= last)
		db = (last - b->sector) * penalty;
	else
		wrap_b = true;

	if (wrap_a != wrap_b)
		return wrap_a ? b : a;
	if (wrap_a)
		return a->sector <= b->sector ? a : b;
	if (da != db)
		return da < db ? a : b;
	return a->sector >= b->sector ? a : b;
}

/*
 * The next stop once rq is gone: its neighbours in sector order (the
 * first request when rq is the last), the better one by cfq_choose_req.
 */
static struct request *cfq_find_next_rq(struct cfq_data *cd,
					struct cfq_queue *cfqq,
					struct request *rq)
{
	struct request *prev = NULL, *next = NULL;

	if (rq->elv_sort.prev != &cfqq->sort)
		prev = cfq_sort_entry(rq->elv_sort.prev);
	if (rq->elv_sort.next != &cfqq->sort)
		next = cfq_sort_entry(rq->elv_sort.next);
	else if (cfqq->sort.next != &rq->elv_sort)
		next = cfq_sort_entry(cfqq->sort.next);
	return cfq_choose_req(cd, prev, next);
}

/* Insert rq in sector order, walking back from the tail (streams). */
static void cfq_sort_add(struct cfq_queue *cfqq, struct request *rq)
{
	struct elv_list *pos;

	for (pos = cfqq->sort.prev; pos != &cfqq->sort; pos = pos->prev)
		if (cfq_sort_entry(pos)->sector <= rq->sector)
			break;
	elv_list_add(&rq->elv_sort, pos);
}

/* ------------------------------------------------------------------ */
/* Queues entering and leaving the service lists.                      */

static void cfq_rq_added(struct cfq_data *cd, struct cfq_queue *cfqq,
			 uint64_t now_ns)
{
	cd->queued++;
	if (cfqq->queued++ != 0)
		return;
	cd->busy++;
	/* The idle class starts waiting now, if it was not already. */
	if (cd->busy_class[cfqq->cls]++ == 0 && cfqq->cls == CFQ_IDLE)
		cd->idle_stamp = now_ns;
	if (cfqq != cd->active)
		elv_list_add_tail(&cfqq->rr, &cd->rr[cfqq->cls]);
}

/* rq leaves its queue (dispatched or merged away). */
static void cfq_remove_rq(struct cfq_data *cd, struct cfq_queue *cfqq,
			  struct request *rq)
{
	if (cfqq->next_rq == rq)
		cfqq->next_rq = cfq_find_next_rq(cd, cfqq, rq);
	elv_list_del(&rq->elv_sort);
	elv_list_del(&rq->elv_fifo);
	cd->queued--;
	if (--cfqq->queued != 0)
		return;
	cfqq->next_rq = NULL;
	cd->busy--;
	cd->busy_class[cfqq->cls]--;
	elv_list_del(&cfqq->rr);
}

static void cfq_activate(struct cfq_data *cd, struct cfq_queue *cfqq)
{
	elv_list_del(&cfqq->rr);
	cd->active = cfqq;
	cd->idling = false;
	cfqq->slice_end = 0;
	cfqq->slice_dispatch = 0;
	cfqq->fifo_checked = false;
}

/*
 * End the active queue's slice.  A preempted queue keeps what was left of
 * its slice and goes to the front of its class, to finish its turn first;
 * otherwise it goes to the back.
 */
static void cfq_expire(struct cfq_data *cd, uint64_t now_ns, bool preempted)
{
	struct cfq_queue *cfqq = cd->active;

	if (cfqq == NULL)
		return;
	cd->active = NULL;
	cd->idling = false;
	cfqq->slice_resid = 0;
	if (preempted && cfqq->slice_end > now_ns)
		cfqq->slice_resid = cfqq->slice_end - now_ns;
	cfqq->slice_end = 0;
	if (cfqq->queued == 0) {
		cfq_put_queue(cd, cfqq);
		return;
	}
	if (preempted)
		elv_list_add(&cfqq->rr, &cd->rr[cfqq->cls]);
	else
		elv_list_add_tail(&cfqq->rr, &cd->rr[cfqq->cls]);
}

static bool cfq_idle_starved(const struct cfq_data *cd, uint64_t now_ns)
{
	return cd->busy_class[CFQ_IDLE] != 0 &&
		now_ns >= cd->idle_stamp + cfq_ms(CFQ_IDLE_STARVE_MS);
}

static struct cfq_queue *cfq_rr_first(struct cfq_data *cd, enum cfq_class c)
{
	if (elv_list_empty(&cd->rr[c]))
		return NULL;
	return elv_list_first(&cd->rr[c], struct cfq_queue, rr);
}

/*
 * The queue to get the next slice: a starved idle class first, then
 * real-time, best-effort, and the idle class once the others have been
 * quiet for CFQ_IDLE_DELAY_MS.
 */
static struct cfq_queue *cfq_next_queue(struct elevator_queue *eq,
					struct cfq_data *cd, uint64_t now_ns)
{
	struct cfq_queue *cfqq;
	uint64_t at;

	if (cfq_idle_starved(cd, now_ns) &&
	    (cfqq = cfq_rr_first(cd, CFQ_IDLE)) != NULL)
		return cfqq;
	if ((cfqq = cfq_rr_first(cd, CFQ_RT)) != NULL ||
	    (cfqq = cfq_rr_first(cd, CFQ_BE)) != NULL)
		return cfqq;
	if ((cfqq = cfq_rr_first(cd, CFQ_IDLE)) == NULL)
		return NULL;
	/* An RT or BE completion will call dispatch again. */
	if (cd->nonidle_flight != 0)
		return NULL;
	at = cd->last_nonidle_end + cfq_ms(CFQ_IDLE_DELAY_MS);
	if (!cd->nonidle_seen || now_ns >= at)
		return cfqq;
	if (at > cd->idle_stamp + cfq_ms(CFQ_IDLE_STARVE_MS))
		at = cd->idle_stamp + cfq_ms(CFQ_IDLE_STARVE_MS);
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
		if (cfqq->cls != CFQ_IDLE && cfq_idle_starved(cd, now_ns)) {
			cfq_expire(cd, now_ns, true);
			goto new_queue;
		}
		if (cfqq->slice_end != 0 && now_ns >= cfqq->slice_end)
			goto expire;
		if (cfqq->queued != 0) {
			cd->idling = false;
			return cfqq;
		}
		if (cd->idling) {
			if (now_ns < cd->idle_until) {
				/* The timer may have fired early: ask again. */
				elv_wakeup_at(eq, cd->idle_until);
				return NULL;
			}
			goto expire;
		}
		/* Its completion decides whether to idle. */
		if (cfqq->dispatched != 0 && cfqq->idle_window &&
		    cd->slice_idle > 0)
			return NULL;
expire:
		cfq_expire(cd, now_ns, false);
	}
new_queue:
	cfqq = cfq_next_queue(eq, cd, now_ns);
	if (cfqq != NULL)
		cfq_activate(cd, cfqq);
	return cfqq;
}

/* Hand rq of the active queue over to the host. */
static struct request *cfq_take(struct cfq_data *cd, struct cfq_queue *cfqq,
				struct request *rq, uint64_t now_ns)
{
	uintptr_t flags = 0;

	cd->last_position = elv_rq_end_sector(rq);
	cfq_remove_rq(cd, cfqq, rq);
	cfqq->dispatched++;
	cfqq->slice_dispatch++;
	if (cfqq->per_process) {
		cd->sync_flight++;
		flags |= CFQ_RQ_SYNC_FLIGHT;
	}
	if (cfqq->cls != CFQ_IDLE) {
		cd->nonidle_flight++;
		flags |= CFQ_RQ_NONIDLE_FLIGHT;
	} else {
		cd->idle_stamp = now_ns;
	}
	rq->elv_priv[1] = (void *)flags;
	return rq;
}

/*
 * Draining: no idling, no quantum, no class delays.  Whatever is queued
 * goes out, the active queue first.
 */
static struct request *cfq_dispatch_forced(struct cfq_data *cd,
					   uint64_t now_ns)
{
	struct cfq_queue *cfqq = cd->active;
	int c;

	cd->idling = false;
	if (cfqq == NULL || cfqq->queued == 0) {
		cfq_expire(cd, now_ns, false);
		for (c = 0, cfqq = NULL; c < CFQ_NR_CLASSES && !cfqq; c++)
			cfqq = cfq_rr_first(cd, (enum cfq_class)c);
		if (cfqq == NULL)
			return NULL;
		cfq_activate(cd, cfqq);
	}
	return cfq_take(cd, cfqq, cfqq->next_rq, now_ns);
}

/* ------------------------------------------------------------------ */
/* Hooks.                                                              */

static int cfq_init_queue(struct elevator_queue *eq)
{
	struct cfq_data *cd = cfq_data(eq);
	unsigned i;
	int c, l;

	/* The data arrives zeroed with the tunables set. */
	for (c = 0; c < CFQ_NR_CLASSES; c++) {
		elv_list_init(&cd->rr[c]);
		for (l = 0; l < CFQ_LEVELS; l++)
			cfq_queue_init(&cd->pool[c][l], 0, (enum cfq_class)c,
				       l, false);
	}
	for (i = 0; i < CFQ_HASH_SIZE; i++)
		elv_list_init(&cd->hash[i]);
	return 0;
}

static void cfq_exit_queue(struct elevator_queue *eq)
{
	struct cfq_data *cd = cfq_data(eq);
	struct cfq_queue *cfqq;
	unsigned i;

	/* The host only exits an empty scheduler; say so if it did not. */
	if (cd->queued != 0)
		elv_log(eq, ELV_LOG_ERR, "exit with %u requests queued",
			cd->queued);
	for (i = 0; i < CFQ_HASH_SIZE; i++) {
		while (!elv_list_empty(&cd->hash[i])) {
			cfqq = elv_list_first(&cd->hash[i], struct cfq_queue,
					      hash);
			elv_list_del(&cfqq->hash);
			free(cfqq);
		}
	}
	cd->active = NULL;
}

/*
 * Offer a queued request of the same queue that rq directly precedes in
 * the same file.  The host finds back merges itself.  A process's queue is
 * short, so a linear scan is cheap.
 */
static enum elv_merge cfq_merge(struct elevator_queue *eq,
				struct request **found,
				const struct request *rq)
{
	struct cfq_queue *cfqq = cfq_find_queue(cfq_data(eq), rq);
	struct elv_list *pos;
	struct request *cand;

	if (cfqq == NULL)
		return ELV_NO_MERGE;
	elv_list_for_each(pos, &cfqq->sort) {
		cand = cfq_sort_entry(pos);
		if (cand == rq || cand->file != rq->file ||
		    cand->dir != rq->dir ||
		    rq->offset + rq->bytes != cand->offset ||
		    cand->nr_sectors + rq->nr_sectors > CFQ_MAX_MERGE_SECTORS)
			continue;
		*found = cand;
		return ELV_FRONT_MERGE;
	}
	return ELV_NO_MERGE;
}

/* A front merge moved rq's first sector: put it back in order. */
static void cfq_merged(struct elevator_queue *eq, struct request *rq,
		       enum elv_merge type)
{
	struct cfq_data *cd = cfq_data(eq);
	struct cfq_queue *cfqq = cfq_rq_queue(rq);

	if (type != ELV_FRONT_MERGE)
		return;
	elv_list_del(&rq->elv_sort);
	cfq_sort_add(cfqq, rq);
	cfqq->next_rq = cfq_choose_req(cd, cfqq->next_rq, rq);
}

/*
 * next was merged into rq.  rq takes next's FIFO place if next is older,
 * so the merged request does not expire later than the data it carries.
 * The host merges by file offset, so the two may sit on different queues.
 */
static void cfq_merged_requests(struct elevator_queue *eq, struct request *rq,
				struct request *next)
{
	struct cfq_data *cd = cfq_data(eq);
	struct cfq_queue *rq_q = cfq_rq_queue(rq), *next_q = cfq_rq_queue(next);
	struct elv_list *pos;

	if (next->arrival_ns < rq->arrival_ns) {
		elv_list_del(&rq->elv_fifo);
		if (rq_q == next_q) {
			elv_list_add(&rq->elv_fifo, &next->elv_fifo);
		} else {
			elv_list_for_each(pos, &rq_q->fifo)
				if (cfq_fifo_entry(pos)->arrival_ns >
				    next->arrival_ns)
					break;
			elv_list_add_tail(&rq->elv_fifo, pos);
		}
	}
	cfq_remove_rq(cd, next_q, next);
	cfq_put_queue(cd, next_q);
}

/*
 * Should cfqq, which just got a request, take the device from the active
 * queue at once?  A higher class should, and a process's sync queue should
 * from an async one, as in the kernel; the idle class never does.
 */
static bool cfq_should_preempt(const struct cfq_data *cd,
			       const struct cfq_queue *cfqq)
{
	const struct cfq_queue *active = cd->active;

	if (active == NULL || active == cfqq || cfqq->cls == CFQ_IDLE)
		return false;
	if (active->cls != cfqq->cls)
		return cfqq->cls < active->cls;
	return cfqq->per_process && !active->per_process;
}

static void cfq_add_request(struct elevator_queue *eq, struct request *rq,
			    uint64_t now_ns)
{
	struct cfq_data *cd = cfq_data(eq);
	struct cfq_queue *cfqq = NULL;
	enum cfq_class cls;
	int level;

	cfq_prio(rq->ioprio, &cls, &level);
	if (rq->sync && rq->pid != 0) {
		cfqq = cfq_find_process(cd, rq->pid);
		if (cfqq == NULL) {
			/* No memory: the pool serves it, unfairly but safely. */
			cfqq = malloc(sizeof *cfqq);
			if (cfqq != NULL) {
				*cfqq = (struct cfq_queue){ .pid = 0 };
				cfq_queue_init(cfqq, rq->pid, cls, level, true);
				elv_list_add(&cfqq->hash,
					     &cd->hash[cfq_hash_key(rq->pid)]);
			}
		} else {
			if (cfqq->cls != cls || cfqq->level != level)
				cfq_set_prio(cd, cfqq, cls, level);
			cfq_update_think_time(cd, cfqq, now_ns);
		}
	}
	if (cfqq == NULL)
		cfqq = &cd->pool[cls][level];

	rq->elv_priv[0] = cfqq;
	rq->elv_priv[1] = NULL;
	cfq_sort_add(cfqq, rq);
	elv_list_add_tail(&rq->elv_fifo, &cfqq->fifo);
	cfq_rq_added(cd, cfqq, now_ns);
	cfqq->next_rq = cfq_choose_req(cd, cfqq->next_rq, rq);

	if (cfqq == cd->active) {
		/* The process came back within the wait: serve it. */
		cd->idling = false;
	} else if (cfq_should_preempt(cd, cfqq)) {
		cfq_expire(cd, now_ns, true);
		/* Ahead of the queue it preempted, if in the same class. */
		elv_list_del(&cfqq->rr);
		elv_list_add(&cfqq->rr, &cd->rr[cfqq->cls]);
	}
}

static struct request *cfq_dispatch(struct elevator_queue *eq, uint64_t now_ns,
				    bool force)
{
	struct cfq_data *cd = cfq_data(eq);
	struct cfq_queue *cfqq;
	struct request *rq = NULL, *head;
	unsigned max;
	bool others;

	if (cd->queued == 0)
		return NULL;
	if (force)
		return cfq_dispatch_forced(cd, now_ns);

	cfqq = cfq_select_queue(eq, cd, now_ns);
	if (cfqq == NULL || cfqq->queued == 0)
		return NULL;

	/*
	 * Async work waits while sync requests are in flight: they are what
	 * processes wait for, and the async queue gets the device after.
	 */
	if (!cfqq->per_process && cd->sync_flight != 0)
		return NULL;

	/* At most quantum in flight, or one for the idle class. */
	max = cfqq->cls == CFQ_IDLE ? 1 :
		(unsigned)(cd->quantum < 1 ? 1 : cd->quantum);
	if (cfqq->dispatched >= max) {
		if (cfqq->cls == CFQ_IDLE || cd->busy > 1)
			return NULL;
		/* Alone: a deeper queue does no harm to anyone. */
		if (cfqq->dispatched >= 4 * max)
			return NULL;
	}

	/* An expired request goes first, looked for once per slice. */
	if (!cfqq->fifo_checked) {
		cfqq->fifo_checked = true;
		head = cfq_fifo_entry(cfqq->fifo.next);
		if (now_ns >= head->arrival_ns +
		    cfq_ms(head->sync ? cd->fifo_expire_sync :
			   cd->fifo_expire_async))
			rq = head;
	}
	if (rq == NULL)
		rq = cfqq->next_rq;

	/* The slice runs from the first dispatch. */
	if (cfqq->slice_end == 0) {
		cfqq->slice_end = now_ns + (cfqq->slice_resid != 0 ?
			cfqq->slice_resid : cfq_slice_ns(cd, cfqq));
		cfqq->slice_resid = 0;
	}
	cfq_take(cd, cfqq, rq, now_ns);

	/*
	 * With others waiting, an async slice also ends after its share of
	 * requests, and the idle class gets one request per turn.
	 */
	others = cd->busy > (cfqq->queued != 0 ? 1u : 0u);
	if (others && (cfqq->cls == CFQ_IDLE || (!cfqq->per_process &&
	    cfqq->slice_dispatch >= cfq_async_max_rq(cd, cfqq))))
		cfq_expire(cd, now_ns, false);
	return rq;
}

/*
 * Completion: the moment to decide what the active queue does next.  When
 * its last request is done and its process usually returns within
 * slice_idle, wait for it (but not past the slice).
 */
static void cfq_completed(struct elevator_queue *eq, struct request *rq,
			  uint64_t now_ns)
{
	struct cfq_data *cd = cfq_data(eq);
	struct cfq_queue *cfqq = cfq_rq_queue(rq);
	uintptr_t flags = (uintptr_t)rq->elv_priv[1];

	cfqq->dispatched--;
	if (flags & CFQ_RQ_SYNC_FLIGHT)
		cd->sync_flight--;
	if (flags & CFQ_RQ_NONIDLE_FLIGHT) {
		cd->nonidle_flight--;
		cd->nonidle_seen = true;
		cd->last_nonidle_end = now_ns;
	}
	if (cfqq->per_process) {
		cfqq->has_end = true;
		cfqq->last_end_ns = now_ns;
	}

	if (cfqq != cd->active) {
		cfq_put_queue(cd, cfqq);
		return;
	}
	if (cfqq->cls == CFQ_IDLE ||
	    (cfqq->slice_end != 0 && now_ns >= cfqq->slice_end)) {
		cfq_expire(cd, now_ns, false);
		return;
	}
	if (cfqq->queued == 0 && cfqq->dispatched == 0 && cfqq->per_process &&
	    cfqq->idle_window && cd->slice_idle > 0) {
		cd->idling = true;
		cd->idle_until = now_ns + cfq_ms(cd->slice_idle);
		if (cfqq->slice_end != 0 && cd->idle_until > cfqq->slice_end)
			cd->idle_until = cfqq->slice_end;
		elv_wakeup_at(eq, cd->idle_until);
	}
}

static bool cfq_has_work(struct elevator_queue *eq)
{
	return cfq_data(eq)->queued != 0;
}

/* ------------------------------------------------------------------ */
/* Tunables, shown and set under .control/iosched/.                    */

static const struct elv_tunable cfq_tunables[] = {
	ELV_TUNABLE(struct cfq_data, quantum, CFQ_QUANTUM, 1, 1024, "",
		    "requests a queue may have in flight in its slice"),
	ELV_TUNABLE(struct cfq_data, fifo_expire_sync, CFQ_FIFO_EXPIRE_SYNC,
		    0, 3600000, "ms",
		    "age at which a sync request goes first in its slice"),
	ELV_TUNABLE(struct cfq_data, fifo_expire_async, CFQ_FIFO_EXPIRE_ASYNC,
		    0, 3600000, "ms",
		    "age at which an async request goes first in its slice"),
	ELV_TUNABLE(struct cfq_data, back_seek_max, CFQ_BACK_SEEK_MAX,
		    0, 1073741824, "KiB",
		    "longest backward seek taken within a queue"),
	ELV_TUNABLE(struct cfq_data, back_seek_penalty, CFQ_BACK_SEEK_PENALTY,
		    1, 1000, "",
		    "cost of a backward seek relative to a forward one"),
	ELV_TUNABLE(struct cfq_data, slice_sync, CFQ_SLICE_SYNC, 1, 60000,
		    "ms", "slice of a process's queue at level 4"),
	ELV_TUNABLE(struct cfq_data, slice_async, CFQ_SLICE_ASYNC, 1, 60000,
		    "ms", "slice of an async queue at level 4"),
	ELV_TUNABLE(struct cfq_data, slice_async_rq, CFQ_SLICE_ASYNC_RQ,
		    1, 1024, "",
		    "async requests per slice, per level below 8, times 2"),
	ELV_TUNABLE(struct cfq_data, slice_idle, CFQ_SLICE_IDLE, 0, 1000,
		    "ms", "wait for a process to issue again (0: never)"),
	{ .name = NULL },
};

/* ------------------------------------------------------------------ */
/* The scheduler and its registration.                                 */

static const struct elevator_type cfq_type = {
	.abi_version = IOSCHED_ABI_VERSION,
	.struct_size = sizeof(struct elevator_type),
	.name = "cfq",
	.description = "per-process queues in fair time slices, by priority",
	.data_size = sizeof(struct cfq_data),
	.ops = {
		.init_queue = cfq_init_queue,
		.exit_queue = cfq_exit_queue,
		.merge = cfq_merge,
		.merged = cfq_merged,
		.merged_requests = cfq_merged_requests,
		.add_request = cfq_add_request,
		.dispatch = cfq_dispatch,
		.completed = cfq_completed,
		.has_work = cfq_has_work,
	},
	.tunables = cfq_tunables,
};

IOSCHED_ELEVATOR(cfq_type);
