/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One trace through one scheduler, in simulated time.
 *
 * The requests go through the daemon's own queue (queue.c: merging, the
 * nr_requests limit of each direction, wake-ups) with the scheduler module
 * the mount would load, on a virtual clock that jumps from event to event:
 * an arrival, the end of a service, a completion, a wake-up the scheduler
 * asked for.  The device is diskmodel.c's, as the mount's dispatch workers
 * drive it: at most `threads` ios in flight (a worker holds each from
 * dispatch to completion); the hdd (and "none", its transfer time only)
 * serves one at a time and picks the next when its head frees; the ssd
 * takes an io whenever a worker is free and serves it on its channels.
 * Nothing sleeps and no I/O is done, so a replay is fast and, with ties
 * broken by trace order, the same every time.
 *
 * The host's times: on a mount an io completes some time after the model
 * has served it (the worker wakes and replies to FUSE, or its syscall,
 * performed from dispatch on, outlasts the model's service),
 * while the device already serves the next; and it starts some time after
 * the device could have taken it (the worker wakes to dispatch it).  The
 * replay starts each io a lag after its dispatch and completes it an
 * overhead (per direction: a large write's syscall costs more than a
 * read's) after its service ends, taking in turn the values a trace of
 * ours recorded (sim_host_times: its D and C events give them).
 *
 * Open loop issues each request at its recorded time.  Closed loop issues
 * a process's next request when its previous one has completed, plus the
 * think time the trace shows: what makes anticipation and per-process
 * idling pay off or not.  Time-based (closed loop) runs for a duration as
 * fio's time_based does: a process that comes to the end of its requests
 * starts again from its first, and none is issued after the duration.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replay.h"

#define REPLAY_PLOT_BUCKETS 200

/* A part with the trace request it stands for. */
struct replay_part {
	struct io_part part;
	size_t idx;
	uint64_t issue_ns;
	struct replay_part *free_next;	/* on replay_state.free_parts */
};

/*
 * An io, or on replay_state.free_ios its place.  ios and parts are
 * reused, not freed: the pools grow to the most held at once (queued, in
 * flight), and a replay does no allocation per request after that.
 */
union replay_io {
	struct io io;
	union replay_io *free_next;
};

/* A closed-loop arrival: the heap's entries. */
struct replay_arrival {
	uint64_t at_ns;
	size_t idx;
};

/* An io a worker took: the device frees at free_ns, it completes at
 * done_ns (free_ns plus the host overhead). */
struct replay_flight {
	struct io *io;
	uint64_t free_ns, done_ns;
};

/*
 * A request of one direction refused a slot: its trace index and when it
 * arrived.  Its io goes back to the pool meanwhile (a backlog of open
 * loop can be most of the trace) and is built again for each try.
 */
struct replay_wait {
	size_t idx;
	uint64_t issue_ns;
};

/* Requests of one direction refused a slot, first in first out. */
struct replay_fifo {
	struct replay_wait *v;
	size_t head, tail, cap;
};

/* A completed request, for the throughput buckets. */
struct replay_done {
	uint64_t done_ns;
	uint64_t bytes;
};

/* A process's share, for Jain's index. */
struct replay_acc {
	uint64_t bytes, first_ns, last_ns;
};

struct replay_state {
	const struct replay_trace *t;
	const struct replay_opts *o;
	struct queue *q;
	struct diskmodel *dm;	/* NULL: "none" */
	uint64_t now;
	uint64_t wake_ns;	/* a scheduler wake-up due, or 0 */
	uint64_t kicked_ns;	/* when the last wake-up was served */
	bool kicked;
	uint64_t stop_ns;	/* nothing issued from then (time-based) */

	struct replay_flight *flight;	/* o->threads at most */
	unsigned nr_flight;
	uint64_t head_free_ns;	/* hdd, none: when the head is free */
	/* The next of o's recorded host times to use, of each kind. */
	size_t next_overhead[2], next_lag[2];

	size_t cursor;		/* open loop: the next request */
	struct replay_arrival *heap;	/* closed loop: by time, index */
	size_t nr_heap;
	size_t *next_of;	/* closed loop: a process's next request */
	size_t *first_of;	/* time-based: a process's first request */
	struct replay_fifo wait[2];	/* refused a slot, per direction */
	/*
	 * Bumped by every call that may change the queue or the scheduler
	 * (a request taken, a dispatch asked, a completion, a wake-up).  A
	 * refused request is tried again only once gen moved past
	 * tried_gen[dir], when its last try failed: the same try would fail
	 * again (merge and slot checks are pure), and in a backlog of open
	 * loop most events are arrivals that change nothing.
	 */
	uint64_t gen, tried_gen[2];
	struct replay_part *free_parts;	/* for reuse: malloc costs */
	union replay_io *free_ios;
	uint64_t parts_in, parts_done;

	/* Results, as requests complete. */
	uint64_t *lat[2];
	size_t nr_lat[2], cap_lat[2];
	struct replay_done *done;
	size_t nr_done, cap_done;
	struct replay_acc *procs;
	uint64_t first_ns, last_ns, bytes;
	uint32_t *cg_weight;	/* of t->cgroups, from o->weights */
};

/* ------------------------------------------------------------------ */
/* The scheduler's CPU cost: its hooks timed on the real clock.        */

static const struct elevator_type *cost_type;	/* single-threaded */
static uint64_t cost_total_ns, cost_calls;

static uint64_t sim_real_ns(void)
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
#define COST_BEGIN uint64_t cost_t0 = sim_real_ns()
#define COST_END sim_cost_end(cost_t0)

static uint64_t cost_kept_calls;

static void sim_cost_end(uint64_t t0)
{
	uint64_t d = sim_real_ns() - t0;

	cost_calls++;
	if (d < COST_PREEMPTED_NS) {
		cost_total_ns += d;
		cost_kept_calls++;
	}
}

static bool sim_cost_allow_merge(struct elevator_queue *eq,
				 const struct elv_request *rq,
				 const struct elv_request *next,
				 enum elv_merge type)
{
	bool ok;
	COST_BEGIN;

	ok = cost_type->allow_merge(eq, rq, next, type);
	COST_END;
	return ok;
}

static enum elv_may_queue sim_cost_may_queue(struct elevator_queue *eq,
					     const struct elv_request *rq)
{
	enum elv_may_queue m;
	COST_BEGIN;

	m = cost_type->may_queue(eq, rq);
	COST_END;
	return m;
}

static void sim_cost_merged(struct elevator_queue *eq, struct elv_request *rq,
			    enum elv_merge type)
{
	COST_BEGIN;

	cost_type->merged(eq, rq, type);
	COST_END;
}

static void sim_cost_merged_requests(struct elevator_queue *eq,
				     struct elv_request *rq,
				     struct elv_request *next)
{
	COST_BEGIN;

	cost_type->merged_requests(eq, rq, next);
	COST_END;
}

static void sim_cost_add_request(struct elevator_queue *eq,
				 struct elv_request *rq, uint64_t now_ns)
{
	COST_BEGIN;

	cost_type->add_request(eq, rq, now_ns);
	COST_END;
}

static struct elv_request *sim_cost_dispatch(struct elevator_queue *eq,
				     uint64_t now_ns, bool force)
{
	struct elv_request *rq;
	COST_BEGIN;

	rq = cost_type->dispatch(eq, now_ns, force);
	COST_END;
	return rq;
}

static void sim_cost_completed(struct elevator_queue *eq,
			       struct elv_request *rq, uint64_t now_ns)
{
	COST_BEGIN;

	cost_type->completed(eq, rq, now_ns);
	COST_END;
}

static bool sim_cost_has_work(struct elevator_queue *eq)
{
	bool w;
	COST_BEGIN;

	w = cost_type->has_work(eq);
	COST_END;
	return w;
}

/* type with every hook it has wrapped in a timer. */
static void sim_timed_type(const struct elevator_type *type,
			   struct elevator_type *timed)
{
	const struct elevator_type *o = type;

	*timed = *type;
	cost_type = type;
	cost_total_ns = 0;
	cost_calls = 0;
	cost_kept_calls = 0;
	timed->allow_merge = o->allow_merge ? sim_cost_allow_merge : NULL;
	timed->may_queue = o->may_queue ? sim_cost_may_queue : NULL;
	timed->merged = o->merged ? sim_cost_merged : NULL;
	timed->merged_requests = o->merged_requests ?
				 sim_cost_merged_requests : NULL;
	timed->add_request = sim_cost_add_request;
	timed->dispatch = sim_cost_dispatch;
	timed->completed = o->completed ? sim_cost_completed : NULL;
	timed->has_work = sim_cost_has_work;
}

/*
 * What timing a call adds: about one clock read.  The least over many
 * short batches, so that preemption does not inflate it.
 */
static double sim_clock_overhead(void)
{
	uint64_t best = UINT64_MAX, t0, t;
	unsigned i, j;

	for (i = 0; i < 200; i++) {
		t0 = sim_real_ns();
		for (j = 0; j < 1000; j++) {
			COST_BEGIN;
			(void)cost_t0;
		}
		t = sim_real_ns() - t0;
		if (t < best)
			best = t;
	}
	return (double)best / 1000;
}

/* ------------------------------------------------------------------ */
/* The queue's host services, on the virtual clock.                    */

static uint64_t sim_clock(void *arg)
{
	const struct replay_state *s = arg;

	return s->now;
}

static void sim_wakeup(void *arg, uint64_t at_ns)
{
	struct replay_state *s = arg;

	if (s->wake_ns == 0 || at_ns < s->wake_ns)
		s->wake_ns = at_ns;
}

/* ------------------------------------------------------------------ */
/* Closed-loop arrivals: a binary heap by (time, trace index).         */

static bool sim_before(const struct replay_arrival *a,
		       const struct replay_arrival *b)
{
	return a->at_ns < b->at_ns || (a->at_ns == b->at_ns && a->idx < b->idx);
}

static void sim_heap_push(struct replay_state *s, uint64_t at, size_t idx)
{
	size_t i = s->nr_heap++, parent;
	struct replay_arrival a = { at, idx };

	while (i > 0) {
		parent = (i - 1) / 2;
		if (!sim_before(&a, &s->heap[parent]))
			break;
		s->heap[i] = s->heap[parent];
		i = parent;
	}
	s->heap[i] = a;
}

static void sim_heap_pop(struct replay_state *s)
{
	struct replay_arrival last = s->heap[--s->nr_heap];
	size_t i = 0, c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= s->nr_heap)
			break;
		if (c + 1 < s->nr_heap && sim_before(&s->heap[c + 1],
						     &s->heap[c]))
			c++;
		if (!sim_before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
		i = c;
	}
	if (s->nr_heap > 0)
		s->heap[i] = last;
}

/* The time of the next arrival, and its request; false if none. */
static bool sim_peek(const struct replay_state *s, uint64_t *at,
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

static void sim_pop(struct replay_state *s)
{
	if (s->o->closed_loop)
		sim_heap_pop(s);
	else
		s->cursor++;
}

/* ------------------------------------------------------------------ */
/* Growing arrays.                                                     */

static int sim_grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 1024;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*v, n * size);
	if (p == NULL)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

static int sim_fifo_push(struct replay_fifo *f, size_t idx,
			 uint64_t issue_ns)
{
	if (f->tail == f->cap && f->head > 0) {
		memmove(f->v, f->v + f->head, (f->tail - f->head) * sizeof *f->v);
		f->tail -= f->head;
		f->head = 0;
	}
	if (sim_grow((void **)&f->v, &f->cap, f->tail + 1, sizeof *f->v))
		return -ENOMEM;
	f->v[f->tail++] = (struct replay_wait){ idx, issue_ns };
	return 0;
}

/* ------------------------------------------------------------------ */
/* Requests in and out of the queue.                                   */

/* io back to the pool: done, refused a slot, or emptied by a merge. */
static void sim_io_put(struct replay_state *s, struct io *io)
{
	union replay_io *u = elv_container_of(io, union replay_io, io);

	u->free_next = s->free_ios;
	s->free_ios = u;
}

static void sim_free_shell(void *arg, struct io *io)
{
	sim_io_put(arg, io);
}

static void sim_part_put(struct replay_state *s, struct replay_part *rp)
{
	rp->free_next = s->free_parts;
	s->free_parts = rp;
}

/* The io of request idx, issued at issue_ns, from the pools. */
static struct io *sim_io(struct replay_state *s, size_t idx,
			 uint64_t issue_ns)
{
	const struct replay_rq *r = &s->t->rq[idx];
	union replay_io *u = s->free_ios;
	struct replay_part *rp = s->free_parts;
	struct io *io;

	if (u != NULL)
		s->free_ios = u->free_next;
	else
		u = malloc(sizeof *u);
	if (rp != NULL)
		s->free_parts = rp->free_next;
	else
		rp = malloc(sizeof *rp);
	if (u == NULL || rp == NULL) {
		free(u);
		free(rp);
		return NULL;
	}
	io = &u->io;
	io_init(io, &rp->part, r->write ? ELV_WRITE : ELV_READ, 0,
		r->sector << IOSCHED_SECTOR_SHIFT,
		(size_t)r->nr_sectors << IOSCHED_SECTOR_SHIFT);
	rp->idx = idx;
	rp->issue_ns = issue_ns;
	io->rq.sync = r->sync;
	io->rq.sync_write = r->sync_write;
	io->rq.sector = r->sector;
	/* Distinct, non-zero: per-process schedulers key on it. */
	io->rq.pid = (pid_t)r->proc + 1;
	io->rq.cgroup = r->cgroup;
	io->rq.ioprio = IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_BE, 4);
	return io;
}

