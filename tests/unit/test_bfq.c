/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bfq through the real queue, on the virtual clock.  A small simulation
 * plays one device: it dispatches one request at a time, holds it for the
 * process's cost (1 ms unless said otherwise), completes it, and lets the
 * process issue its next one after its think time.  Covered: sectors
 * shared by weight, equal shares, the class order and the idle class's
 * bound, weight raising of a starting reader against a backlogged writer
 * (and not with low_latency 0 or strict_guarantees 1), soft real-time
 * raising, idling and its end, force, the budget timeout, a priority
 * change, merging, and a switch away with requests queued and in flight;
 * and on a fast device, a queue preempted while empty.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pidq_cases.h"

static const struct elevator_type *bfq;

static struct queue *bfq_queue(void)
{
	return pq_queue(bfq);
}

/* The host's timer: the wake-up asked for has come. */
static void fire(struct queue *q)
{
	h_now = h_wakeup_ns;
	queue_kick(q);
}

/* ------------------------------------------------------------------ */
/* The simulated device and processes.                                 */

struct proc {
	/* Set by the test. */
	pid_t pid;
	int ioprio;
	enum elv_dir dir;		/* writes are async */
	unsigned depth;			/* requests kept outstanding */
	uint64_t sector;
	unsigned cost_ms;		/* device time per request, 0: 1 */
	unsigned think_ms;		/* after a completion */
	uint64_t start_ns;
	unsigned limit;			/* requests in all, 0: no end */
	uint64_t measure_from;		/* max_wait counts arrivals after */
	uint64_t stride;		/* sectors between requests, 0: 8 */

	/* Results. */
	unsigned issued, outstanding, served;
	uint64_t sectors;
	uint64_t first_ns;		/* first service, or UINT64_MAX */
	uint64_t last_ns;
	uint64_t max_gap_ns;		/* longest wait between services */
	uint64_t max_wait_ns;		/* longest queueing of a request */
	uint64_t done_ns;		/* last of limit completed */
	uint64_t next_at;		/* may issue again then */
};

static int sim_ids;		/* ids handed out, 1..sim_ids */
static unsigned sim_seen;	/* h_wakeups already armed */
static bool sim_armed;		/* a wake-up is pending */
static unsigned sim_stalls;	/* NULL with work, no wake-up: a hang */
static unsigned sim_pending;	/* requests in the queue */

static bool sim_may_issue(const struct proc *p)
{
	return p->outstanding < p->depth &&
		(p->limit == 0 || p->issued < p->limit);
}

static void sim_feed(struct queue *q, struct proc *procs, int n)
{
	struct proc *p;
	int i;

	for (i = 0; i < n; i++) {
		p = &procs[i];
		while (sim_may_issue(p) && h_now >= p->next_at) {
			p->sector += p->stride ? p->stride : 8;
			p->issued++;
			p->outstanding++;
			sim_pending++;
			queue_submit(q, pq_io(++sim_ids, p->pid, p->ioprio,
					   p->dir, p->sector));
		}
	}
}

static void sim_start(struct queue *q, struct proc *procs, int n)
{
	int i;

	sim_ids = 0;
	sim_seen = h_wakeups;
	sim_armed = false;
	sim_stalls = 0;
	sim_pending = 0;
	for (i = 0; i < n; i++) {
		procs[i].first_ns = UINT64_MAX;
		procs[i].next_at = procs[i].start_ns;
	}
}

/* The timer thread: kick the queue when the wake-up time has come. */
static void sim_timer(struct queue *q)
{
	if (h_wakeups != sim_seen) {
		sim_seen = h_wakeups;
		sim_armed = true;
	}
	if (sim_armed && h_now >= h_wakeup_ns) {
		sim_armed = false;
		queue_kick(q);
	}
}

/* Nothing dispatched: move the clock to the next event. */
static void sim_wait(struct proc *procs, int n)
{
	uint64_t next = UINT64_MAX;
	int i;

	if (sim_pending != 0 && !sim_armed)
		sim_stalls++;
	if (sim_armed && h_wakeup_ns > h_now)
		next = h_wakeup_ns;
	for (i = 0; i < n; i++)
		if (sim_may_issue(&procs[i]) && procs[i].next_at > h_now &&
		    procs[i].next_at < next)
			next = procs[i].next_at;
	h_now = next != UINT64_MAX ? next : h_now + H_MS;
}

