/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The request queue: where ios wait between the FUSE session threads that
 * submit them and the dispatch workers that perform them.
 *
 * Submission merges an io into a queued one of the same file, direction and
 * backing fd when they touch, as block/elevator.c does: back merges found
 * through a hash of queued ios by end offset, front merges through one by
 * start offset, each allowed by the scheduler's allow_merge; a grown io may
 * then absorb its queued neighbour.  Otherwise it hands the io to the
 * elevator, waiting while its direction is full (nr_requests, or the
 * scheduler's limit_depth for this io) or the queue is frozen for a
 * scheduler switch.  Workers take what the
 * elevator dispatches, and so may a submitter right after submitting
 * (queue_submit_dispatch); completion gives the slot back.
 *
 * Everything in struct queue is protected by its lock.  The elevator
 * instance may only be replaced while the queue is frozen and empty, so an
 * io is always completed by the instance that dispatched it.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse-iosched.h"

#define QUEUE_HASH_BITS 8
#define QUEUE_HASH_SIZE (1u << QUEUE_HASH_BITS)

/* The two merge hashes of queued ios, by end and by start offset. */
enum queue_hash {
	QUEUE_BY_END = 0,
	QUEUE_BY_START = 1,
	QUEUE_NR_HASHES = 2,
};

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t submit_cv[2];	/* submitters, per direction: full
					 * or frozen */
	pthread_cond_t work_cv;		/* workers: maybe something to do */
	pthread_cond_t idle_cv;		/* freezer: queue became empty */
	/* Told, with work_cv, when a dispatcher may find work (uring.c's
	 * ring thread, which waits on its ring, not on work_cv). */
	void (*work)(void *arg);
	void *work_arg;

	struct elevator_queue *eq;	/* the active scheduler instance */
	unsigned nr_requests;		/* limit on nr_held[dir], each dir */
	unsigned nr_queued;		/* ios held by the elevator */
	unsigned nr_in_flight;		/* ios dispatched, not done */
	unsigned nr_held[2];		/* queued + in flight, per direction */
	bool frozen;			/* a switch is draining the queue */
	bool stopping;			/* shutting down: drain, then end */
	uint64_t wakeup_ns;		/* earliest wake-up armed, 0 if none */
	struct io *hash[QUEUE_NR_HASHES][QUEUE_HASH_SIZE];	/* queued ios */
	struct stats stats;
	uint64_t depth_since_ns;	/* stats.busy_ns/depth_ns cover until */

	/* Set at creation, read-only after. */
	struct queue_params p;
};

static uint64_t queue_now(struct queue *q)
{
	return q->p.clock(q->p.clock_arg);
}

static uint64_t queue_clock_default(void *arg)
{
	return clock_now_ns();
}

/*
 * Before the number of ios queued or in flight changes: account the time
 * since the last change at the old number (io_ticks, time_in_queue).
 */
static void do_queue_account(struct queue *q, uint64_t now)
{
	unsigned depth = q->nr_queued + q->nr_in_flight;
	uint64_t dt;

	if (now <= q->depth_since_ns)
		return;	/* the virtual clock of tests may stand still */
	dt = now - q->depth_since_ns;
	if (depth > 0) {
		q->stats.busy_ns += dt;
		q->stats.depth_ns += dt * depth;
	}
	q->depth_since_ns = now;
}

/* ------------------------------------------------------------------ */
/* Services the host offers to schedulers (struct elevator_host).      */

static void queue_host_wakeup_at(struct elevator_queue *eq, uint64_t at_ns)
{
	struct queue *q = eq->host_data;

	/* One timer serves all requests: keep the earliest. */
	if (q->wakeup_ns != 0 && q->wakeup_ns <= at_ns)
		return;
	q->wakeup_ns = at_ns;
	if (q->p.wakeup_at != NULL)
		q->p.wakeup_at(q->p.wakeup_arg, at_ns);
}

static void __attribute__((format(printf, 3, 4)))
queue_host_log(struct elevator_queue *eq, enum elv_log_level level,
	       const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	/* A module may log from every request: all but debug are limited. */
	if (level >= ELV_LOG_DEBUG)
		log_msg((int)level, "%s: %s", eq->type->name, line);
	else
		log_ratelimited((int)level, "%s: %s", eq->type->name, line);
}