/*
 * Submit request idx, issued at issue_ns (again: refused before, and
 * arrived then).  Refused a slot, its io and part go back to the pools
 * and *full is set.
 */
static int sim_submit(struct replay_state *s, size_t idx,
		      uint64_t issue_ns, bool again, bool *full)
{
	struct io *io = sim_io(s, idx, issue_ns);

	if (io == NULL)
		return -ENOMEM;
	/* What the queue set when it first arrived. */
	if (again)
		io->rq.arrival_ns = issue_ns;
	*full = queue_submit_nowait(s->q, io, again) == QUEUE_FULL;
	if (*full) {
		sim_part_put(s, elv_container_of(io->parts,
						 struct replay_part, part));
		sim_io_put(s, io);
	} else {
		s->parts_in++;
		s->gen++;
	}
	return 0;
}

/*
 * Requests refused a slot try again, oldest first in each direction, as
 * the mount's waiting submitters do when a completion frees one; then the
 * arrivals due by now, each of which may merge, take a slot or wait.
 */
static int sim_arrive(struct replay_state *s)
{
	struct replay_fifo *f;
	bool full = false;
	uint64_t at;
	size_t idx;
	int d;

	for (d = 0; d < 2; d++) {
		f = &s->wait[d];
		while (f->head < f->tail && s->tried_gen[d] != s->gen) {
			if (sim_submit(s, f->v[f->head].idx,
				       f->v[f->head].issue_ns, true,
				       &full) != 0)
				return -ENOMEM;
			if (full)
				s->tried_gen[d] = s->gen;
			else
				f->head++;
		}
	}
	while (sim_peek(s, &at, &idx) && at <= s->now) {
		sim_pop(s);
		if (at >= s->stop_ns)
			continue;
		if (sim_submit(s, idx, s->now, false, &full) != 0)
			return -ENOMEM;
		d = s->t->rq[idx].write ? ELV_WRITE : ELV_READ;
		if (full && sim_fifo_push(&s->wait[d], idx, s->now) != 0)
			return -ENOMEM;
	}
	return 0;
}