static void sim_serve(struct queue *q, struct proc *procs, int n,
		      struct io *io)
{
	struct proc *p;
	int i;

	for (p = NULL, i = 0; i < n && p == NULL; i++)
		if (procs[i].pid == io->rq.pid)
			p = &procs[i];
	if (p == NULL) {
		fprintf(stderr, "io of unknown pid %d\n", (int)io->rq.pid);
		exit(1);
	}
	sim_pending--;
	if (io->rq.arrival_ns >= p->measure_from &&
	    h_now - io->rq.arrival_ns > p->max_wait_ns)
		p->max_wait_ns = h_now - io->rq.arrival_ns;
	if (p->first_ns == UINT64_MAX)
		p->first_ns = h_now;
	else if (h_now - p->last_ns > p->max_gap_ns)
		p->max_gap_ns = h_now - p->last_ns;
	p->last_ns = h_now;
	p->served++;
	p->sectors += io->rq.nr_sectors;
	h_now += (p->cost_ms ? p->cost_ms : 1) * H_MS;
	h_complete(q, io);
	p->outstanding--;
	p->next_at = h_now + p->think_ms * H_MS;
	if (p->limit != 0 && p->issued == p->limit && p->outstanding == 0)
		p->done_ns = h_now;
}

static void sim_run(struct queue *q, struct proc *procs, int n,
		    uint64_t until_ns)
{
	struct io *io;

	while (h_now < until_ns) {
		sim_feed(q, procs, n);
		sim_timer(q);
		io = queue_try_next(q);
		if (io == NULL) {
			sim_timer(q);
			sim_wait(procs, n);
			continue;
		}
		sim_serve(q, procs, n, io);
	}
}

/* Drain what is left (forced), check every io was done once, free q. */
static void sim_end(struct queue *q)
{
	CHECK_EQ(sim_stalls, 0);
	queue_stop(q);
	while (h_next_id(q) > 0)
		;
	CHECK_DONE(sim_ids);
	queue_free(q);
}

/* |a - b| is within pct percent of the larger. */
static bool within(double a, double b, double pct)
{
	double d = a > b ? a - b : b - a, m = a > b ? a : b;

	return m > 0 && d * 100 <= m * pct;
}

/* ------------------------------------------------------------------ */
/* Fair shares.                                                        */

/*
 * Level 0 against level 7, no raising: weights 80 and 10, so sectors
 * 8:1.  Budgets of 128 sectors end by exhaustion, not by timeout.
 */
static void test_weights(void)
{
	struct queue *q = bfq_queue();
	struct proc procs[2] = {
		{ .pid = 1001, .ioprio = BE(0), .dir = ELV_READ, .depth = 1 },
		{ .pid = 1002, .ioprio = BE(7), .dir = ELV_READ, .depth = 1,
		  .sector = 1000000 },
	};
	double ratio;

	h_set_tunable(q, "low_latency", 0);
	h_set_tunable(q, "max_budget", 128);
	sim_start(q, procs, 2);
	sim_run(q, procs, 2, 3000 * H_MS);
	ratio = procs[1].sectors ?
		(double)procs[0].sectors / (double)procs[1].sectors : 0;
	CHECK(ratio >= 8 * 0.8 && ratio <= 8 * 1.2);
	if (!(ratio >= 8 * 0.8 && ratio <= 8 * 1.2))
		fprintf(stderr, "  BE0 %" PRIu64 ", BE7 %" PRIu64 " sectors\n",
			procs[0].sectors, procs[1].sectors);
	CHECK(procs[0].served + procs[1].served >= 2900);
	CHECK(h_counter(q, "expired_budget_exhausted") >= 100);
	sim_end(q);
}

/*
 * The same readers thinking 1 ms between requests, as a process does
 * whose next read comes after it had its data: each queue is empty when
 * its budget runs out, by exhaustion (max_budget 128) or by the budget
 * timeout (max_budget 0: 16384 sectors take longer than 125 ms).  The
 * weights must still decide (the kernel expires such a queue only once
 * its next request is there, so that it stays on the schedule).
 */
