/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One trace through one scheduler, in simulated time.
 *
 * The requests go through the daemon's own queue (queue.c: merging, the
 * nr_requests limit, wake-ups) with the scheduler module the mount would
 * load, on a virtual clock that jumps from event to event: an arrival, the
 * end of the disk's current service, a wake-up the scheduler asked for.
 * The disk is diskmodel.c's: one head serving one request at a time, each
 * costing diskmodel_cost_ns() (or, for "none", its transfer time only).
 * Nothing sleeps and no I/O is done, so a replay is fast and, with ties
 * broken by trace order, the same every time.
 *
 * Open loop issues each request at its recorded time.  Closed loop issues
 * a process's next request when its previous one has completed, plus the
 * think time the trace shows: what makes anticipation and per-process
 * idling pay off or not.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuse-iosched.h"

#define REPLAY_PLOT_BUCKETS 200

/* A part with the index of its trace request. */
struct replay_part {
	struct io_part part;
	size_t idx;
};

/* A closed-loop arrival: the heap's entries. */
struct replay_arrival {
	uint64_t at_ns;
	size_t idx;
};

struct replay_state {
	const struct replay_trace *t;
	const struct replay_opts *o;
	struct queue *q;
	struct diskmodel *dm;	/* NULL: "none" */
	uint64_t now;
	uint64_t wake_ns;	/* a scheduler wake-up due, or 0 */

	struct io *busy;	/* being served by the disk, or NULL */
	uint64_t busy_until;
	uint64_t head;		/* sector after the last io served */

	size_t cursor;		/* open loop: the next request */
	struct replay_arrival *heap;	/* closed loop: by time, index */
	size_t nr_heap;
	size_t *next_of;	/* closed loop: a process's next request */
	size_t *backlog;	/* waiting for a queue slot, FIFO */
	size_t backlog_head, backlog_tail;
	uint64_t outstanding;	/* ios queued or in flight */
	uint64_t merges_seen;

	uint64_t *issue_ns, *done_ns;	/* per request */
};

/* ------------------------------------------------------------------ */
/* The scheduler's CPU cost: its hooks timed on the real clock.        */

static const struct elevator_type *cost_type;	/* single-threaded */
static uint64_t cost_total_ns, cost_calls;

static uint64_t replay_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * A call that took longer than this was preempted (the machine's load,
 * not the scheduler): it is left out, and the others stand for it.
 */
#define COST_PREEMPTED_NS 50000
#define COST_BEGIN uint64_t cost_t0 = replay_real_ns()
#define COST_END cost_end(cost_t0)

static uint64_t cost_kept_calls;

static void cost_end(uint64_t t0)
{
	uint64_t d = replay_real_ns() - t0;

	cost_calls++;
	if (d < COST_PREEMPTED_NS) {
		cost_total_ns += d;
		cost_kept_calls++;
	}
}

static bool cost_allow_merge(struct elevator_queue *eq,
			     const struct elv_request *rq,
			     const struct elv_request *next,
			     enum elv_merge type)
{
	bool ok;
	COST_BEGIN;

	ok = cost_type->ops.allow_merge(eq, rq, next, type);
	COST_END;
	return ok;
}

static enum elv_may_queue cost_may_queue(struct elevator_queue *eq,
					 const struct elv_request *rq)
{
	enum elv_may_queue m;
	COST_BEGIN;

	m = cost_type->ops.may_queue(eq, rq);
	COST_END;
	return m;
}

static void cost_merged(struct elevator_queue *eq, struct elv_request *rq,
			enum elv_merge type)
{
	COST_BEGIN;

	cost_type->ops.merged(eq, rq, type);
	COST_END;
}

static void cost_merged_requests(struct elevator_queue *eq,
				 struct elv_request *rq, struct elv_request *next)
{
	COST_BEGIN;

	cost_type->ops.merged_requests(eq, rq, next);
	COST_END;
}

static void cost_add_request(struct elevator_queue *eq, struct elv_request *rq,
			     uint64_t now_ns)
{
	COST_BEGIN;

	cost_type->ops.add_request(eq, rq, now_ns);
	COST_END;
}

static struct elv_request *cost_dispatch(struct elevator_queue *eq,
				     uint64_t now_ns, bool force)
{
	struct elv_request *rq;
	COST_BEGIN;

	rq = cost_type->ops.dispatch(eq, now_ns, force);
	COST_END;
	return rq;
}