/* The next host time of seq, in turn, or the median if it has none. */
static uint64_t sim_seq_next(const struct replay_host_seq *seq,
			     size_t *next, uint64_t median)
{
	uint64_t x;

	if (seq->n == 0)
		return median;
	x = seq->v[*next];
	*next = *next + 1 == seq->n ? 0 : *next + 1;
	return x;
}

/* Does the device's single head still serve an io (hdd, none)? */
static bool sim_head_busy(const struct replay_state *s)
{
	return s->o->model != REPLAY_MODEL_SSD && s->head_free_ns > s->now;
}

/* Free workers take what the elevator hands out, while the device can. */
static void sim_dispatch(struct replay_state *s)
{
	struct replay_flight *f;
	uint64_t start;
	struct io *io;
	int k, d;

	while (s->nr_flight < s->o->threads && !sim_head_busy(s)) {
		io = queue_try_next(s->q);
		s->gen++;
		if (io == NULL)
			return;
		f = &s->flight[s->nr_flight++];
		f->io = io;
		/* The mount's worker reaches the device late (lag_ns):
		 * after the head freed, or after io arrived. */
		k = io->rq.arrival_ns < s->head_free_ns &&
		    s->o->model != REPLAY_MODEL_SSD ? REPLAY_LAG_HEAD :
						     REPLAY_LAG_ARRIVAL;
		start = s->now + sim_seq_next(&s->o->lag_seq[k],
					      &s->next_lag[k],
					      s->o->lag_ns[k]);
		if (s->dm != NULL)
			f->free_ns = diskmodel_book(s->dm, &io->rq, start);
		else
			f->free_ns = start + io->rq.bytes * 1000 /
					     s->o->mb_per_s;
		d = io->rq.dir;
		f->done_ns = f->free_ns +
			     sim_seq_next(&s->o->overhead_seq[d],
					  &s->next_overhead[d],
					  s->o->overhead_ns[d]);
		if (f->free_ns > s->head_free_ns)
			s->head_free_ns = f->free_ns;
	}
}