static void weights_thinking(int64_t max_budget)
{
	struct queue *q = bfq_queue();
	struct proc procs[2] = {
		{ .pid = 1001, .ioprio = BE(0), .dir = ELV_READ, .depth = 1,
		  .think_ms = 1 },
		{ .pid = 1002, .ioprio = BE(7), .dir = ELV_READ, .depth = 1,
		  .think_ms = 1, .sector = 1000000 },
	};
	double ratio;

	h_set_tunable(q, "low_latency", 0);
	h_set_tunable(q, "max_budget", max_budget);
	sim_start(q, procs, 2);
	sim_run(q, procs, 2, 6000 * H_MS);
	ratio = procs[1].sectors ?
		(double)procs[0].sectors / (double)procs[1].sectors : 0;
	/* Loose: the weights' 8, not the 1 of taking turns. */
	CHECK(ratio >= 5);
	if (ratio < 5)
		fprintf(stderr, "  max_budget %" PRId64 ": BE0 %" PRIu64
			", BE7 %" PRIu64 " sectors\n", max_budget,
			procs[0].sectors, procs[1].sectors);
	sim_end(q);
}

static void test_weights_thinking(void)
{
	weights_thinking(128);
	weights_thinking(0);
}

/* Two equal readers share equally, by budget or by timeout. */
static void equal(unsigned depth, int64_t max_budget)
{
	struct queue *q = bfq_queue();
	struct proc procs[2] = {
		{ .pid = 1001, .ioprio = BE(4), .dir = ELV_READ,
		  .depth = depth },
		{ .pid = 1002, .ioprio = BE(4), .dir = ELV_READ,
		  .depth = depth, .sector = 1000000 },
	};

	h_set_tunable(q, "max_budget", max_budget);
	sim_start(q, procs, 2);
	sim_run(q, procs, 2, 2000 * H_MS);
	CHECK(within((double)procs[0].sectors, (double)procs[1].sectors, 10));
	if (!within((double)procs[0].sectors, (double)procs[1].sectors, 10))
		fprintf(stderr, "  depth %u, max_budget %" PRId64 ": %" PRIu64
			" vs %" PRIu64 " sectors\n", depth, max_budget,
			procs[0].sectors, procs[1].sectors);
	CHECK(procs[0].served + procs[1].served >= 1900);
	/* Budgets, not request by request. */
	CHECK(procs[0].max_gap_ns >= 50 * H_MS);
	sim_end(q);
}

static void test_equal(void)
{
	equal(1, 0);
	equal(4, 0);
	equal(1, 512);
	equal(4, 512);
}

/* ------------------------------------------------------------------ */
/* Classes.                                                            */

/*
 * Real-time first, always: best-effort gets nothing while a real-time
 * reader is greedy.  The idle class is picked at the first choice of a
 * queue once 200 ms have passed since it was last considered
 * (BFQ_CL_IDLE_TIMEOUT): it does not take the device from the queue in
 * service, so it waits up to one budget timeout more.
 */
static void test_class_order(void)
{
	struct queue *q = bfq_queue();
	struct proc procs[3] = {
		{ .pid = 1001, .ioprio = RT(4), .dir = ELV_READ, .depth = 1 },
		{ .pid = 1002, .ioprio = BE(0), .dir = ELV_READ, .depth = 1,
		  .sector = 1000000 },
		{ .pid = 1003, .ioprio = IDLE, .dir = ELV_READ, .depth = 1,
		  .sector = 2000000 },
	};

	sim_start(q, procs, 3);
	sim_run(q, procs, 3, 1050 * H_MS);
	CHECK_EQ(procs[1].served, 0);
	CHECK(procs[2].first_ns >= 200 * H_MS);
	CHECK(procs[2].first_ns <= 327 * H_MS);
	CHECK(procs[2].max_gap_ns <= 327 * H_MS);
	CHECK(procs[2].served >= 3 && procs[2].served <= 6);
	CHECK(procs[0].served >= 1040);
	sim_end(q);

	/* Best-effort over idle, with the same bound. */
	q = bfq_queue();
	procs[0] = (struct proc){ .pid = 1002, .ioprio = BE(7),
				  .dir = ELV_READ, .depth = 1 };
	procs[1] = (struct proc){ .pid = 1003, .ioprio = IDLE,
				  .dir = ELV_READ, .depth = 1,
				  .sector = 2000000 };
	sim_start(q, procs, 2);
	sim_run(q, procs, 2, 1050 * H_MS);
	CHECK(procs[1].first_ns >= 200 * H_MS);
	CHECK(procs[1].max_gap_ns <= 327 * H_MS);
	CHECK(procs[1].served >= 3 && procs[1].served <= 6);
	sim_end(q);

	/* A real-time arrival takes the device from best-effort at once. */
	q = bfq_queue();
	procs[0] = (struct proc){ .pid = 1002, .ioprio = BE(0),
				  .dir = ELV_READ, .depth = 4 };
	procs[1] = (struct proc){ .pid = 1001, .ioprio = RT(7),
				  .dir = ELV_READ, .depth = 1,
				  .sector = 2000000, .limit = 10,
				  .start_ns = 300 * H_MS };
	sim_start(q, procs, 2);
	sim_run(q, procs, 2, 500 * H_MS);
	CHECK(procs[1].first_ns <= 301 * H_MS);
	CHECK(procs[1].done_ns <= 311 * H_MS);
	sim_end(q);

	/* With nobody else, the idle class is served at full speed. */
	q = bfq_queue();
	procs[0] = (struct proc){ .pid = 1003, .ioprio = IDLE,
				  .dir = ELV_READ, .depth = 1 };
	sim_start(q, procs, 1);
	sim_run(q, procs, 1, 100 * H_MS);
	CHECK(procs[0].served >= 99);
	sim_end(q);
}