static void cost_completed(struct elevator_queue *eq, struct elv_request *rq,
			   uint64_t now_ns)
{
	COST_BEGIN;

	cost_type->ops.completed(eq, rq, now_ns);
	COST_END;
}

static bool cost_has_work(struct elevator_queue *eq)
{
	bool w;
	COST_BEGIN;

	w = cost_type->ops.has_work(eq);
	COST_END;
	return w;
}

/* type with every hook it has wrapped in a timer. */
static void replay_timed_type(const struct elevator_type *type,
			      struct elevator_type *timed)
{
	const struct elevator_ops *o = &type->ops;

	*timed = *type;
	cost_type = type;
	cost_total_ns = 0;
	cost_calls = 0;
	cost_kept_calls = 0;
	timed->ops.allow_merge = o->allow_merge ? cost_allow_merge : NULL;
	timed->ops.may_queue = o->may_queue ? cost_may_queue : NULL;
	timed->ops.merged = o->merged ? cost_merged : NULL;
	timed->ops.merged_requests = o->merged_requests ?
				     cost_merged_requests : NULL;
	timed->ops.add_request = cost_add_request;
	timed->ops.dispatch = cost_dispatch;
	timed->ops.completed = o->completed ? cost_completed : NULL;
	timed->ops.has_work = cost_has_work;
}

/*
 * What timing a call adds: about one clock read.  The least over many
 * short batches, so that preemption does not inflate it.
 */
static double replay_clock_overhead(void)
{
	uint64_t best = UINT64_MAX, t0, t;
	unsigned i, j;

	for (i = 0; i < 200; i++) {
		t0 = replay_real_ns();
		for (j = 0; j < 1000; j++) {
			COST_BEGIN;
			(void)cost_t0;
		}
		t = replay_real_ns() - t0;
		if (t < best)
			best = t;
	}
	return (double)best / 1000;
}

/* ------------------------------------------------------------------ */
/* The queue's host services, on the virtual clock.                    */

static uint64_t replay_clock(void *arg)
{
	const struct replay_state *s = arg;

	return s->now;
}

static void replay_wakeup(void *arg, uint64_t at_ns)
{
	struct replay_state *s = arg;

	if (s->wake_ns == 0 || at_ns < s->wake_ns)
		s->wake_ns = at_ns;
}

/* ------------------------------------------------------------------ */
/* Closed-loop arrivals: a binary heap by (time, trace index).         */

static bool replay_before(const struct replay_arrival *a,
			  const struct replay_arrival *b)
{
	return a->at_ns < b->at_ns || (a->at_ns == b->at_ns && a->idx < b->idx);
}

static void replay_heap_push(struct replay_state *s, uint64_t at, size_t idx)
{
	size_t i = s->nr_heap++, parent;
	struct replay_arrival a = { at, idx };

	while (i > 0) {
		parent = (i - 1) / 2;
		if (!replay_before(&a, &s->heap[parent]))
			break;
		s->heap[i] = s->heap[parent];
		i = parent;
	}
	s->heap[i] = a;
}

static void replay_heap_pop(struct replay_state *s)
{
	struct replay_arrival last = s->heap[--s->nr_heap];
	size_t i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= s->nr_heap)
			break;
		if (c + 1 < s->nr_heap && replay_before(&s->heap[c + 1],
							&s->heap[c]))
			c++;
		if (!replay_before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nr_heap > 0)
		s->heap[i] = last;
}

/* The time of the next arrival, and its request; false if none. */
static bool replay_peek(const struct replay_state *s, uint64_t *at,
			size_t *idx)
{
	if (s->o->closed_loop) {
		if (s->nr_heap == 0)
			return false;
		*at = s->heap[0].at_ns;
		*idx = s->heap[0].idx;
		return true;
	}
	if (s->cursor == s->t->nr)
		return false;
	*at = s->t->rq[s->cursor].time_ns;
	*idx = s->cursor;
	return true;
}

static void replay_pop(struct replay_state *s)
{
	if (s->o->closed_loop)
		replay_heap_pop(s);
	else
		s->cursor++;
}

/* ------------------------------------------------------------------ */
/* Requests in and out of the queue.                                   */