static int sim_record(struct replay_state *s, const struct replay_part *rp)
{
	const struct replay_rq *r = &s->t->rq[rp->idx];
	struct replay_acc *a = &s->procs[r->proc];
	uint64_t bytes = rp->part.len;
	int d = r->write;

	if (sim_grow((void **)&s->lat[d], &s->cap_lat[d], s->nr_lat[d] + 1,
		     sizeof *s->lat[d]) != 0)
		return -ENOMEM;
	s->lat[d][s->nr_lat[d]++] = s->now - rp->issue_ns;
	s->nr_done++;
	/* Each completion's time only for --plot's throughput buckets. */
	if (s->o->plot) {
		if (sim_grow((void **)&s->done, &s->cap_done, s->nr_done,
			     sizeof *s->done) != 0)
			return -ENOMEM;
		s->done[s->nr_done - 1].done_ns = s->now;
		s->done[s->nr_done - 1].bytes = bytes;
	}
	s->bytes += bytes;
	if (rp->issue_ns < s->first_ns)
		s->first_ns = rp->issue_ns;
	s->last_ns = s->now;
	a->bytes += bytes;
	if (rp->issue_ns < a->first_ns)
		a->first_ns = rp->issue_ns;
	a->last_ns = s->now;
	return 0;
}

/* The process's request after idx, closed loop: at its think time. */
static void sim_follow(struct replay_state *s, size_t idx)
{
	size_t n = s->next_of[idx];
	uint64_t at;

	if (n == SIZE_MAX && s->first_of != NULL)
		n = s->first_of[s->t->rq[idx].proc];
	if (n == SIZE_MAX)
		return;
	at = s->now + s->t->rq[n].think_ns;
	if (at < s->stop_ns)
		sim_heap_push(s, at, n);
}