/* ------------------------------------------------------------------ */
/* Low latency.                                                        */

/*
 * A reader starting at 300 ms reads 30 blocks while a greedy reader keeps
 * the device (a writer would not: an async queue in service is not worth
 * idling for, so any sync arrival takes the device from it, raised or
 * not).  Returns how long its reads took (ms).
 */
static unsigned startup(int64_t low_latency, int64_t strict)
{
	struct queue *q = bfq_queue();
	struct proc procs[2] = {
		{ .pid = 2001, .ioprio = BE(3), .dir = ELV_READ,
		  .depth = 1 },
		{ .pid = 3001, .ioprio = BE(4), .dir = ELV_READ, .depth = 1,
		  .sector = 5000000, .limit = 30, .start_ns = 300 * H_MS },
	};
	unsigned ms;

	h_set_tunable(q, "low_latency", low_latency);
	h_set_tunable(q, "strict_guarantees", strict);
	sim_start(q, procs, 2);
	sim_run(q, procs, 2, 800 * H_MS);
	CHECK_EQ(procs[1].served, 30);
	ms = (unsigned)((procs[1].done_ns - procs[1].start_ns) / H_MS);
	/* The greedy reader goes on afterwards. */
	CHECK(procs[0].last_ns >= 700 * H_MS);
	/* Only the reader of the default level 4 is raised. */
	CHECK_EQ(h_counter(q, "wr_interactive_starts"), low_latency ? 1 : 0);
	sim_end(q);
	return ms;
}

static void test_weight_raising(void)
{
	unsigned raised = startup(1, 0), plain = startup(0, 0);
	unsigned strict = startup(1, 1);

	/* 30 ms on an idle device: raised, it takes hardly more. */
	CHECK(raised <= 35);
	/* Otherwise it waits for the writer's budget first. */
	CHECK(plain >= 60);
	/* strict_guarantees leaves raising alone, as the kernel's. */
	CHECK(strict <= 40);
	if (raised > 35 || plain < 60 || strict > 40)
		fprintf(stderr, "  startup: raised %u ms, plain %u ms, "
			"strict %u ms\n", raised, plain, strict);
}

/*
 * A process reading a block every 50 ms next to a greedy reader: long
 * after its start-up raising has ended, it is soft real-time and its
 * reads are served on arrival; without low_latency they wait.
 */
static uint64_t periodic(int64_t low_latency)
{
	struct queue *q = bfq_queue();
	struct proc procs[2] = {
		{ .pid = 1001, .ioprio = BE(4), .dir = ELV_READ, .depth = 1 },
		{ .pid = 1002, .ioprio = BE(4), .dir = ELV_READ, .depth = 1,
		  .sector = 1000000, .think_ms = 50,
		  .measure_from = 1000 * H_MS },
	};
	uint64_t wait;

	h_set_tunable(q, "low_latency", low_latency);
	sim_start(q, procs, 2);
	sim_run(q, procs, 2, 3000 * H_MS);
	wait = procs[1].max_wait_ns;
	CHECK(procs[1].served >= 20);
	/*
	 * The greedy reader still gets half of the device: the raised one
	 * is waited for 20 ms after each read, as the kernel does to keep
	 * a raised queue's guarantees.
	 */
	CHECK(procs[0].served >= 1500);
	if (low_latency)
		CHECK(h_counter(q, "wr_softrt_starts") >= 1);
	else
		CHECK_EQ(h_counter(q, "wr_softrt_starts"), 0);
	sim_end(q);
	return wait;
}

