/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pidq: the per-process queues that cfq and bfq share; see pidq.h.
 */
#include <stdlib.h>

#include "pidq.h"

/* A think-time mean counts once it has this many samples. */
#define PIDQ_TTIME_MIN_SAMPLES	3

static struct pidq_data *pidq_data(struct elevator_queue *eq)
{
	return eq->elevator_data;
}

static struct elv_request *pidq_fifo_entry(struct elv_list *l)
{
	return elv_list_entry(l, struct elv_request, elv_fifo);
}

static struct pidq *pidq_rq_queue(const struct elv_request *rq)
{
	return rq->elv_priv[0];
}

/* Class NONE (never set with ionice) is best-effort, level 4. */
void pidq_prio(int ioprio, enum pidq_class *cls, int *level)
{
	int c = IOSCHED_IOPRIO_CLASS(ioprio), l = IOSCHED_IOPRIO_LEVEL(ioprio);

	*cls = elv_ioprio_class_index(ioprio);
	if (c < ELV_IOPRIO_CLASS_RT || c > ELV_IOPRIO_CLASS_IDLE)
		l = PIDQ_DEFAULT_LEVEL;
	*level = l >= 0 && l < PIDQ_LEVELS ? l : PIDQ_DEFAULT_LEVEL;
}

/* ------------------------------------------------------------------ */
/* The queues and the table of per-process ones.                       */

static void pidq_init(struct pidq *q, pid_t pid)
{
	q->node.pid = pid;
	q->sort.node = NULL;
	elv_list_init(&q->fifo);
}

/* q, zeroed, is the pooled queue of class cls and level. */
void pidq_init_pool(struct pidq_data *pd, struct pidq *q,
		    enum pidq_class cls, int level)
{
	pidq_init(q, 0);
	pd->pool[cls][level] = q;
}

/*
 * q, zeroed, is a pooled queue of the scheduler's own (bfq's groups'),
 * which pidq_allow_merge does not know.
 */
void pidq_init_queue(struct pidq *q)
{
	pidq_init(q, 0);
}

struct pidq *pidq_find_process(struct pidq_data *pd, pid_t pid)
{
	struct elv_pid_node *n = elv_pid_find(pd->procs, PIDQ_HASH_BITS, pid);

	return n != NULL ? elv_container_of(n, struct pidq, node) : NULL;
}

/*
 * A new queue for process pid: size zeroed bytes (a scheduler's queue,
 * its struct pidq first), or NULL without memory.
 */
void *pidq_new_process(struct pidq_data *pd, size_t size, pid_t pid)
{
	struct pidq *q = calloc(1, size);

	if (q == NULL)
		return NULL;
	pidq_init(q, pid);
	elv_pid_add(pd->procs, PIDQ_HASH_BITS, &q->node);
	return q;
}

/* Free a queue of pidq_new_process. */
void pidq_free_process(struct pidq_data *pd, struct pidq *q)
{
	elv_pid_del(pd->procs, PIDQ_HASH_BITS, &q->node);
	free(q);
}

/*
 * Mean think time, a moving average weighing the newest sample 1/8.  A
 * process that thinks longer than slice_idle is not worth waiting for.
 */