static int sim_complete(struct replay_state *s, struct io *io)
{
	struct io_part *p, *next;
	int err = 0;

	for (p = io->parts; p != NULL; p = p->next) {
		struct replay_part *rp = elv_container_of(p,
						struct replay_part, part);

		p->result = (ssize_t)p->len;
		if (err == 0)
			err = sim_record(s, rp);
		if (s->o->closed_loop)
			sim_follow(s, rp->idx);
		s->parts_done++;
	}
	queue_done(s->q, io);
	s->gen++;
	for (p = io->parts; p != NULL; p = next) {
		struct replay_part *rp = elv_container_of(p,
						struct replay_part, part);

		next = p->next;
		sim_part_put(s, rp);
	}
	sim_io_put(s, io);
	return err;
}

/* Complete, in dispatch order, the ios whose time has come. */
static int sim_complete_due(struct replay_state *s)
{
	unsigned i = 0;
	int err;

	while (i < s->nr_flight) {
		struct io *io = s->flight[i].io;

		if (s->flight[i].done_ns > s->now) {
			i++;
			continue;
		}
		memmove(&s->flight[i], &s->flight[i + 1],
			(s->nr_flight - i - 1) * sizeof *s->flight);
		s->nr_flight--;
		err = sim_complete(s, io);
		if (err != 0)
			return err;
	}
	return 0;
}

/* The time of the next event after now, or UINT64_MAX. */
static uint64_t sim_next_event(const struct replay_state *s)
{
	uint64_t next = UINT64_MAX, at;
	size_t idx;
	unsigned i;

	for (i = 0; i < s->nr_flight; i++) {
		const struct replay_flight *f = &s->flight[i];

		if (f->done_ns < next)
			next = f->done_ns;
		/* A head that frees lets the next io start. */
		if (f->free_ns > s->now && f->free_ns < next)
			next = f->free_ns;
	}
	if (sim_peek(s, &at, &idx) && at < next)
		next = at < s->now ? s->now : at;
	/*
	 * A wake-up asked again for now or earlier, right after one was
	 * served at now, is no event: a scheduler that holds requests and
	 * asks that waits for something else (a completion) and would spin
	 * on the mount's timer meanwhile; here it is served with the next.
	 */
	if (s->wake_ns != 0 && s->wake_ns <= s->now && s->kicked &&
	    s->kicked_ns == s->now)
		return next;
	if (s->wake_ns != 0 && s->wake_ns < next)
		next = s->wake_ns > s->now ? s->wake_ns : s->now;
	return next;
}

/* ------------------------------------------------------------------ */
/* The run.                                                            */