static void test_soft_rt(void)
{
	uint64_t raised = periodic(1), plain = periodic(0);

	CHECK(raised <= 1 * H_MS);
	CHECK(plain >= 50 * H_MS);
	if (raised > 1 * H_MS || plain < 50 * H_MS)
		fprintf(stderr, "  periodic: max wait raised %" PRIu64
			" ms, plain %" PRIu64 " ms\n", (uint64_t)(raised / H_MS),
			(uint64_t)(plain / H_MS));
}

/* ------------------------------------------------------------------ */
/* Idling, force, timeout.                                             */

/* Waiting slice_idle for the same process; its request ends the wait. */
static void test_idle_window(void)
{
	struct queue *q = bfq_queue();
	unsigned w;

	h_set_tunable(q, "low_latency", 0);
	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1002, BE(4), 900000);
	CHECK_STR(h_order(q, 0), "1");
	CHECK_EQ(h_wakeup_ns, 8 * H_MS);
	h_now = 3 * H_MS;
	pq_rd(q, 3, 1001, BE(4), 108);
	CHECK_STR(h_order(q, 0), "3");
	/* Waiting again until 11 ms; the 8 ms timer finds it still on. */
	fire(q);
	CHECK_EQ(h_now, 8 * H_MS);
	CHECK_STR(h_order(q, 0), "");
	CHECK_EQ(h_wakeup_ns, 11 * H_MS);
	h_now = 11 * H_MS - 1;
	CHECK_STR(h_order(q, 0), "");
	/* Timed out: the other process gets the device. */
	fire(q);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(3);
	CHECK_EQ(h_counter(q, "idle_timeouts"), 1);
	CHECK_EQ(h_counter(q, "expired_too_idle"), 1);

	/* With slice_idle 0, no waiting at all. */
	h_set_tunable(q, "slice_idle", 0);
	h_now = 500 * H_MS;
	w = h_wakeups;
	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1002, BE(4), 900000);
	CHECK_EQ(strlen(h_order(q, 0)), 3);
	CHECK_EQ(h_wakeups, w);
	CHECK_DONE(2);
	queue_free(q);

	/* An async queue is not waited for: the read goes at once. */
	q = bfq_queue();
	h_set_tunable(q, "low_latency", 0);
	queue_submit(q, pq_io(1, 1001, BE(4), ELV_WRITE, 100));
	pq_rd(q, 2, 1002, BE(4), 900000);
	CHECK_STR(h_order(q, 0), "1 2");
	queue_stop(q);
	CHECK_DONE(2);
	queue_free(q);
}

/*
 * A slow process (50 ms a request) loses the device when its budget times
 * out, although it has used little of it, and is charged the whole budget
 * so that the fast one gets half of the time.
 */
static void slow(int64_t timeout_ms, struct proc *fast_out)
{
	struct queue *q = bfq_queue();
	struct proc procs[2] = {
		{ .pid = 1001, .ioprio = BE(4), .dir = ELV_READ, .depth = 4,
		  .cost_ms = 50 },
		{ .pid = 1002, .ioprio = BE(4), .dir = ELV_READ, .depth = 1,
		  .sector = 1000000 },
	};

	h_set_tunable(q, "low_latency", 0);
	h_set_tunable(q, "timeout_sync", timeout_ms);
	sim_start(q, procs, 2);
	sim_run(q, procs, 2, 2000 * H_MS);
	*fast_out = procs[1];
	CHECK(h_counter(q, "expired_budget_timeout") >= 2);
	sim_end(q);
}

static void test_budget_timeout(void)
{
	struct proc fast;

	slow(125, &fast);
	/* Three slow requests, 150 ms: the first past 125. */
	CHECK(fast.first_ns >= 125 * H_MS && fast.first_ns <= 150 * H_MS);
	CHECK(fast.served >= 800);
	slow(400, &fast);
	CHECK(fast.first_ns >= 400 * H_MS && fast.first_ns <= 450 * H_MS);
}

/* ------------------------------------------------------------------ */
/* Priority changes, merging.                                          */