static int replay_submit(struct replay_state *s, size_t idx)
{
	const struct replay_rq *r = &s->t->rq[idx];
	struct io *io = calloc(1, sizeof *io);
	struct replay_part *rp = calloc(1, sizeof *rp);
	struct stats st;

	if (io == NULL || rp == NULL) {
		free(io);
		free(rp);
		return -ENOMEM;
	}
	rp->idx = idx;
	rp->part.len = (size_t)r->nr_sectors << IOSCHED_SECTOR_SHIFT;
	io->parts = io->parts_tail = &rp->part;
	io->nr_parts = 1;
	io->fd = -1;
	io->rq.dir = r->write ? ELV_WRITE : ELV_READ;
	io->rq.sync = r->sync;
	io->rq.offset = r->sector << IOSCHED_SECTOR_SHIFT;
	io->rq.bytes = rp->part.len;
	io->rq.sector = r->sector;
	io->rq.nr_sectors = r->nr_sectors;
	/* Distinct, non-zero: per-process schedulers key on it. */
	io->rq.pid = (pid_t)r->proc + 1;
	io->rq.ioprio = IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_BE, 4);

	queue_submit(s->q, io);
	s->outstanding++;
	queue_get_stats(s->q, &st);
	st.dir[0].merges += st.dir[1].merges;
	/* Each merge made two ios one. */
	s->outstanding -= st.dir[0].merges - s->merges_seen;
	s->merges_seen = st.dir[0].merges;
	return 0;
}

/* Hand arrivals due by now to the queue, or to the backlog when full. */
static int replay_arrive(struct replay_state *s)
{
	uint64_t at;
	size_t idx;
	int err;

	while (replay_peek(s, &at, &idx) && at <= s->now) {
		replay_pop(s);
		s->issue_ns[idx] = at;
		s->backlog[s->backlog_tail++] = idx;
	}
	while (s->backlog_head < s->backlog_tail &&
	       s->outstanding < s->o->nr_requests) {
		err = replay_submit(s, s->backlog[s->backlog_head++]);
		if (err != 0)
			return err;
	}
	return 0;
}

static void replay_start_service(struct replay_state *s)
{
	struct io *io = queue_try_next(s->q);
	uint64_t cost;

	if (io == NULL)
		return;
	if (s->dm != NULL)
		cost = diskmodel_cost_ns(s->dm, s->head, &io->rq);
	else
		cost = io->rq.bytes * 1000 / s->o->mb_per_s;
	s->busy = io;
	s->busy_until = s->now + cost;
	s->head = elv_rq_end_sector(&io->rq);
}

static void replay_end_service(struct replay_state *s)
{
	struct io *io = s->busy;
	struct io_part *p, *next;

	for (p = io->parts; p != NULL; p = p->next) {
		size_t idx = elv_container_of(p, struct replay_part,
					      part)->idx;
		size_t n;

		p->result = (ssize_t)p->len;
		s->done_ns[idx] = s->now;
		if (s->o->closed_loop) {
			n = s->next_of[idx];
			if (n != SIZE_MAX)
				replay_heap_push(s, s->now +
						 s->t->rq[n].think_ns, n);
		}
	}
	queue_done(s->q, io);
	for (p = io->parts; p != NULL; p = next) {
		next = p->next;
		free(elv_container_of(p, struct replay_part, part));
	}
	free(io);
	s->busy = NULL;
	s->outstanding--;
}

/* ------------------------------------------------------------------ */
/* The run.                                                            */

static int replay_loop(struct replay_state *s)
{
	bool stopped = false;
	uint64_t next, at;
	size_t idx;
	int err;

	for (;;) {
		if (s->busy != NULL && s->busy_until <= s->now)
			replay_end_service(s);
		if (s->wake_ns != 0 && s->wake_ns <= s->now) {
			s->wake_ns = 0;
			queue_kick(s->q);
		}
		err = replay_arrive(s);
		if (err != 0)
			return err;
		if (s->busy == NULL)
			replay_start_service(s);

		next = UINT64_MAX;
		if (s->busy != NULL)
			next = s->busy_until;
		if (replay_peek(s, &at, &idx) && at < next)
			next = at < s->now ? s->now : at;
		if (s->wake_ns != 0 && s->wake_ns < next)
			next = s->wake_ns > s->now ? s->wake_ns : s->now;
		if (next == UINT64_MAX) {
			if (s->outstanding == 0 &&
			    s->backlog_head == s->backlog_tail)
				return 0;
			/* Held with no wake-up asked: make it let go. */
			if (stopped)
				return -EDEADLK;
			queue_stop(s->q);
			stopped = true;
			continue;
		}
		s->now = next;
	}
}