static int sim_loop(struct replay_state *s)
{
	bool stopped = false;
	uint64_t next;
	int err;

	for (;;) {
		err = sim_complete_due(s);
		if (err != 0)
			return err;
		if (s->wake_ns != 0 && s->wake_ns <= s->now) {
			s->wake_ns = 0;
			s->kicked = true;
			s->kicked_ns = s->now;
			queue_kick(s->q);
			s->gen++;
		}
		err = sim_arrive(s);
		if (err != 0)
			return err;
		sim_dispatch(s);

		next = sim_next_event(s);
		if (next == UINT64_MAX) {
			if (s->parts_done == s->parts_in &&
			    s->wait[0].head == s->wait[0].tail &&
			    s->wait[1].head == s->wait[1].tail)
				return 0;
			/* Held with no wake-up asked: make it let go. */
			if (stopped)
				return -EDEADLK;
			queue_stop(s->q);
			s->gen++;
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

static int sim_tunable_apply(struct elevator_queue *eq, void *arg)
{
	const struct replay_tunable_op *op = arg;

	return elv_tunable_set(eq, op->name, op->value);
}

/* -o NAME=VALUE for the tunables type has; the others are not its. */
static int sim_tunables(struct replay_state *s,
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
			ret = queue_with_elevator(s->q, sim_tunable_apply,
						  &op);
		if (ret != 0) {
			snprintf(err, size, "-o %s: %s for %s", opt,
				 strerror(-ret), type->name);
			return -1;
		}
	}
	return 0;
}

/*
 * Sort n latencies: least significant byte first, skipping the bytes
 * all share (the high ones, mostly).  qsort was a tenth of a replay.
 */
static int replay_sort_u64(uint64_t *v, size_t n)
{
	uint64_t *tmp, *src = v, *dst, all_or = 0, all_and = UINT64_MAX;
	size_t count[256], i, sum;
	unsigned shift;

	for (i = 0; i < n; i++) {
		all_or |= v[i];
		all_and &= v[i];
	}
	tmp = malloc((n ? n : 1) * sizeof *tmp);
	if (tmp == NULL)
		return -ENOMEM;
	dst = tmp;
	for (shift = 0; shift < 64; shift += 8) {
		if ((((all_or ^ all_and) >> shift) & 0xff) == 0)
			continue;
		memset(count, 0, sizeof count);
		for (i = 0; i < n; i++)
			count[(src[i] >> shift) & 0xff]++;
		for (i = 0, sum = 0; i < 256; i++) {
			size_t c = count[i];

			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0xff]++] = src[i];
		src = dst;
		dst = src == v ? tmp : v;
	}
	if (src != v)
		memcpy(v, src, n * sizeof *v);
	free(tmp);
	return 0;
}

/* Jain's index over processes of their throughput while active. */
static double sim_jain(const struct replay_state *s)
{
	double sum = 0, sq = 0, x;
	unsigned n = 0;
	uint32_t i;

	for (i = 0; i < s->t->nr_procs; i++) {
		const struct replay_acc *a = &s->procs[i];

		if (a->last_ns <= a->first_ns || a->first_ns == UINT64_MAX)
			continue;
		x = (double)a->bytes / (double)(a->last_ns - a->first_ns);
		sum += x;
		sq += x * x;
		n++;
	}
	return n == 0 || sq == 0 ? 1.0 : sum * sum / (n * sq);
}

static int sim_results(struct replay_state *s, struct replay_result *res)
{
	struct stats st;
	uint64_t span;
	size_t i, b;
	int d;

	queue_get_stats(s->q, &st);
	res->requests = s->nr_done;
	res->merges = st.dir[0].merges + st.dir[1].merges;
	res->bytes = s->bytes;
	res->start_ns = s->nr_done > 0 ? s->first_ns : 0;
	res->end_ns = s->nr_done > 0 ? s->last_ns : 0;
	for (d = 0; d < 2; d++) {
		res->lat[d] = s->lat[d];
		res->nr_lat[d] = s->nr_lat[d];
		s->lat[d] = NULL;
		if (replay_sort_u64(res->lat[d], res->nr_lat[d]) != 0)
			return -ENOMEM;
	}
	span = res->end_ns - res->start_ns;
	res->bucket_ns = (span + REPLAY_PLOT_BUCKETS - 1) / REPLAY_PLOT_BUCKETS;
	if (res->bucket_ns < 1000000)
		res->bucket_ns = 1000000;
	res->nr_buckets = (size_t)(span / res->bucket_ns) + 1;
	res->buckets = calloc(res->nr_buckets, sizeof *res->buckets);
	if (res->buckets == NULL)
		return -ENOMEM;
	for (i = 0; s->o->plot && i < s->nr_done; i++) {
		b = (size_t)((s->done[i].done_ns - res->start_ns) /
			     res->bucket_ns);
		res->buckets[b] += s->done[i].bytes;
	}
	res->jain = sim_jain(s);
	return 0;
}

/* Closed loop: each process's first request, and who follows whom. */
static int sim_closed_setup(struct replay_state *s)
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
			sim_heap_push(s, t->rq[last[i]].time_ns, last[i]);
	if (s->o->time_based)
		s->first_of = last;	/* each process's first, now */
	else
		free(last);
	return 0;
}

/* The device the options name: NULL for "none" (or with errno set). */
static struct diskmodel *sim_model_new(const struct replay_opts *o)
{
	errno = 0;
	switch (o->model) {
	case REPLAY_MODEL_HDD:
		return diskmodel_new(o->seek_ms, o->rpm, o->mb_per_s);
	case REPLAY_MODEL_SSD:
		return diskmodel_ssd_new(&o->ssd);
	default:
		return NULL;
	}
}

static int sim_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median of seq's values, or 0; seq's order is kept. */
static uint64_t sim_median(const struct replay_host_seq *seq)
{
	uint64_t *v, med;

	if (seq->n == 0)
		return 0;
	v = malloc(seq->n * sizeof *v);
	if (v == NULL)
		return 0;
	memcpy(v, seq->v, seq->n * sizeof *v);
	qsort(v, seq->n, sizeof *v, sim_cmp_u64);
	med = v[(seq->n - 1) / 2];
	free(v);
	return med;
}

/* Append a host time (a negative one counts as 0); seq has room. */
static void sim_seq_add(struct replay_host_seq *seq, int64_t x)
{
	seq->v[seq->n++] = x > 0 ? (uint64_t)x : 0;
}

void sim_host_times_free(struct replay_opts *o)
{
	int d;

	for (d = 0; d < 2; d++) {
		free(o->overhead_seq[d].v);
		free(o->lag_seq[d].v);
		o->overhead_seq[d] = (struct replay_host_seq){ NULL, 0 };
		o->lag_seq[d] = (struct replay_host_seq){ NULL, 0 };
	}
}