/* A process moved to real-time (ionice -p) goes ahead at once. */
static void test_prio_change(void)
{
	struct queue *q = bfq_queue();

	h_set_tunable(q, "low_latency", 0);
	h_set_tunable(q, "slice_idle", 0);
	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1001, BE(4), 108);
	pq_rd(q, 3, 1002, BE(4), 900000);
	CHECK_STR(h_order(q, 1), "1");
	/* 1002, waiting, is moved to real-time: it goes first. */
	pq_rd(q, 4, 1002, RT(0), 900008);
	CHECK_STR(h_order(q, 2), "3 4");
	pq_rd(q, 5, 1001, BE(4), 116);
	CHECK_STR(h_order(q, 1), "2");
	/* 1001, in service, is moved down to idle: the others go first. */
	pq_rd(q, 6, 1001, IDLE, 124);
	pq_rd(q, 7, 1002, BE(4), 900016);
	CHECK_STR(h_order(q, 0), "7 5 6");
	CHECK_DONE(7);
	queue_free(q);
}

/* ------------------------------------------------------------------ */
/* The kernel's rules, one each.                                       */

/* A computed (show) tunable's value. */
static int show_fn(struct elevator_queue *eq, void *arg)
{
	const struct elv_tunable *t;

	for (t = eq->type->tunables; t->name != NULL; t++)
		if (strcmp(t->name, "peak_rate") == 0)
			*(int64_t *)arg = t->show(eq);
	return 0;
}

/*
 * non_blocking_wait_rq: a reader that thinks 12 ms (past slice_idle, so
 * its queue expires too idle) comes back within 3 slice_idle to the rest
 * of its budget, and takes the device back from a greedy reader of the
 * same weight at once.
 */
static void test_wait_rq(void)
{
	struct queue *q = bfq_queue();
	struct proc procs[2] = {
		{ .pid = 1001, .ioprio = BE(4), .dir = ELV_READ, .depth = 1 },
		{ .pid = 1002, .ioprio = BE(4), .dir = ELV_READ, .depth = 1,
		  .think_ms = 12, .sector = 1000000 },
	};

	h_set_tunable(q, "low_latency", 0);
	sim_start(q, procs, 2);
	sim_run(q, procs, 2, 2000 * H_MS);
	/*
	 * Served on arrival, it reads every 13 ms or so; waiting for the
	 * greedy reader's budgets, about every 125 ms.
	 */
	CHECK(procs[1].served >= 100);
	if (procs[1].served < 100)
		fprintf(stderr, "  wait_rq: %u reads\n", procs[1].served);
	sim_end(q);
}

/*
 * Time-based charging: a seeky reader (50 ms a request) and a sequential
 * one of the same weight share the device's time, not its sectors.
 */
static void test_charge_time(void)
{
	struct queue *q = bfq_queue();
	struct proc procs[2] = {
		{ .pid = 1001, .ioprio = BE(4), .dir = ELV_READ, .depth = 1,
		  .cost_ms = 10, .stride = 100000 },
		{ .pid = 1002, .ioprio = BE(4), .dir = ELV_READ, .depth = 1,
		  .sector = 1000000 },
	};

	h_set_tunable(q, "low_latency", 0);
	sim_start(q, procs, 2);
	sim_run(q, procs, 2, 3000 * H_MS);
	/* Sectors alike would give the sequential one 1/11 of the time. */
	CHECK(procs[1].served >= 1000);
	if (procs[1].served < 1000)
		fprintf(stderr, "  charge time: seeky %u, sequential %u\n",
			procs[0].served, procs[1].served);
	sim_end(q);
}

/*
 * Peak rate: one sequential reader at 8 sectors a millisecond; the
 * estimate moves from its optimistic start to 8000 sectors/s, and
 * max_budget 0 follows it.
 */
static void test_peak_rate(void)
{
	struct queue *q = bfq_queue();
	struct proc procs[1] = {
		{ .pid = 1001, .ioprio = BE(4), .dir = ELV_READ, .depth = 1 },
	};
	int64_t rate = 0;

	sim_start(q, procs, 1);
	queue_with_elevator(q, show_fn, &rate);
	CHECK(rate > 100000);
	sim_run(q, procs, 1, 1000 * H_MS);
	queue_with_elevator(q, show_fn, &rate);
	CHECK(rate >= 7000 && rate <= 9000);
	if (rate < 7000 || rate > 9000)
		fprintf(stderr, "  peak rate %" PRId64 "\n", rate);
	sim_end(q);
}