/* The root group alone, for a host that does not tell groups apart. */
static int queue_host_cgroup_path(struct elevator_queue *eq, uint64_t cgroup,
				  char *buf, size_t len)
{
	struct queue *q = eq->host_data;

	if (q->p.cgroup_path != NULL)
		return q->p.cgroup_path(q->p.cgroup_path_arg, cgroup, buf,
					 len);
	if (cgroup != 0)
		return -ENOENT;
	if (len < 2)
		return -ERANGE;
	memcpy(buf, "/", 2);
	return 1;
}

static uint32_t queue_host_cgroup_weight(struct elevator_queue *eq,
					 uint64_t cgroup)
{
	struct queue *q = eq->host_data;
	uint32_t w;

	if (q->p.cgroup_weight == NULL)
		return ELV_CGROUP_WEIGHT_DEFAULT;
	w = q->p.cgroup_weight(q->p.cgroup_weight_arg, cgroup);
	if (w < ELV_CGROUP_WEIGHT_MIN)
		return ELV_CGROUP_WEIGHT_MIN;
	return w > ELV_CGROUP_WEIGHT_MAX ? ELV_CGROUP_WEIGHT_MAX : w;
}

static const struct elevator_host queue_host = {
	.struct_size = sizeof(struct elevator_host),
	.wakeup_at = queue_host_wakeup_at,
	.log = queue_host_log,
	.cgroup_path = queue_host_cgroup_path,
	.cgroup_weight = queue_host_cgroup_weight,
};

struct elevator_queue *queue_alloc_elevator(struct queue *q,
					    const struct elevator_type *type,
					    int *err)
{
	return elv_alloc(type, &queue_host, q, err);
}

/* ------------------------------------------------------------------ */
/* The merge hashes: queued ios keyed by (file, end offset), where a new  */
/* io may follow, and by (file, start offset), where one may precede.     */

static uint64_t queue_hash_offset(const struct io *io, enum queue_hash which)
{
	return which == QUEUE_BY_END ? io->rq.offset + io->rq.bytes :
		io->rq.offset;
}

static unsigned queue_hash_key(uint64_t file, uint64_t offset)
{
	uint64_t h = (file ^ offset) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> (64 - QUEUE_HASH_BITS));
}

static void queue_hash_add(struct queue *q, struct io *io)
{
	for (enum queue_hash w = 0; w < QUEUE_NR_HASHES; w++) {
		unsigned k = queue_hash_key(io->rq.file,
					    queue_hash_offset(io, w));

		io->hash_next[w] = q->hash[w][k];
		q->hash[w][k] = io;
	}
}

static void queue_hash_del(struct queue *q, struct io *io)
{
	for (enum queue_hash w = 0; w < QUEUE_NR_HASHES; w++) {
		unsigned k = queue_hash_key(io->rq.file,
					    queue_hash_offset(io, w));
		struct io **pp;

		for (pp = &q->hash[w][k]; *pp != io; pp = &(*pp)->hash_next[w])
			;
		*pp = io->hash_next[w];
		io->hash_next[w] = NULL;
	}
}

/* ------------------------------------------------------------------ */
/* Merging.                                                            */

/*
 * Can b follow a directly, as one vectored syscall?  Through the same
 * backing descriptor, hence in the same mode (buffered or direct): a
 * merged direct io must stay aligned, so an unaligned one (performed
 * through a bounce buffer) merges with nothing.  preadv and pwritev take
 * at most IOV_MAX parts: small requests (512 bytes at depth 2048) would
 * otherwise make ios the kernel refuses with EINVAL.
 */
static bool queue_can_merge(const struct io *a, const struct io *b)
{
	return a != b && a->rq.file == b->rq.file && a->rq.dir == b->rq.dir &&
	       a->rq.cgroup == b->rq.cgroup && a->fd == b->fd &&
	       a->dio_align == b->dio_align &&
	       !a->dio_unaligned && !b->dio_unaligned &&
	       a->rq.offset + a->rq.bytes == b->rq.offset &&
	       a->rq.nr_sectors + b->rq.nr_sectors <= IOSCHED_MAX_SECTORS &&
	       a->nr_parts + b->nr_parts <= IOV_MAX;
}