/*
 * A kind of lag the trace has too few of (an idle disk under a scheduler
 * that keeps requests queued: its first request, and a handful) says
 * nothing about the host: it is 0, as for a trace without D events.  The
 * other kind's values are no stand-in, its threads waking otherwise.
 */
#define REPLAY_LAG_MIN 32

static void sim_lag_few(struct replay_opts *o)
{
	int k;

	for (k = 0; k < 2; k++)
		if (o->lag_seq[k].n < REPLAY_LAG_MIN)
			o->lag_seq[k].n = 0;
}

/*
 * The mount's host times, from a trace of ours.  The model books the
 * trace's dispatches in their recorded order and at their recorded times.
 *
 * The overhead: the mount's service time (D to C) less the model's, per
 * direction.
 *
 * The lags: a mount's worker starts an io some time after the device
 * could take it, and the device waits meanwhile.  Each dispatch could have
 * come when its io had arrived (D less C's wait) and, on a single head,
 * the io before had been served.  Two ways apart, as their threads wake
 * differently: when the head freed with the io queued, the worker slept
 * until then (clock_nanosleep: the timer's slack, then a CPU);
 * when the io arrived at an idle device, a worker waiting in the queue is
 * woken by the submitter.  The lag is how much later the dispatch came.
 * An io a scheduler held back on purpose (anticipation) came at its own
 * arrival or at the timer, rarely much later.
 *
 * The replay uses the values in the order recorded, in turn: the mount's
 * are skewed (a busy machine delays some requests by milliseconds), and
 * throughput follows their mean, latency percentiles their spread.  The
 * medians are what the output shows.
 */
void sim_host_times(const struct replay_trace *t, struct replay_opts *o)
{
	struct diskmodel *dm = sim_model_new(o);
	uint64_t free_ns = 0;
	size_t i;
	int d;

	sim_host_times_free(o);
	memset(o->overhead_ns, 0, sizeof o->overhead_ns);
	memset(o->lag_ns, 0, sizeof o->lag_ns);
	if (t->nr_disp == 0 || (dm == NULL && errno != 0))
		goto out;
	for (d = 0; d < 2; d++) {
		o->overhead_seq[d].v = malloc(t->nr_disp * sizeof(uint64_t));
		o->lag_seq[d].v = malloc(t->nr_disp * sizeof(uint64_t));
		if (o->overhead_seq[d].v == NULL || o->lag_seq[d].v == NULL) {
			sim_host_times_free(o);
			goto out;
		}
	}
	for (i = 0; i < t->nr_disp; i++) {
		const struct replay_disp *p = &t->disp[i];
		struct elv_request rq = {
			.dir = p->write ? ELV_WRITE : ELV_READ,
			.sector = p->sector,
			.nr_sectors = p->nr_sectors,
			.bytes = (uint64_t)p->nr_sectors << IOSCHED_SECTOR_SHIFT,
		};
		uint64_t end = p->d_ns + rq.bytes * 1000 / o->mb_per_s;
		uint64_t ready;
		int k = REPLAY_LAG_ARRIVAL;

		if (dm != NULL)
			end = diskmodel_book(dm, &rq, p->d_ns);
		if (p->service_ns != UINT64_MAX)
			sim_seq_add(&o->overhead_seq[p->write],
				    (int64_t)p->service_ns -
				    (int64_t)(end - p->d_ns));
		if (p->wait_ns != UINT64_MAX) {
			ready = p->d_ns > p->wait_ns ? p->d_ns - p->wait_ns : 0;
			if (o->model != REPLAY_MODEL_SSD && free_ns > ready) {
				ready = free_ns;
				k = REPLAY_LAG_HEAD;
			}
			sim_seq_add(&o->lag_seq[k],
				    (int64_t)p->d_ns - (int64_t)ready);
		}
		free_ns = end;
	}
	sim_lag_few(o);
	for (d = 0; d < 2; d++) {
		o->overhead_ns[d] = sim_median(&o->overhead_seq[d]);
		o->lag_ns[d] = sim_median(&o->lag_seq[d]);
	}
out:
	diskmodel_free(dm);
}

/* The host's cgroup_weight: the -o weight of the trace's group n. */
static uint32_t sim_cgroup_weight(void *arg, uint64_t cgroup)
{
	const struct replay_state *s = arg;

	return cgroup >= 1 && cgroup <= s->t->nr_cgroups ?
		s->cg_weight[cgroup - 1] : ELV_CGROUP_WEIGHT_DEFAULT;
}

/*
 * Each group's weight, from the last of o->weights ("/path=weight",
 * checked by replay.c) naming it, else from its group section of the
 * configuration file, else the default (as the daemon without the
 * kernel's weight files).
 */