/*
 * How long bfq waits for a process whose two reads are done, with
 * slice_idle 2 ms and then name set to value (NULL: nothing more).
 */
static uint64_t idle_wait_ms(int64_t low_latency, const char *name,
			     int64_t value)
{
	struct queue *q = bfq_queue();
	uint64_t ms;

	h_set_tunable(q, "low_latency", low_latency);
	h_set_tunable(q, "slice_idle", 2);
	if (name != NULL)
		h_set_tunable(q, name, value);
	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1001, BE(4), 108);
	CHECK_STR(h_order(q, 0), "1 2");
	ms = (h_wakeup_ns - h_now) / H_MS;
	queue_stop(q);
	CHECK_DONE(2);
	queue_free(q);
	return ms;
}

/*
 * strict_guarantees: one request in the device at a time; turning it on
 * raises slice_idle to 8 ms.  slice_idle_us sets the wait in
 * microseconds.  A raised queue (a new process) is waited for at least
 * 20 ms.
 */
static void test_strict_guarantees(void)
{
	struct queue *q = bfq_queue();
	struct io *io;

	h_set_tunable(q, "strict_guarantees", 1);
	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1001, BE(4), 108);
	io = queue_try_next(q);
	CHECK(io != NULL);
	CHECK(queue_try_next(q) == NULL);
	h_complete(q, io);
	CHECK_EQ(h_next_id(q), 2);
	queue_stop(q);
	CHECK_DONE(2);
	queue_free(q);

	CHECK_EQ(idle_wait_ms(0, NULL, 0), 2);
	CHECK_EQ(idle_wait_ms(0, "strict_guarantees", 1), 8);
	CHECK_EQ(idle_wait_ms(0, "slice_idle_us", 3000), 3);
	CHECK_EQ(idle_wait_ms(1, NULL, 0), 20);
}

/*
 * A seeky process (every read 100000 sectors from the last) is waited
 * for 2 ms, not slice_idle (BFQ_MIN_TT), when it is not raised.
 */
static void test_seeky_idle(void)
{
	struct queue *q = bfq_queue();
	int i;

	h_set_tunable(q, "low_latency", 0);
	for (i = 1; i <= 24; i++) {
		pq_rd(q, i, 1001, BE(4), (uint64_t)i * 100000);
		CHECK_EQ(h_next_id(q), i);
	}
	CHECK_EQ(h_wakeup_ns, h_now + 2 * H_MS);
	queue_stop(q);
	CHECK_DONE(24);
	queue_free(q);
}

/* ------------------------------------------------------------------ */
/* A fast device: preemption of an empty queue.                        */

/*
 * The simulation above works in whole milliseconds.  Here a fast device
 * (an SSD, or a loop device with direct I/O) serves 16 KiB requests in
 * FAST_COST_US each, in the order dispatched, and a reader issues its
 * next request FAST_THINK_US after its last completed (through FUSE, a
 * round trip), except every FAST_PAUSE_EVERY-th time, when it pauses
 * FAST_PAUSE_US (a worker or the reader descheduled: on a loaded host,
 * a few times a second).
 */
struct fast_reader {
	pid_t pid;
	int ioprio;
	uint64_t sector;
	struct io *io;			/* in flight, or NULL */
	bool queued;			/* issued, not yet dispatched */
	uint64_t at;			/* completes, or issues, then */
	unsigned served;
	uint64_t sectors;
};

#define FAST_BYTES	16384
#define FAST_COST_US	300
#define FAST_THINK_US	50
#define FAST_PAUSE_US	10000		/* beyond slice_idle's 8 ms */
#define FAST_PAUSE_EVERY 500
/* Long enough for budgets and pauses to average out, within H_MAX_IDS. */
#define FAST_SECS	4