/* A tunable set under the queue lock, as .control/iosched/ does. */
struct replay_tunable_op {
	const char *name;
	int64_t value;
};

static int replay_tunable_apply(struct elevator_queue *eq, void *arg)
{
	const struct replay_tunable_op *op = arg;

	return elv_tunable_set(eq, op->name, op->value);
}

/* -o NAME=VALUE for the tunables type has; the others are not its. */
static int replay_tunables(struct replay_state *s,
			   const struct elevator_type *type, char *err,
			   size_t size)
{
	unsigned i;

	for (i = 0; i < s->o->nr_tunables; i++) {
		const char *opt = s->o->tunables[i], *eq = strchr(opt, '=');
		struct replay_tunable_op op;
		char name[64], *end;
		int ret = -EINVAL;

		snprintf(name, sizeof name, "%.*s", (int)(eq - opt), opt);
		if (elv_tunable_find(type, name) == NULL)
			continue;
		op.name = name;
		errno = 0;
		op.value = strtoll(eq + 1, &end, 10);
		if (errno == 0 && end != eq + 1 && *end == '\0')
			ret = queue_with_elevator(s->q, replay_tunable_apply,
						  &op);
		if (ret != 0) {
			snprintf(err, size, "-o %s: %s for %s", opt,
				 strerror(-ret), type->name);
			return -1;
		}
	}
	return 0;
}

static int replay_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Jain's index over processes of their throughput while active. */
static double replay_jain(const struct replay_state *s)
{
	const struct replay_trace *t = s->t;
	uint64_t *bytes = calloc(t->nr_procs, sizeof *bytes);
	uint64_t *first = calloc(t->nr_procs, sizeof *first);
	uint64_t *last = calloc(t->nr_procs, sizeof *last);
	double sum = 0, sq = 0, x;
	unsigned n = 0;
	size_t i;

	if (bytes == NULL || first == NULL || last == NULL) {
		free(bytes);
		free(first);
		free(last);
		return 0;
	}
	for (i = 0; i < t->nr_procs; i++)
		first[i] = UINT64_MAX;
	for (i = 0; i < t->nr; i++) {
		uint32_t p = t->rq[i].proc;

		bytes[p] += (uint64_t)t->rq[i].nr_sectors <<
			    IOSCHED_SECTOR_SHIFT;
		if (s->issue_ns[i] < first[p])
			first[p] = s->issue_ns[i];
		if (s->done_ns[i] > last[p])
			last[p] = s->done_ns[i];
	}
	for (i = 0; i < t->nr_procs; i++) {
		if (last[i] <= first[i])
			continue;
		x = (double)bytes[i] / (double)(last[i] - first[i]);
		sum += x;
		sq += x * x;
		n++;
	}
	free(bytes);
	free(first);
	free(last);
	return n == 0 || sq == 0 ? 1.0 : sum * sum / (n * sq);
}

static int replay_results(const struct replay_state *s,
			  struct replay_result *res)
{
	const struct replay_trace *t = s->t;
	size_t i, b;
	uint64_t span;

	res->requests = t->nr;
	res->merges = s->merges_seen;
	res->start_ns = UINT64_MAX;
	for (i = 0; i < t->nr; i++) {
		const struct replay_rq *r = &t->rq[i];

		res->bytes += (uint64_t)r->nr_sectors << IOSCHED_SECTOR_SHIFT;
		res->nr_lat[r->write]++;
		if (s->issue_ns[i] < res->start_ns)
			res->start_ns = s->issue_ns[i];
		if (s->done_ns[i] > res->end_ns)
			res->end_ns = s->done_ns[i];
	}
	for (i = 0; i < 2; i++) {
		res->lat[i] = malloc((res->nr_lat[i] + 1) * sizeof(uint64_t));
		if (res->lat[i] == NULL)
			return -ENOMEM;
		res->nr_lat[i] = 0;
	}
	span = res->end_ns - res->start_ns;
	res->bucket_ns = (span + REPLAY_PLOT_BUCKETS - 1) / REPLAY_PLOT_BUCKETS;
	if (res->bucket_ns < 1000000)
		res->bucket_ns = 1000000;
	res->nr_buckets = (size_t)(span / res->bucket_ns) + 1;
	res->buckets = calloc(res->nr_buckets, sizeof *res->buckets);
	if (res->buckets == NULL)
		return -ENOMEM;
	for (i = 0; i < t->nr; i++) {
		const struct replay_rq *r = &t->rq[i];

		res->lat[r->write][res->nr_lat[r->write]++] =
			s->done_ns[i] - s->issue_ns[i];
		b = (size_t)((s->done_ns[i] - res->start_ns) / res->bucket_ns);
		res->buckets[b] += (uint64_t)r->nr_sectors <<
				   IOSCHED_SECTOR_SHIFT;
	}
	for (i = 0; i < 2; i++)
		qsort(res->lat[i], res->nr_lat[i], sizeof(uint64_t),
		      replay_cmp_u64);
	res->jain = replay_jain(s);
	return 0;
}