void pidq_think_time(const struct pidq_data *pd, struct pidq_ttime *t,
		     uint64_t now_ns)
{
	uint64_t idle = elv_ms_to_ns(pd->slice_idle), d;

	if (!t->has_end)
		return;
	d = now_ns > t->last_end_ns ? now_ns - t->last_end_ns : 0;
	if (d > 2 * idle)
		d = 2 * idle;
	if (t->ttime_samples == 0)
		t->ttime_mean_ns = d;
	else
		t->ttime_mean_ns = (7 * t->ttime_mean_ns + d) / 8;
	if (t->ttime_samples < PIDQ_TTIME_MIN_SAMPLES)
		t->ttime_samples++;
	t->idle_window = t->ttime_samples < PIDQ_TTIME_MIN_SAMPLES ||
		t->ttime_mean_ns <= idle;
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
static struct elv_request *pidq_choose_req(const struct pidq_data *pd,
				       struct elv_request *a, struct elv_request *b)
{
	uint64_t last = pd->last_position, back_max, da = 0, db = 0;
	bool wrap_a = false, wrap_b = false;
	uint64_t penalty;

	if (a == NULL || a == b)
		return b;
	if (b == NULL)
		return a;
	if (a->sync != b->sync)
		return a->sync ? a : b;

	/* KiB to sectors. */
	back_max = (uint64_t)(pd->back_seek_max < 0 ? 0 : pd->back_seek_max) *
		(1024 >> IOSCHED_SECTOR_SHIFT);
	penalty = (uint64_t)(pd->back_seek_penalty < 1 ? 1 :
			     pd->back_seek_penalty);

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
 * first request when rq is the last), the better one by pidq_choose_req.
 */
static struct elv_request *pidq_find_next_rq(const struct pidq_data *pd,
					 struct pidq *q, struct elv_request *rq)
{
	struct elv_request *prev = elv_rq_sort_prev(rq);
	struct elv_request *next = elv_rq_sort_next(rq);

	if (next == NULL && prev != NULL)
		next = elv_rq_sort_first(&q->sort);
	return pidq_choose_req(pd, prev, next);
}

/* ------------------------------------------------------------------ */
/* Requests entering and leaving a queue.                              */

void pidq_add_rq(struct pidq_data *pd, struct pidq *q, struct elv_request *rq)
{
	rq->elv_priv[0] = q;
	rq->elv_priv[1] = NULL;
	elv_rq_sort_add(&q->sort, rq);
	elv_list_add_tail(&rq->elv_fifo, &q->fifo);
	q->next_rq = pidq_choose_req(pd, q->next_rq, rq);
	pd->queued++;
	q->queued++;
}

/* rq leaves q (dispatched or merged away); true when q is empty now. */
bool pidq_remove_rq(struct pidq_data *pd, struct pidq *q,
		    struct elv_request *rq)
{
	if (q->next_rq == rq)
		q->next_rq = pidq_find_next_rq(pd, q, rq);
	elv_rq_sort_del(&q->sort, rq);
	elv_list_del(&rq->elv_fifo);
	pd->queued--;
	if (--q->queued != 0)
		return false;
	q->next_rq = NULL;
	return true;
}

/* The oldest request of q if it has waited past its FIFO expiry. */
struct elv_request *pidq_fifo_expired(const struct pidq_data *pd,
				      const struct pidq *q, uint64_t now_ns)
{
	struct elv_request *head = pidq_fifo_entry(q->fifo.next);

	if (now_ns >= head->arrival_ns +
	    elv_ms_to_ns(head->sync ? pd->fifo_expire_sync : pd->fifo_expire_async))
		return head;
	return NULL;
}

/*
 * next is being merged into rq, on the same queue (pidq_allow_merge).  rq
 * takes next's FIFO place if next is older, so the merged request does
 * not expire later than the data it carries.
 */
void pidq_merged_fifo(struct elv_request *rq, struct elv_request *next)
{
	if (next->arrival_ns >= rq->arrival_ns)
		return;
	elv_list_del(&rq->elv_fifo);
	elv_list_add(&rq->elv_fifo, &next->elv_fifo);
}

/* ------------------------------------------------------------------ */
/* Hooks.                                                              */

void pidq_exit_queue(struct elevator_queue *eq)
{
	struct pidq_data *pd = pidq_data(eq);
	unsigned i;

	/* The host only exits an empty scheduler; say so if it did not. */
	if (pd->queued != 0)
		elv_log(eq, ELV_LOG_ERR, "exit with %u requests queued",
			pd->queued);
	for (i = 0; i < 1u << PIDQ_HASH_BITS; i++)
		while (pd->procs[i] != NULL)
			pidq_free_process(pd, elv_container_of(pd->procs[i],
							       struct pidq, node));
}

/*
 * The queue a new request would join: its process's when it is
 * synchronous, else the pool of its priority (as cfq and bfq add it); NULL
 * when its process has no queue yet.
 */
static struct pidq *pidq_queue_of(struct pidq_data *pd,
				  const struct elv_request *rq)
{
	enum pidq_class cls;
	int level;

	if (rq->sync && rq->pid != 0)
		return pidq_find_process(pd, rq->pid);
	pidq_prio(rq->ioprio, &cls, &level);
	return pd->pool[cls][level];
}

/*
 * As cfq_allow_merge and cfq_allow_rq_merge: a merge stays within one
 * queue, so one process's data is not served in another's time slice,
 * and synchronous data never joins an asynchronous request, where it
 * would wait behind the writeback it has nothing to do with.
 */
bool pidq_allow_merge(struct elevator_queue *eq, const struct elv_request *rq,
		      const struct elv_request *next, enum elv_merge type)
{
	if (type == ELV_REQUEST_MERGE)
		return pidq_rq_queue(rq) == pidq_rq_queue(next);
	if (next->sync && !rq->sync)
		return false;
	return pidq_queue_of(pidq_data(eq), next) == pidq_rq_queue(rq);
}

/* A front merge moved rq's first sector: put it back in order. */
void pidq_merged(struct elevator_queue *eq, struct elv_request *rq,
		 enum elv_merge type)
{
	struct pidq *q = pidq_rq_queue(rq);

	if (type != ELV_FRONT_MERGE)
		return;
	elv_rq_sort_del(&q->sort, rq);
	elv_rq_sort_add(&q->sort, rq);
	q->next_rq = pidq_choose_req(pidq_data(eq), q->next_rq, rq);
}

bool pidq_has_work(struct elevator_queue *eq)
{
	return pidq_data(eq)->queued != 0;
}