static void fast_step(struct queue *q, struct fast_reader *r, int n,
		      int *ids, uint64_t *busy_until)
{
	struct fast_reader *d;
	struct io *io;
	int i;

	for (i = 0; i < n; i++) {
		if (r[i].io != NULL && r[i].at <= h_now) {
			h_complete(q, r[i].io);
			r[i].io = NULL;
			r[i].served++;
			r[i].sectors += FAST_BYTES >> 9;
			r[i].at = h_now + (r[i].served % FAST_PAUSE_EVERY ?
					   FAST_THINK_US : FAST_PAUSE_US) *
				H_MS / 1000;
		}
		if (r[i].io == NULL && !r[i].queued && r[i].at <= h_now) {
			r[i].sector += FAST_BYTES >> 9;
			io = h_io(++*ids, ELV_READ, 100 + (uint64_t)i, 0,
				  FAST_BYTES, r[i].sector);
			io->rq.pid = r[i].pid;
			io->rq.ioprio = r[i].ioprio;
			r[i].queued = true;
			queue_submit(q, io);
		}
	}
	while ((io = queue_try_next(q)) != NULL) {
		for (d = r; d->pid != io->rq.pid; d++)
			;
		d->queued = false;
		d->io = io;
		if (*busy_until < h_now)
			*busy_until = h_now;
		*busy_until += FAST_COST_US * H_MS / 1000;
		d->at = *busy_until;
	}
}

/*
 * Level 0 against level 7 on the fast device.  When the level
 * 0 reader comes back from a pause it takes the device from the level 7
 * one, which is in service and empty (waited for).  Taken off the
 * schedule, the level 7 queue would come back at its next request as
 * one resuming its budget and take the device back, the level 0 one
 * likewise at its own, and so on request by request: shares near 1:1
 * and a preemption per request.  Kept busy (the kernel's
 * __bfq_bfqq_expire), it waits for its turn: 8:1.
 */
static void test_preempted_empty(void)
{
	struct queue *q = bfq_queue();
	struct fast_reader r[2] = {
		{ .pid = 1001, .ioprio = BE(0) },
		{ .pid = 1002, .ioprio = BE(7), .sector = 10000000 },
	};
	uint64_t next, busy_until = 0, end = FAST_SECS * 1000 * H_MS;
	unsigned seen = h_wakeups;
	int ids = 0, i;
	double ratio;

	h_set_tunable(q, "low_latency", 0);
	while (h_now < end) {
		fast_step(q, r, 2, &ids, &busy_until);
		next = UINT64_MAX;
		if (h_wakeups != seen)
			next = h_wakeup_ns > h_now ? h_wakeup_ns : h_now;
		for (i = 0; i < 2; i++)
			if (!r[i].queued && r[i].at > h_now && r[i].at < next)
				next = r[i].at;
		/* Requests queued, none in flight, no wake-up: a hang. */
		if (next == UINT64_MAX) {
			fprintf(stderr, "  fast device: stalled\n");
			h_failures++;
			break;
		}
		h_now = next;
		if (h_wakeups != seen && h_now >= h_wakeup_ns) {
			seen = h_wakeups;
			queue_kick(q);
		}
	}
	ratio = r[1].sectors ? (double)r[0].sectors / (double)r[1].sectors : 0;
	CHECK(ratio >= 6);
	/* The pauses, not every request. */
	CHECK(h_counter(q, "expired_preempted") <= 20 * FAST_SECS);
	if (ratio < 6 || h_counter(q, "expired_preempted") > 20 * FAST_SECS)
		fprintf(stderr, "  fast device: BE0 %" PRIu64 ", BE7 %" PRIu64
			" sectors, %" PRIu64 " preemptions\n", r[0].sectors,
			r[1].sectors, h_counter(q, "expired_preempted"));
	queue_stop(q);
	for (i = 0; i < 2; i++)
		if (r[i].io != NULL)
			h_complete(q, r[i].io);
	while (h_next_id(q) > 0)
		;
	CHECK_DONE(ids);
	queue_free(q);
}

int main(void)
{
	/* A lost request would hang the drain: fail instead. */
	alarm(60);
	bfq = h_load("MODULE_DIR", "schedulers/.libs", "bfq");
	if (bfq == NULL) {
		fprintf(stderr, "bfq did not register\n");
		return 1;
	}
	test_weights();
	test_weights_thinking();
	test_equal();
	test_class_order();
	test_weight_raising();
	test_soft_rt();
	test_idle_window();
	pq_test_force(bfq);
	test_budget_timeout();
	test_prio_change();
	test_wait_rq();
	test_charge_time();
	test_peak_rate();
	test_strict_guarantees();
	test_seeky_idle();
	pq_test_merge(bfq, false);
	pq_test_switch(bfq);
	pq_test_back_seek_penalty(bfq);
	pq_test_fifo_expiry(bfq);
	test_preempted_empty();
	return h_exit("test_bfq");
}