/*
 * A queued io that io may join: one ending where io starts (which is
 * QUEUE_BY_END: io would go after it) or one starting where io ends
 * (QUEUE_BY_START).  type says whether io is new (ELV_BACK_MERGE,
 * ELV_FRONT_MERGE) or queued too (ELV_REQUEST_MERGE).  Newest first; the
 * scheduler's allow_merge has the last word, asked about the earlier of
 * the two absorbing the later, except for a front merge, where the queued
 * one absorbs the new one in front of it.
 */
static struct io *queue_find_merge(struct queue *q, struct io *io,
				   enum queue_hash which, enum elv_merge type)
{
	const struct elevator_type *et = q->eq->type;
	uint64_t at = which == QUEUE_BY_END ? io->rq.offset :
		io->rq.offset + io->rq.bytes;
	struct io *c, *first, *second;

	for (c = q->hash[which][queue_hash_key(io->rq.file, at)]; c != NULL;
	     c = c->hash_next[which]) {
		first = which == QUEUE_BY_END ? c : io;
		second = which == QUEUE_BY_END ? io : c;
		if (!queue_can_merge(first, second))
			continue;
		if (type == ELV_FRONT_MERGE)
			first = c, second = io;
		if (et->allow_merge == NULL ||
		    et->allow_merge(q->eq, &first->rq, &second->rq, type))
			return c;
	}
	return NULL;
}

/*
 * Move src's parts and extent into dst, after dst's (a back merge) or before
 * them (a front merge); src's own struct is left empty.
 */
static void queue_join(struct io *dst, struct io *src, bool front)
{
	if (src->parts != NULL) {
		if (dst->parts == NULL) {
			dst->parts = src->parts;
			dst->parts_tail = src->parts_tail;
		} else if (front) {
			src->parts_tail->next = dst->parts;
			dst->parts = src->parts;
		} else {
			dst->parts_tail->next = src->parts;
			dst->parts_tail = src->parts_tail;
		}
	}
	if (front) {
		dst->rq.offset = src->rq.offset;
		dst->rq.sector = src->rq.sector;
	}
	dst->rq.bytes += src->rq.bytes;
	dst->rq.nr_sectors += src->rq.nr_sectors;
	dst->rq.sync = dst->rq.sync || src->rq.sync;
	dst->rq.sync_write = dst->rq.sync_write || src->rq.sync_write;
	if (src->rq.arrival_ns < dst->rq.arrival_ns)
		dst->rq.arrival_ns = src->rq.arrival_ns;
	dst->nr_parts += src->nr_parts;
	src->parts = src->parts_tail = NULL;
	src->nr_parts = 0;
}

/* Report an event of rq to the queue's trace hook, if it has one. */
static void queue_trace(struct queue *q, char action,
			const struct elv_request *rq, uint64_t now_ns,
			uint64_t wait_ns, uint64_t service_ns, int error)
{
	if (q->p.trace != NULL)
		q->p.trace(q->p.trace_arg, action, rq, now_ns, wait_ns,
			   service_ns, error);
}

/* The clock is read only with a hook: merges are on the hot path. */
static void queue_trace_merge(struct queue *q, char action,
			      const struct io *io)
{
	if (q->p.trace != NULL)
		queue_trace(q, action, &io->rq, queue_now(q), 0, 0, 0);
}

/* Free the shell of an io whose parts now belong to another. */
static void queue_free_shell(struct queue *q, struct io *io)
{
	if (q->p.free_shell != NULL)
		q->p.free_shell(q->p.free_shell_arg, io);
	else
		free(io);
}

/* Two queued ios, a then b, became adjacent: make them one. */
static void do_queue_merge_requests(struct queue *q, struct io *a,
				    struct io *b)
{
	const struct elevator_type *et = q->eq->type;

	queue_hash_del(q, a);
	queue_hash_del(q, b);
	et->merged_requests(q->eq, &a->rq, &b->rq);
	queue_trace_merge(q, 'M', b);
	queue_join(a, b, false);
	queue_hash_add(q, a);
	do_queue_account(q, queue_now(q));
	q->nr_queued--;
	q->nr_held[a->rq.dir]--;
	q->stats.dir[a->rq.dir].queued--;
	q->stats.dir[a->rq.dir].merges++;
	queue_free_shell(q, b);
}

/*
 * Try to merge io into a queued io, after it (back) or else before it
 * (front).  On success io is consumed and the grown io may in turn absorb
 * its new neighbour.
 */