static int sim_weights(struct replay_state *s)
{
	const struct replay_opts *o = s->o;
	const struct config_group *g;
	const char *eq;
	uint32_t i;
	unsigned w;

	s->cg_weight = malloc((s->t->nr_cgroups + 1) * sizeof *s->cg_weight);
	if (s->cg_weight == NULL)
		return -1;
	for (i = 0; i < s->t->nr_cgroups; i++) {
		s->cg_weight[i] = ELV_CGROUP_WEIGHT_DEFAULT;
		for (g = o->groups_conf; g != NULL; g = g->next)
			if (g->weight != 0 &&
			    strcmp(g->path, s->t->cgroups[i]) == 0)
				s->cg_weight[i] = g->weight;
		for (w = 0; w < o->nr_weights; w++) {
			eq = strrchr(o->weights[w], '=');
			if ((size_t)(eq - o->weights[w]) ==
			    strlen(s->t->cgroups[i]) &&
			    strncmp(o->weights[w], s->t->cgroups[i],
				    (size_t)(eq - o->weights[w])) == 0)
				s->cg_weight[i] = (uint32_t)atoi(eq + 1);
		}
	}
	return 0;
}

int sim_run(const struct replay_trace *t, const struct elevator_type *type,
	    const struct replay_opts *o, struct replay_result *res,
	    char *err, size_t size)
{
	struct replay_state s = {
		.t = t,
		.o = o,
		.stop_ns = UINT64_MAX,
		.first_ns = UINT64_MAX,
		.tried_gen = { UINT64_MAX, UINT64_MAX },
	};
	struct queue_params qp = {
		.nr_requests = o->nr_requests,
		.clock = sim_clock,
		.clock_arg = &s,
		.wakeup_at = sim_wakeup,
		.wakeup_arg = &s,
		.free_shell = sim_free_shell,
		.free_shell_arg = &s,
		.cgroup_weight = sim_cgroup_weight,
		.cgroup_weight_arg = &s,
	};
	struct elevator_type timed;
	double overhead = 0;
	uint32_t i;
	int ret = -1;

	memset(res, 0, sizeof *res);
	if (o->cost) {
		overhead = sim_clock_overhead();
		sim_timed_type(type, &timed);
		type = &timed;
	}
	if (o->time_based)
		s.stop_ns = o->duration_ns ? o->duration_ns : t->span_ns;
	s.flight = calloc(o->threads, sizeof *s.flight);
	s.procs = malloc(t->nr_procs * sizeof *s.procs);
	if (s.flight == NULL || s.procs == NULL || sim_weights(&s) != 0 ||
	    (o->closed_loop && sim_closed_setup(&s) != 0)) {
		snprintf(err, size, "out of memory");
		goto out;
	}
	for (i = 0; i < t->nr_procs; i++)
		s.procs[i] = (struct replay_acc){ .first_ns = UINT64_MAX };
	s.dm = sim_model_new(o);
	if (s.dm == NULL && errno != 0) {
		snprintf(err, size, "disk model: %s", strerror(errno));
		goto out;
	}
	s.q = queue_new(&qp, type);
	if (s.q == NULL) {
		snprintf(err, size, "scheduler %s failed to start",
			 type->name);
		goto out;
	}
	if (sim_tunables(&s, type, err, size) != 0)
		goto out;
	ret = sim_loop(&s);
	if (ret != 0) {
		snprintf(err, size, "scheduler %s: %s", type->name,
			 ret == -EDEADLK ? "holds requests and asks for no "
			 "wake-up" : strerror(-ret));
		ret = -1;
		goto out;
	}
	if (sim_results(&s, res) != 0) {
		snprintf(err, size, "out of memory");
		ret = -1;
		goto out;
	}
	if (o->cost) {
		double net = (double)cost_total_ns - overhead * cost_kept_calls;

		if (net > 0 && cost_kept_calls > 0 && s.nr_done > 0)
			res->cost_ns = net / (double)cost_kept_calls *
				       (double)cost_calls / (double)s.nr_done;
	}
out:
	if (s.q != NULL)
		queue_free(s.q);
	diskmodel_free(s.dm);
	free(s.flight);
	free(s.procs);
	free(s.cg_weight);
	free(s.heap);
	free(s.next_of);
	free(s.first_of);
	free(s.wait[0].v);
	free(s.wait[1].v);
	free(s.lat[0]);
	free(s.lat[1]);
	free(s.done);
	while (s.free_parts != NULL) {
		struct replay_part *rp = s.free_parts;

		s.free_parts = rp->free_next;
		free(rp);
	}
	while (s.free_ios != NULL) {
		union replay_io *u = s.free_ios;

		s.free_ios = u->free_next;
		free(u);
	}
	return ret;
}

void sim_result_free(struct replay_result *res)
{
	free(res->lat[0]);
	free(res->lat[1]);
	free(res->buckets);
	memset(res, 0, sizeof *res);
}