/* Closed loop: each process's first request, and who follows whom. */
static int replay_closed_setup(struct replay_state *s)
{
	const struct replay_trace *t = s->t;
	size_t *last = malloc(t->nr_procs * sizeof *last);
	size_t i;

	s->heap = malloc(t->nr_procs * sizeof *s->heap);
	s->next_of = malloc(t->nr * sizeof *s->next_of);
	if (last == NULL || s->heap == NULL || s->next_of == NULL) {
		free(last);
		return -ENOMEM;
	}
	for (i = 0; i < t->nr_procs; i++)
		last[i] = SIZE_MAX;
	for (i = t->nr; i-- > 0;) {
		s->next_of[i] = last[t->rq[i].proc];
		last[t->rq[i].proc] = i;
	}
	for (i = 0; i < t->nr_procs; i++)
		if (last[i] != SIZE_MAX)
			replay_heap_push(s, t->rq[last[i]].time_ns, last[i]);
	free(last);
	return 0;
}

int replay_sim(const struct replay_trace *t, const struct elevator_type *type,
	       const struct replay_opts *o, struct replay_result *res,
	       char *err, size_t size)
{
	struct replay_state s = { .t = t, .o = o };
	struct queue_params qp = {
		.nr_requests = o->nr_requests,
		.clock = replay_clock,
		.clock_arg = &s,
		.wakeup_at = replay_wakeup,
		.wakeup_arg = &s,
	};
	struct elevator_type timed;
	double overhead = 0;
	int ret = -1;

	memset(res, 0, sizeof *res);
	if (o->cost) {
		overhead = replay_clock_overhead();
		replay_timed_type(type, &timed);
		type = &timed;
	}
	s.issue_ns = calloc(t->nr, sizeof *s.issue_ns);
	s.done_ns = calloc(t->nr, sizeof *s.done_ns);
	s.backlog = malloc(t->nr * sizeof *s.backlog);
	if (s.issue_ns == NULL || s.done_ns == NULL || s.backlog == NULL ||
	    (o->closed_loop && replay_closed_setup(&s) != 0)) {
		snprintf(err, size, "out of memory");
		goto out;
	}
	if (o->hdd) {
		s.dm = diskmodel_new(o->seek_ms, o->rpm, o->mb_per_s);
		if (s.dm == NULL) {
			snprintf(err, size, "disk model: %s", strerror(errno));
			goto out;
		}
	}
	s.q = queue_new(&qp, type);
	if (s.q == NULL) {
		snprintf(err, size, "scheduler %s failed to start",
			 type->name);
		goto out;
	}
	if (replay_tunables(&s, type, err, size) != 0)
		goto out;
	ret = replay_loop(&s);
	if (ret != 0) {
		snprintf(err, size, "scheduler %s: %s", type->name,
			 ret == -EDEADLK ? "holds requests and asks for no "
			 "wake-up" : strerror(-ret));
		ret = -1;
		goto out;
	}
	if (replay_results(&s, res) != 0) {
		snprintf(err, size, "out of memory");
		ret = -1;
		goto out;
	}
	if (o->cost) {
		double net = (double)cost_total_ns - overhead * cost_kept_calls;

		if (net > 0 && cost_kept_calls > 0)
			res->cost_ns = net / (double)cost_kept_calls *
				       (double)cost_calls / (double)t->nr;
	}
out:
	if (s.q != NULL)
		queue_free(s.q);
	diskmodel_free(s.dm);
	free(s.issue_ns);
	free(s.done_ns);
	free(s.backlog);
	free(s.heap);
	free(s.next_of);
	return ret;
}

void replay_result_free(struct replay_result *res)
{
	free(res->lat[0]);
	free(res->lat[1]);
	free(res->buckets);
	memset(res, 0, sizeof *res);
}