static bool do_queue_try_merge(struct queue *q, struct io *io)
{
	const struct elevator_type *et = q->eq->type;
	struct io *found, *prev, *next;
	enum elv_merge type = ELV_BACK_MERGE;

	found = queue_find_merge(q, io, QUEUE_BY_END, ELV_BACK_MERGE);
	if (found == NULL) {
		type = ELV_FRONT_MERGE;
		found = queue_find_merge(q, io, QUEUE_BY_START,
					 ELV_FRONT_MERGE);
		if (found == NULL)
			return false;
	}
	queue_hash_del(q, found);
	queue_join(found, io, type == ELV_FRONT_MERGE);
	queue_hash_add(q, found);
	if (et->merged != NULL)
		et->merged(q->eq, &found->rq, type);
	queue_trace_merge(q, type == ELV_FRONT_MERGE ? 'F' : 'M', io);
	q->stats.dir[found->rq.dir].merges++;
	queue_free_shell(q, io);
	/* Only a scheduler that can forget one of two queued ios. */
	if (et->merged_requests == NULL)
		return true;
	if (type == ELV_BACK_MERGE) {
		/* found may now reach the start of another queued io. */
		next = queue_find_merge(q, found, QUEUE_BY_START,
					ELV_REQUEST_MERGE);
		if (next != NULL)
			do_queue_merge_requests(q, found, next);
	} else {
		/* A queued io may end exactly where found now starts. */
		prev = queue_find_merge(q, found, QUEUE_BY_END,
					ELV_REQUEST_MERGE);
		if (prev != NULL)
			do_queue_merge_requests(q, prev, found);
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* Submission, dispatch and completion.                                */

/* Caller holds q->lock: a dispatcher may find work (all: every worker). */
static void do_queue_work(struct queue *q, bool all)
{
	if (all)
		pthread_cond_broadcast(&q->work_cv);
	else
		pthread_cond_signal(&q->work_cv);
	if (q->work != NULL)
		q->work(q->work_arg);
}

void queue_set_work(struct queue *q, void (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&q->lock);
	q->work = fn;
	q->work_arg = arg;
	pthread_mutex_unlock(&q->lock);
}

/*
 * How many slots of io's direction io may fill: nr_requests, or fewer if
 * the scheduler's limit_depth says so (kyber keeps some write slots for
 * synchronous writes, as the kernel's async_depth does).
 */
static unsigned do_queue_limit(struct queue *q, const struct io *io)
{
	const struct elevator_type *type = q->eq->type;
	unsigned limit;

	if (type->limit_depth == NULL)
		return q->nr_requests;
	limit = type->limit_depth(q->eq, &io->rq, q->nr_requests);
	if (limit < 1)
		return 1;
	return limit < q->nr_requests ? limit : q->nr_requests;
}

/*
 * May io take a slot?  nr_requests applies to each direction apart, as the
 * kernel's request list counts reads and writes apart, and the scheduler
 * may lower it for io (do_queue_limit).  When its direction is full the
 * scheduler may still admit io (ELV_MQUEUE_MUST: the process it idles for
 * must not wait behind the others' requests), up to half as much again,
 * the kernel's hard limit.
 */
static bool do_queue_may_queue(struct queue *q, struct io *io)
{
	const struct elevator_type *et = q->eq->type;
	unsigned held = q->nr_held[io->rq.dir];

	if (held < do_queue_limit(q, io))
		return true;
	return et->may_queue != NULL && held >= q->nr_requests &&
	       held < q->nr_requests + (q->nr_requests + 1) / 2 &&
	       et->may_queue(q->eq, &io->rq) == ELV_MQUEUE_MUST;
}

/* Caller holds q->lock: io arrives (counted, traced, its arrival time). */
static void do_queue_arrive(struct queue *q, struct io *io)
{
	q->stats.dir[io->rq.dir].requests += io->nr_parts;
	/* Time spent waiting for a slot counts as queueing time. */
	io->rq.arrival_ns = queue_now(q);
	queue_trace(q, 'Q', &io->rq, io->rq.arrival_ns, 0, 0, 0);
}

/* Caller holds q->lock: merge io or hand it to the elevator, unless the
 * queue is frozen or io's direction full. */
static enum queue_take do_queue_take(struct queue *q, struct io *io)
{
	uint64_t now;

	if (q->frozen)
		return QUEUE_FULL;
	if (do_queue_try_merge(q, io))
		return QUEUE_MERGED;
	if (!do_queue_may_queue(q, io))
		return QUEUE_FULL;
	now = queue_now(q);
	q->eq->type->add_request(q->eq, &io->rq, now);
	queue_hash_add(q, io);
	do_queue_account(q, now);
	q->nr_queued++;
	q->nr_held[io->rq.dir]++;
	q->stats.dir[io->rq.dir].queued++;
	return QUEUE_ADDED;
}

/* Merge io or hand it to the elevator, waiting while its direction is
 * full or the queue frozen. */
static void do_queue_submit(struct queue *q, struct io *io)
{
	do_queue_arrive(q, io);
	while (do_queue_take(q, io) == QUEUE_FULL)
		pthread_cond_wait(&q->submit_cv[io->rq.dir], &q->lock);
}

enum queue_take queue_submit_nowait(struct queue *q, struct io *io,
				    bool again)
{
	enum queue_take took;

	pthread_mutex_lock(&q->lock);
	if (!again)
		do_queue_arrive(q, io);
	took = do_queue_take(q, io);
	pthread_mutex_unlock(&q->lock);
	return took;
}

void queue_submit(struct queue *q, struct io *io)
{
	pthread_mutex_lock(&q->lock);
	do_queue_submit(q, io);
	/* A new or grown request: a worker may now dispatch it. */
	do_queue_work(q, false);
	pthread_mutex_unlock(&q->lock);
}

/* Take the next io the elevator dispatches, or NULL. */
static struct io *do_queue_dispatch(struct queue *q)
{
	struct stats_group *g;
	struct elv_request *rq;
	struct io *io;
	uint64_t now;

	if (q->nr_queued == 0)
		return NULL;
	now = queue_now(q);
	rq = q->eq->type->dispatch(q->eq, now, q->frozen || q->stopping);
	if (rq == NULL)
		return NULL;
	io = elv_container_of(rq, struct io, rq);
	queue_hash_del(q, io);
	q->nr_queued--;
	q->nr_in_flight++;
	io->dispatch_ns = now;
	q->stats.dir[rq->dir].queued--;
	q->stats.dir[rq->dir].in_flight++;
	q->stats.dir[rq->dir].dispatched++;
	q->stats.dir[rq->dir].wait_ns += now - rq->arrival_ns;
	stats_hist_add(&q->stats.dir[rq->dir].wait[stats_class_of(rq->ioprio)],
		       now - rq->arrival_ns);
	g = stats_group(&q->stats, rq->cgroup, true, now);
	g->last_ns = now;
	g->dir[rq->dir].ios++;
	g->dir[rq->dir].bytes += rq->bytes;
	stats_hist_add(&g->dir[rq->dir].wait, now - rq->arrival_ns);
	queue_trace(q, 'D', rq, now, 0, 0, 0);
	return io;
}

struct io *queue_next(struct queue *q)
{
	struct io *io;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		io = do_queue_dispatch(q);
		if (io != NULL)
			break;
		if (q->stopping && q->nr_queued == 0)
			break;
		pthread_cond_wait(&q->work_cv, &q->lock);
	}
	/* Other workers may find more. */
	if (io != NULL && q->nr_queued > 0)
		pthread_cond_signal(&q->work_cv);
	pthread_mutex_unlock(&q->lock);
	return io;
}

struct io *queue_try_next(struct queue *q)
{
	struct io *io;

	pthread_mutex_lock(&q->lock);
	io = do_queue_dispatch(q);
	pthread_mutex_unlock(&q->lock);
	return io;
}

bool queue_stopped(struct queue *q)
{
	bool stopped;

	pthread_mutex_lock(&q->lock);
	stopped = q->stopping && q->nr_queued == 0;
	pthread_mutex_unlock(&q->lock);
	return stopped;
}

struct io *queue_submit_dispatch(struct queue *q, struct io *io)
{
	struct io *next;

	pthread_mutex_lock(&q->lock);
	do_queue_submit(q, io);
	/*
	 * The caller asks the elevator itself, in place of a worker.  When
	 * nothing comes out, a worker would have found nothing either, and
	 * the scheduler's wake-up or a completion will call one.
	 */
	next = do_queue_dispatch(q);
	if (next != NULL && q->nr_queued > 0)
		do_queue_work(q, false);
	pthread_mutex_unlock(&q->lock);
	return next;
}

bool queue_submit_idle(struct queue *q, struct io *io, struct io **next)
{
	bool idle;

	pthread_mutex_lock(&q->lock);
	idle = !q->frozen && q->nr_queued == 0 &&
	       q->nr_held[io->rq.dir] < do_queue_limit(q, io);
	if (idle) {
		do_queue_submit(q, io);
		/* Nothing else is queued: io, or NULL while the scheduler
		 * idles and its wake-up will call a worker. */
		if (next != NULL)
			*next = do_queue_dispatch(q);
		else
			do_queue_work(q, false);
	}
	pthread_mutex_unlock(&q->lock);
	return idle;
}

void queue_done(struct queue *q, struct io *io)
{
	const struct elevator_type *et = q->eq->type;
	struct stats_dir *sd = &q->stats.dir[io->rq.dir];
	struct stats_group *g;
	struct io_part *p;
	uint64_t now;
	int error = 0;

	pthread_mutex_lock(&q->lock);
	now = queue_now(q);
	if (et->completed != NULL)
		et->completed(q->eq, &io->rq, now);
	do_queue_account(q, now);
	q->nr_in_flight--;
	q->nr_held[io->rq.dir]--;
	sd->in_flight--;
	sd->completed += io->nr_parts;
	sd->sectors += io->rq.nr_sectors;
	sd->service_ns += now - io->dispatch_ns;
	stats_hist_add(&sd->service[stats_class_of(io->rq.ioprio)],
		       now - io->dispatch_ns);
	/* Of a group that lost its slot since: no longer shown. */
	g = stats_group(&q->stats, io->rq.cgroup, false, now);
	if (g != NULL)
		stats_hist_add(&g->dir[io->rq.dir].service,
			       now - io->dispatch_ns);
	for (p = io->parts; p != NULL; p = p->next)
		if (p->result < 0) {
			sd->errors++;
			if (error == 0)
				error = p->result;
		}
	queue_trace(q, 'C', &io->rq, now, io->dispatch_ns - io->rq.arrival_ns,
		    now - io->dispatch_ns, error);
	if (q->nr_queued == 0 && q->nr_in_flight == 0)
		pthread_cond_broadcast(&q->idle_cv);
	/*
	 * A slot of this direction is free; with may_queue, the scheduler
	 * may also have begun to idle for a waiting submitter of either
	 * direction.  Every waiter checks again: one taken by a merge
	 * leaves the slot to the next.
	 */
	pthread_cond_broadcast(&q->submit_cv[io->rq.dir]);
	if (et->may_queue != NULL)
		pthread_cond_broadcast(&q->submit_cv[!io->rq.dir]);
	/* A completion can make an idling scheduler dispatch. */
	if (q->nr_queued > 0)
		do_queue_work(q, false);
	pthread_mutex_unlock(&q->lock);
}

void queue_kick(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->wakeup_ns = 0;
	do_queue_work(q, true);
	pthread_mutex_unlock(&q->lock);
}

void queue_process_exited(struct queue *q, pid_t pid)
{
	const struct elevator_type *et;

	pthread_mutex_lock(&q->lock);
	et = q->eq->type;
	if (et->exit_process != NULL) {
		et->exit_process(q->eq, pid, queue_now(q));
		if (q->nr_queued > 0)
			do_queue_work(q, false);
	}
	pthread_mutex_unlock(&q->lock);
}

void queue_stop(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->stopping = true;
	do_queue_work(q, true);
	pthread_mutex_unlock(&q->lock);
}

/* ------------------------------------------------------------------ */
/* Freezing and switching.                                             */

uint64_t queue_freeze(struct queue *q)
{
	uint64_t start = clock_now_ns();

	pthread_mutex_lock(&q->lock);
	q->frozen = true;
	/* Idling schedulers must now hand everything over. */
	do_queue_work(q, true);
	while (q->nr_queued > 0 || q->nr_in_flight > 0)
		pthread_cond_wait(&q->idle_cv, &q->lock);
	pthread_mutex_unlock(&q->lock);
	return clock_now_ns() - start;
}

void queue_unfreeze(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->frozen = false;
	pthread_cond_broadcast(&q->submit_cv[ELV_READ]);
	pthread_cond_broadcast(&q->submit_cv[ELV_WRITE]);
	pthread_mutex_unlock(&q->lock);
}

struct elevator_queue *queue_swap_elevator(struct queue *q,
					   struct elevator_queue *eq)
{
	struct elevator_queue *old;

	pthread_mutex_lock(&q->lock);
	old = q->eq;
	q->eq = eq;
	q->stats.switches++;
	pthread_mutex_unlock(&q->lock);
	return old;
}

const struct elevator_type *queue_elevator_type(struct queue *q)
{
	const struct elevator_type *type;

	pthread_mutex_lock(&q->lock);
	type = q->eq->type;
	pthread_mutex_unlock(&q->lock);
	return type;
}

int queue_with_elevator(struct queue *q,
			int (*fn)(struct elevator_queue *eq, void *arg),
			void *arg)
{
	int ret;

	pthread_mutex_lock(&q->lock);
	ret = fn(q->eq, arg);
	pthread_mutex_unlock(&q->lock);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Limits, statistics, life cycle.                                     */

int queue_set_nr_requests(struct queue *q, unsigned nr)
{
	if (nr < NR_REQUESTS_MIN || nr > NR_REQUESTS_MAX)
		return -EINVAL;
	pthread_mutex_lock(&q->lock);
	q->nr_requests = nr;
	pthread_cond_broadcast(&q->submit_cv[ELV_READ]);
	pthread_cond_broadcast(&q->submit_cv[ELV_WRITE]);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

unsigned queue_nr_requests(struct queue *q)
{
	unsigned nr;

	pthread_mutex_lock(&q->lock);
	nr = q->nr_requests;
	pthread_mutex_unlock(&q->lock);
	return nr;
}

/* Read the elevator's counters; the caller holds q->lock. */
static void do_queue_get_counters(struct queue *q, struct stats_counters *out)
{
	const struct elevator_type *type = q->eq->type;
	const struct elv_counter *c = type->counters;
	unsigned n = 0;

	out->scheduler = type->name;
	for (; c != NULL && c->name != NULL; c++, n++) {
		out->name[n] = c->name;
		memcpy(&out->value[n], (char *)q->eq->elevator_data + c->offset,
		       sizeof out->value[n]);
	}
	out->n = n;
}

void queue_get_stats(struct queue *q, struct stats *out)
{
	pthread_mutex_lock(&q->lock);
	do_queue_account(q, queue_now(q));
	*out = q->stats;
	do_queue_get_counters(q, &out->sched);
	for (unsigned i = 0; i < out->nr_groups; i++)
		if (queue_host_cgroup_path(q->eq, out->group[i].id,
					   out->group[i].path,
					   sizeof out->group[i].path) < 0)
			snprintf(out->group[i].path,
				 sizeof out->group[i].path, "?");
	pthread_mutex_unlock(&q->lock);
}

struct queue *queue_new(const struct queue_params *p,
			const struct elevator_type *type)
{
	struct queue *q;
	int err;

	q = calloc(1, sizeof *q);
	if (q == NULL)
		return NULL;
	q->p = *p;
	if (q->p.clock == NULL)
		q->p.clock = queue_clock_default;
	q->nr_requests = p->nr_requests;
	if (q->nr_requests < NR_REQUESTS_MIN || q->nr_requests > NR_REQUESTS_MAX) {
		log_err("nr_requests %u is out of range [%u, %u]",
			q->nr_requests, NR_REQUESTS_MIN, NR_REQUESTS_MAX);
		free(q);
		return NULL;
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->submit_cv[ELV_READ], NULL);
	pthread_cond_init(&q->submit_cv[ELV_WRITE], NULL);
	pthread_cond_init(&q->work_cv, NULL);
	pthread_cond_init(&q->idle_cv, NULL);
	q->eq = queue_alloc_elevator(q, type, &err);
	if (q->eq == NULL) {
		queue_free(q);
		return NULL;
	}
	return q;
}

void queue_free(struct queue *q)
{
	if (q == NULL)
		return;
	if (q->eq != NULL)
		elv_release(q->eq);
	pthread_cond_destroy(&q->idle_cv);
	pthread_cond_destroy(&q->work_cv);
	pthread_cond_destroy(&q->submit_cv[ELV_WRITE]);
	pthread_cond_destroy(&q->submit_cv[ELV_READ]);
	pthread_mutex_destroy(&q->lock);
	free(q);
}
