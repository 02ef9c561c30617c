/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cfq through the real queue, on the virtual clock.  The service a
 * process gets is the virtual time its requests hold the device: greedy
 * processes in pidq_cases.h's simulation, 1 ms a request, or psync
 * readers on a seeking disk (psync_run).
 * Covered: fairness between equal processes, slice lengths by level, the
 * class order (RT, BE, then idle, and the idle class never forced in),
 * idling for a process that comes back and its end on timeout or for a
 * slow thinker, force, the quantum, FIFO expiry once per slice, the
 * backward-seek rule, pooled async queues, merging, and a switch away
 * with requests queued and in flight.
 */
#include <stdlib.h>
#include <unistd.h>

#include "pidq_cases.h"

static const struct elevator_type *cfq;

static struct queue *cfq_queue(void)
{
	return pq_queue(cfq);
}

/*
 * Two equal greedy readers get equal service, in slices (about 100 ms
 * each, not request by request), for one or several requests outstanding.
 */
static void fair(unsigned depth)
{
	struct queue *q = cfq_queue();
	struct pq_proc procs[2] = {
		{ .pid = 1001, .ioprio = BE(4), .dir = ELV_READ,
		  .depth = depth, .sector = 0 },
		{ .pid = 1002, .ioprio = BE(4), .dir = ELV_READ,
		  .depth = depth, .sector = 1000000 },
	};

	pq_sim_start(q, procs, 2);
	pq_sim_run(q, procs, 2, 2000 * H_MS);
	CHECK(pq_within(procs[0].served, procs[1].served, 10));
	CHECK(procs[0].served + procs[1].served >= 1900);
	/* 2000 ms in 100 ms slices: about 20 turns. */
	CHECK(pq_sim.switches >= 16 && pq_sim.switches <= 24);
	pq_sim_end(q);
}

static void test_fair(void)
{
	fair(1);
	fair(4);
}

/* Level 0 against level 7: slices of 180 and 40 ms. */
static void test_prio_ratio(void)
{
	struct queue *q = cfq_queue();
	struct pq_proc procs[2] = {
		{ .pid = 1001, .ioprio = BE(0), .dir = ELV_READ, .depth = 1 },
		{ .pid = 1002, .ioprio = BE(7), .dir = ELV_READ, .depth = 1,
		  .sector = 1000000 },
	};
	double ratio;

	pq_sim_start(q, procs, 2);
	pq_sim_run(q, procs, 2, 2200 * H_MS);
	ratio = procs[1].served ? (double)procs[0].served / procs[1].served : 0;
	CHECK(ratio >= 4.5 * 0.9 && ratio <= 4.5 * 1.1);
	if (!(ratio >= 4.5 * 0.9 && ratio <= 4.5 * 1.1))
		fprintf(stderr, "  BE0 %u, BE7 %u\n", procs[0].served,
			procs[1].served);
	pq_sim_end(q);
}

/*
 * Readers as fio's psync ones on the mount: one request out at a time, the
 * next issued think_ns after its completion, on a disk that serves one
 * request at a time in xfer_ns when it follows the last one served and
 * seek_ns more when not (the hdd model's rule).  Unlike greedy processes
 * (pq_sim_run), their queues empty after every request, so slices end on
 * the idle window and the process comes back to a freshly made queue, and
 * each slice begins with a seek.
 */
struct reader {
	pid_t pid;
	int ioprio;
	uint64_t sector;
	uint64_t submit_at;		/* UINT64_MAX: its request is out */
	unsigned served;
};

struct disk {
	uint64_t think_ns, xfer_ns, seek_ns;
};

/* Complete cur at now: its reader thinks, then issues again. */
static void psync_complete(struct queue *q, struct reader *r, int n,
			   const struct disk *d, struct io *cur)
{
	int i;

	for (i = 0; i < n; i++) {
		if (r[i].pid == cur->rq.pid) {
			r[i].served++;
			r[i].submit_at = h_now + d->think_ns;
		}
	}
	h_complete(q, cur);
}

static void psync_run(struct queue *q, struct reader *r, int n,
		      const struct disk *d, uint64_t until_ns)
{
	struct io *cur = NULL;
	uint64_t dev_end = 0, head = UINT64_MAX, t;
	int i;

	pq_sim_start(q, NULL, 0);
	for (i = 0; i < n; i++)
		r[i].submit_at = 0;
	while (h_now < until_ns && pq_sim.ids < H_MAX_IDS - n) {
		/* On to the next event: a completion, an issue, the timer. */
		pq_sim_timer(q);
		t = cur != NULL ? dev_end : UINT64_MAX;
		for (i = 0; i < n; i++)
			if (r[i].submit_at < t)
				t = r[i].submit_at;
		if (pq_sim.armed && h_wakeup_ns < t)
			t = h_wakeup_ns;
		if (t == UINT64_MAX) {
			pq_sim.stalls++;
			break;
		}
		if (t > h_now)
			h_now = t;
		if (cur != NULL && dev_end <= h_now) {
			psync_complete(q, r, n, d, cur);
			cur = NULL;
		}
		for (i = 0; i < n; i++) {
			if (r[i].submit_at > h_now)
				continue;
			r[i].submit_at = UINT64_MAX;
			r[i].sector += 8;
			queue_submit(q, pq_io(++pq_sim.ids, r[i].pid,
					      r[i].ioprio, ELV_READ,
					      r[i].sector));
		}
		pq_sim_timer(q);
		if (cur == NULL && (cur = queue_try_next(q)) != NULL) {
			dev_end = h_now + d->xfer_ns +
				(cur->rq.sector == head ? 0 : d->seek_ns);
			head = elv_rq_end_sector(&cur->rq);
		}
	}
	if (cur != NULL)
		psync_complete(q, r, n, d, cur);
}

/*
 * The experiment of bench/priorities.sh on the virtual clock: psync
 * readers at levels 0 and 7, 0.8 ms between a completion and the next
 * request (the FUSE round trip), 0.2 ms a request, 12 ms a switch between
 * their files.  The kernel's rules give 180 ms against 40 ms of service
 * (slice_new leaves each slice's first seek out of it): 4.5.
 */
static void test_prio_ratio_psync(void)
{
	struct queue *q = cfq_queue();
	struct reader r[2] = {
		{ .pid = 1001, .ioprio = BE(0), .sector = 0 },
		{ .pid = 1002, .ioprio = BE(7), .sector = 100000000 },
	};
	const struct disk d = {
		.think_ns = 800000, .xfer_ns = 200000, .seek_ns = 12 * H_MS,
	};
	double ratio;

	psync_run(q, r, 2, &d, 3500 * H_MS);
	ratio = r[1].served ? (double)r[0].served / r[1].served : 0;
	/*
	 * Every slice ends with its time used up, none on the idle window:
	 * a process back within 0.8 ms is always waited for.  3.5 s in
	 * turns of 180 + 40 ms and two seeks: about 28 slices.
	 */
	CHECK_EQ(h_counter(q, "expired_idle_timer"), 0);
	CHECK_EQ(h_counter(q, "expired_empty"), 0);
	CHECK(h_counter(q, "set_active") >= 26 && h_counter(q, "set_active") <= 30);
	CHECK(h_counter(q, "expired_slice_used") + 1 >= h_counter(q, "set_active"));
	CHECK(h_counter(q, "idle_hit") + 2 * 28 >= h_counter(q, "arm_idle"));
	CHECK(ratio >= 4.5 * 0.95 && ratio <= 4.5 * 1.05);
	if (!(ratio >= 4.5 * 0.95 && ratio <= 4.5 * 1.05))
		fprintf(stderr, "  BE0 %u, BE7 %u: %.2f\n", r[0].served,
			r[1].served, ratio);
	pq_sim_end(q);
}

/*
 * The pair with its files far apart (a full stroke and half a revolution,
 * 19 ms, at every switch between them) and FUSE's round trip for a think
 * time.  The share is in the kernel's band for slices of 180 and 40 ms
 * (3.5 to 5.5): the switch's seek is the first request of each slice,
 * which slice_new leaves out of it.  Charged to the slice, it would take
 * 19 ms of 40 from the short one and 19 of 180 from the long (7.9 here),
 * which the adjacent files of bench/priorities.sh would hide (about 5).
 */
static void test_prio_ratio_far_files(void)
{
	struct queue *q = cfq_queue();
	struct reader r[2] = {
		{ .pid = 1001, .ioprio = BE(0), .sector = 0 },
		{ .pid = 1002, .ioprio = BE(7), .sector = 1ULL << 33 },
	};
	const struct disk d = {
		.think_ns = 50000, .xfer_ns = 110000, .seek_ns = 19 * H_MS,
	};
	double ratio;

	psync_run(q, r, 2, &d, 4000 * H_MS);
	ratio = r[1].served ? (double)r[0].served / r[1].served : 0;
	CHECK(ratio >= 3.5 && ratio <= 5.5);
	if (!(ratio >= 3.5 && ratio <= 5.5))
		fprintf(stderr, "  BE0 %u, BE7 %u: %.2f\n", r[0].served,
			r[1].served, ratio);
	pq_sim_end(q);
}

/* The slice tunable is read when used; the levels scale with it. */
static void test_slice_tunable(void)
{
	struct queue *q = cfq_queue();
	struct pq_proc procs[2] = {
		{ .pid = 1001, .ioprio = BE(4), .dir = ELV_READ, .depth = 1 },
		{ .pid = 1002, .ioprio = BE(4), .dir = ELV_READ, .depth = 1,
		  .sector = 1000000 },
	};

	h_set_tunable(q, "slice_sync", 20);
	pq_sim_start(q, procs, 2);
	pq_sim_run(q, procs, 2, 2000 * H_MS);
	/* 20 ms slices: about 100 turns. */
	CHECK(pq_sim.switches >= 90 && pq_sim.switches <= 110);
	CHECK(pq_within(procs[0].served, procs[1].served, 10));
	pq_sim_end(q);
}

/*
 * The async pool's slice against a greedy reader: at most slice_async_rq
 * requests' worth (8 times it at level 4: 16 by default), and no longer
 * than slice_async (at 1 ms a request, 10 ms is 10 requests after the
 * one that starts the slice).
 */
static unsigned async_run(int64_t slice_async, int64_t slice_async_rq)
{
	struct queue *q = cfq_queue();
	struct pq_proc procs[2] = {
		{ .pid = 1001, .ioprio = BE(4), .dir = ELV_WRITE, .depth = 32,
		  .sector = 1000000 },
		{ .pid = 1002, .ioprio = BE(4), .dir = ELV_READ, .depth = 1 },
	};

	h_set_tunable(q, "slice_async", slice_async);
	h_set_tunable(q, "slice_async_rq", slice_async_rq);
	pq_sim_start(q, procs, 2);
	pq_sim_run(q, procs, 2, 1000 * H_MS);
	/* The reader gets its slices in between. */
	CHECK(procs[1].served > 300);
	pq_sim_end(q);
	return procs[0].max_run;
}

static void test_async_slice(void)
{
	CHECK_EQ(async_run(40, 2), 16);
	CHECK_EQ(async_run(40, 1), 8);
	CHECK_EQ(async_run(10, 1000), 11);
	CHECK_EQ(async_run(20, 1000), 21);
}

/* Real-time first; an RT arrival preempts a best-effort slice. */
static void test_rt_first(void)
{
	struct queue *q = cfq_queue();
	int i;

	pq_rd(q, 1, 1001, BE(0), 100);
	pq_rd(q, 2, 1001, BE(0), 200);
	pq_rd(q, 3, 1001, BE(0), 300);
	pq_rd(q, 4, 1002, RT(7), 5000);
	pq_rd(q, 5, 1002, RT(7), 5100);
	pq_rd(q, 6, 1002, RT(7), 5200);
	/* RT drains, then cfq waits for it (it may come back)... */
	CHECK_STR(h_order(q, 0), "4 5 6");
	/* ...until the wait is over. */
	h_fire(q);
	CHECK_STR(h_order(q, 0), "1 2 3");
	CHECK_DONE(6);

	/* BE is being served when an RT request arrives. */
	for (i = 1; i <= 5; i++)
		pq_rd(q, i, 1001, BE(4), 1000 + (uint64_t)i * 100);
	CHECK_STR(h_order(q, 2), "1 2");
	pq_rd(q, 6, 1002, RT(4), 9000);
	CHECK_STR(h_order(q, 1), "6");
	h_fire(q);
	CHECK_STR(h_order(q, 0), "3 4 5");
	CHECK_DONE(6);
	queue_free(q);
}

/*
 * slice_new: the slice starts at the first completion, not the first
 * dispatch, so a first request that takes 50 ms leaves the whole 100 ms
 * slice after it.
 */
static void test_slice_starts_at_first_completion(void)
{
	struct queue *q = cfq_queue();
	struct io *io;
	int id = 2, got;

	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1002, BE(4), 900000);
	io = queue_try_next(q);
	CHECK(io != NULL && h_part_id(io, 0) == 1);
	h_now = 50 * H_MS;
	if (io != NULL)
		h_complete(q, io);
	do {
		h_now += H_MS;
		id++;
		pq_rd(q, id, 1001, BE(4), 100 + (uint64_t)id * 8);
		got = h_next_id(q);
	} while (got != 2 && got > 0 && h_now < 1000 * H_MS);
	CHECK_EQ(got, 2);
	/* 50 + 100 ms, and the 1 ms of the request that overran it. */
	CHECK(h_now >= 150 * H_MS && h_now <= 151 * H_MS);
	queue_stop(q);
	while (h_next_id(q) > 0)
		;
	CHECK_DONE(id);
	queue_free(q);
}

/*
 * The service tree: a queue joins at now + slice_offset, so a level-0
 * queue joining after a level-7 one (both behind a level-4 one) is served
 * before it; round robin would serve them in arrival order.
 */
static void test_service_tree_offset(void)
{
	struct queue *q = cfq_queue();

	h_set_tunable(q, "slice_idle", 0);
	pq_rd(q, 1, 1001, BE(4), 100);		/* key 0 */
	pq_rd(q, 2, 1002, BE(7), 500000);	/* key 1 * (180 - 40) ms */
	pq_rd(q, 3, 1003, BE(0), 900000);	/* key 2 * (180 - 180) */
	CHECK_STR(h_order(q, 0), "1 3 2");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * slice_resid, overrun: a queue whose last request completed 59 ms past
 * its slice's end joins the tree 59 ms later, behind a queue that joins
 * just after it (without the charge it would be 20 ms ahead).  Keys are
 * now + (busy - 1) * (180 ms - slice).  So too when the queue has nothing
 * queued as its slice ends, as a psync reader never has: its queue
 * outlives its turns (freed and made anew, it would go first).
 */
static void overrun_charged(bool empty)
{
	struct queue *q = cfq_queue();
	struct io *io;

	h_set_tunable(q, "slice_idle", 0);
	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1001, BE(4), 108);
	pq_rd(q, 3, 1002, BE(4), 500000);
	h_now = 1 * H_MS;
	CHECK_STR(h_order(q, 1), "1");		/* slice ends at 101 ms */
	io = queue_try_next(q);
	CHECK(io != NULL && h_part_id(io, 0) == 2);
	if (!empty)
		pq_rd(q, 4, 1001, BE(4), 116);
	h_now = 160 * H_MS;
	if (io != NULL)
		h_complete(q, io);
	if (empty)
		pq_rd(q, 4, 1001, BE(4), 116);
	/* 1001: 160 + 1 * 80 + 59 = 299 ms; 1003: 160 + 2 * 60 = 280 ms */
	pq_rd(q, 5, 1003, BE(3), 900000);
	CHECK_STR(h_order(q, 0), "3 5 4");
	CHECK_DONE(5);
	queue_free(q);
}

static void test_overrun_charged(void)
{
	overrun_charged(false);
	overrun_charged(true);
}

/*
 * slice_resid, leftover: a queue preempted 10 ms into its slice keeps the
 * other 90 ms as credit and is served before a queue that joined just
 * before the preemption.
 */
static void test_leftover_carried(void)
{
	struct queue *q = cfq_queue();

	h_set_tunable(q, "slice_idle", 0);
	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1001, BE(4), 108);
	pq_rd(q, 3, 1001, BE(4), 116);
	CHECK_STR(h_order(q, 1), "1");		/* slice ends at 100 ms */
	h_now = 5 * H_MS;
	pq_rd(q, 4, 1002, BE(4), 500000);	/* key 5 + 80 ms */
	h_now = 10 * H_MS;
	/* Preempts: 1001's key 10 + 2 * 80 - 90 = 80 ms. */
	pq_rd(q, 5, 1003, RT(4), 900000);
	CHECK_STR(h_order(q, 0), "5 2 3 4");
	CHECK_DONE(5);
	queue_free(q);
}

/*
 * A queue that empties keeps its residual until it is busy again: the
 * pooled async queue at level 0 (a 180 ms slice with slice_async 100, so
 * no offset), preempted 10 ms into its slice with its last request in
 * flight, comes back with 170 ms of credit and goes before a queue that
 * joined just before it.
 */
static void test_resid_kept_while_empty(void)
{
	struct queue *q = cfq_queue();
	struct io *io;

	h_set_tunable(q, "slice_idle", 0);
	h_set_tunable(q, "slice_async", 100);
	pq_wr(q, 1, 1001, BE(0), 100);
	pq_wr(q, 2, 1001, BE(0), 108);
	CHECK_STR(h_order(q, 1), "1");		/* slice ends at 180 ms */
	io = queue_try_next(q);			/* 2, in flight: empty */
	CHECK(io != NULL && h_part_id(io, 0) == 2);
	h_now = 10 * H_MS;
	pq_rd(q, 3, 1002, RT(4), 900000);	/* preempts: resid 170 ms */
	if (io != NULL)
		h_complete(q, io);
	CHECK_STR(h_order(q, 0), "3");
	h_now = 12 * H_MS;
	pq_rd(q, 4, 1003, BE(0), 500000);	/* key 12 ms */
	h_now = 13 * H_MS;
	pq_wr(q, 5, 1001, BE(0), 116);		/* key 13 - 170 ms */
	CHECK_STR(h_order(q, 0), "5 4");
	CHECK_DONE(5);
	queue_free(q);
}

/*
 * Process 1001 reads 1 to 5, 30 ms apart, each served alone: its mean
 * think time is 30 ms, past slice_idle.
 */
static void slow_thinker(struct queue *q)
{
	char want[16];
	int i;

	for (i = 1; i <= 5; i++) {
		h_now = (uint64_t)i * 30 * H_MS;
		queue_kick(q);
		pq_rd(q, i, 1001, BE(4), (uint64_t)i * 8);
		snprintf(want, sizeof want, "%d", i);
		CHECK_STR(h_order(q, 1), want);
	}
}

/*
 * An idle process's queue is kept, with its think time, for CFQ_PARK_MS
 * (10 s), then freed: a slow thinker back after 0.8 s is still not waited
 * for; back after more than 10 s it is a new process, assumed to come
 * back quickly, and waited for.
 */
/*
 * Another process reads (id) at at_ms and is idled for until its wait
 * ends: 1001's queue is parked.  1001 reads (id + 1) back_ms later: was
 * it waited for after that read?
 */
static bool parked_then_back(struct queue *q, int id, uint64_t at_ms,
			     uint64_t back_ms)
{
	char want[16];
	unsigned w;

	h_now = at_ms * H_MS;
	pq_rd(q, id, 1002 + id, BE(4), 900000);
	snprintf(want, sizeof want, "%d", id);
	CHECK_STR(h_order(q, 0), want);
	h_fire(q);
	h_now = (at_ms + back_ms) * H_MS;
	w = h_wakeups;
	pq_rd(q, id + 1, 1001, BE(4), 48 + (uint64_t)id * 8);
	snprintf(want, sizeof want, "%d", id + 1);
	CHECK_STR(h_order(q, 0), want);
	return h_wakeups != w;
}

static void test_parked_queue_kept(void)
{
	struct queue *q = cfq_queue();

	slow_thinker(q);
	CHECK(!parked_then_back(q, 6, 200, 800));
	CHECK(parked_then_back(q, 8, 1010, 10090));
	CHECK_DONE(9);
	queue_free(q);
}

/* A greedy RT reader leaves nothing to best-effort. */
static void test_rt_greedy(void)
{
	struct queue *q = cfq_queue();
	struct pq_proc procs[2] = {
		{ .pid = 1001, .ioprio = BE(0), .dir = ELV_READ, .depth = 1 },
		{ .pid = 1002, .ioprio = RT(7), .dir = ELV_READ, .depth = 1,
		  .sector = 1000000 },
	};

	pq_sim_start(q, procs, 2);
	pq_sim_run(q, procs, 2, 1000 * H_MS);
	CHECK_EQ(procs[0].served, 0);
	CHECK(procs[1].served >= 990);
	pq_sim_end(q);
}

/*
 * ionice -c3: while a best-effort reader keeps the device busy the idle
 * class gets nothing at all, however long it has waited.
 */
static void test_idle_class_never_forced(void)
{
	struct queue *q = cfq_queue();
	struct pq_proc procs[2] = {
		{ .pid = 1001, .ioprio = BE(4), .dir = ELV_READ, .depth = 1 },
		{ .pid = 1002, .ioprio = IDLE, .dir = ELV_READ, .depth = 1,
		  .sector = 1000000 },
	};

	pq_sim_start(q, procs, 2);
	pq_sim_run(q, procs, 2, 2000 * H_MS);
	CHECK_EQ(procs[1].served, 0);
	CHECK(procs[0].served >= 1990);
	pq_sim_end(q);
}

/* The idle class starts only after 100 ms of quiet from the others. */
static void test_idle_class_quiet(void)
{
	struct queue *q = cfq_queue();
	struct io *io;

	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1002, IDLE, 200);
	CHECK_STR(h_order(q, 0), "1");
	/* 1 completed at 0: BE is waited for (8 ms), then quiet counts. */
	CHECK_EQ(h_wakeup_ns, 8 * H_MS);
	h_fire(q);
	CHECK_STR(h_order(q, 0), "");
	CHECK_EQ(h_wakeup_ns, 100 * H_MS);
	h_now = 100 * H_MS - 1;
	queue_kick(q);
	CHECK_STR(h_order(q, 0), "");
	h_fire(q);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(2);

	/*
	 * A BE arrival takes over from an idle queue at once, even though
	 * that one is still allowed its one request in flight.
	 */
	pq_rd(q, 1, 1002, IDLE, 300);
	pq_rd(q, 2, 1002, IDLE, 400);
	io = queue_try_next(q);
	CHECK(io != NULL && h_part_id(io, 0) == 1);
	CHECK(queue_try_next(q) == NULL);
	pq_rd(q, 3, 1001, BE(7), 500);
	CHECK_STR(h_order(q, 1), "3");
	if (io != NULL)
		h_complete(q, io);
	queue_stop(q);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * Idling: after its request completes, the process's queue keeps the
 * device for slice_idle; a request from it within that time is served
 * before another process's waiting one; then the wait ends on timeout.
 */
static void test_idle_window(void)
{
	struct queue *q = cfq_queue();

	pq_idle_window(q);
	CHECK_EQ(h_counter(q, "arm_idle"), 3);
	CHECK_EQ(h_counter(q, "idle_hit"), 1);
	CHECK_EQ(h_counter(q, "expired_idle_timer"), 1);
	CHECK_EQ(h_counter(q, "expired_slice_used"), 0);
	CHECK_STR(pq_no_idle_order(q), "1 2");
	queue_free(q);
}

/*
 * may_queue: with reads full, the process cfq idles for is admitted over
 * nr_requests (ELV_MQUEUE_MUST), another process waits for a slot.
 */
static void test_may_queue(void)
{
	struct queue *q;
	struct h_submitter *s;

	h_now = 0;
	q = h_queue(cfq, 2);
	pq_rd(q, 1, 1001, BE(4), 100);
	CHECK_STR(h_order(q, 0), "1");		/* now idling for 1001 */
	pq_rd(q, 2, 1002, BE(4), 900000);
	pq_rd(q, 3, 1003, BE(4), 900100);
	s = h_submit_start(q, pq_io(4, 1001, BE(4), ELV_READ, 108));
	CHECK(h_submitted(s, 5000));
	h_submit_join(s);
	s = h_submit_start(q, pq_io(5, 1004, BE(4), ELV_READ, 500));
	CHECK(!h_submitted(s, 100));
	CHECK_STR(h_order(q, 1), "4");
	queue_stop(q);
	CHECK_STR(h_order(q, 1), "2");
	CHECK(h_submitted(s, 5000));
	h_submit_join(s);
	CHECK_STR(h_order(q, 0), "3 5");
	CHECK_DONE(5);
	queue_free(q);
}

/*
 * 1001 reads 5 times (ids 1-5), each 100000 sectors past the last, back
 * to back: seeky (CIC_SEEKY) by the third.  Once it has the device,
 * 1002's read (id 6) arrives and waits.
 */
static void seeky_reads(struct queue *q)
{
	char want[16];
	int i;

	for (i = 1; i <= 5; i++) {
		pq_rd(q, i, 1001, BE(4), (uint64_t)i * 100000);
		snprintf(want, sizeof want, "%d", i);
		CHECK_STR(h_order(q, 1), want);
		if (i == 1)
			pq_rd(q, 6, 1002, BE(4), 5000000);
	}
}

/* A seeky process is waited for CFQ_MIN_TT (2 ms), not slice_idle. */
static void test_seeky_min_tt(void)
{
	struct queue *q = cfq_queue();

	seeky_reads(q);
	CHECK_EQ(h_wakeup_ns, 2 * H_MS);
	CHECK_STR(h_order(q, 0), "");
	h_fire(q);
	CHECK_STR(h_order(q, 0), "6");
	CHECK_DONE(6);
	queue_free(q);
}

/*
 * A sequential reader far into the disk is not seeky: its queue's first
 * request is not measured from sector 0, so it is waited for the full
 * slice_idle.
 */
static void test_sequential_far_not_seeky(void)
{
	struct queue *q = cfq_queue();
	char want[16];
	int i;

	for (i = 1; i <= 4; i++) {
		pq_rd(q, i, 1001, BE(4), 50000000 + (uint64_t)i * 8);
		snprintf(want, sizeof want, "%d", i);
		CHECK_STR(h_order(q, 1), want);
	}
	CHECK_EQ(h_wakeup_ns, 8 * H_MS);
	CHECK_DONE(4);
	queue_free(q);
}

/*
 * On a device that takes more than CFQ_HW_QUEUE_MIN requests at once
 * (hw_tag), a seeky process gets no idle window at all.
 */
static void test_seeky_hw_tag_no_idle(void)
{
	struct queue *q = cfq_queue();
	struct io *io[5];
	unsigned w;
	int i;

	/* A process alone with 5 in flight shows the device queues. */
	for (i = 0; i < 5; i++)
		pq_rd(q, i + 1, 1003, BE(4), 8000000 + (uint64_t)i * 8);
	for (i = 0; i < 5; i++)
		io[i] = queue_try_next(q);
	for (i = 0; i < 5; i++)
		if (io[i] != NULL)
			h_complete(q, io[i]);
	h_fire(q);
	CHECK_STR(h_order(q, 0), "");
	CHECK_DONE(5);

	seeky_reads(q);
	/* Its last completion went straight on to the other process. */
	w = h_wakeups;
	CHECK_STR(h_order(q, 0), "6");
	CHECK_EQ(h_wakeups, w);
	CHECK_DONE(6);
	queue_free(q);
}

/*
 * cfq_rq_close: while cfq idles for 1001 (mean seek about 1000 sectors),
 * a far request waits, but one within that distance of the head takes
 * the device at once.
 */
static void test_close_preempt(void)
{
	struct queue *q = cfq_queue();
	char want[16];
	int i;

	for (i = 1; i <= 4; i++) {
		pq_rd(q, i, 1001, BE(4), (uint64_t)i * 1008);
		snprintf(want, sizeof want, "%d", i);
		CHECK_STR(h_order(q, 1), want);
	}
	/* The head is at 4 * 1008 + 8 = 4040. */
	pq_rd(q, 5, 1002, BE(4), 900000);
	CHECK_STR(h_order(q, 0), "");
	pq_rd(q, 6, 1003, BE(4), 4040 + 500);
	CHECK_STR(h_order(q, 0), "6");
	CHECK_EQ(h_counter(q, "preempt"), 1);
	queue_stop(q);
	CHECK_STR(h_order(q, 0), "5");
	CHECK_DONE(6);
	queue_free(q);
}

/* A process that thinks longer than slice_idle is not waited for. */
static void test_slow_thinker(void)
{
	struct queue *q = cfq_queue();

	slow_thinker(q);
	/* Its think time is 30 ms now: the other process goes next. */
	h_now = 200 * H_MS;
	queue_kick(q);
	pq_rd(q, 6, 1002, BE(4), 900000);
	pq_rd(q, 7, 1001, BE(4), 48);
	CHECK_STR(h_order(q, 0), "7 6");
	CHECK_DONE(7);
	queue_free(q);
}

/* At most quantum in flight per queue with others waiting, 4x alone. */
static void test_quantum(void)
{
	struct queue *q = cfq_queue();
	struct io *held[64];
	unsigned n = 0, i;

	for (i = 1; i <= 40; i++)
		pq_rd(q, (int)i, 1001, BE(4), i * 8);
	pq_rd(q, 41, 1002, BE(4), 900000);
	while (n < 64 && (held[n] = queue_try_next(q)) != NULL)
		n++;
	CHECK_EQ(n, 8);
	/* A completion lets one more go. */
	h_complete(q, held[--n]);
	held[n] = queue_try_next(q);
	CHECK(held[n] != NULL);
	if (held[n] != NULL)
		n++;
	CHECK(queue_try_next(q) == NULL);
	for (i = 0; i < n; i++)
		h_complete(q, held[i]);
	queue_stop(q);
	while (h_next_id(q) > 0)
		;
	CHECK_DONE(41);
	queue_free(q);

	/* Alone: up to 4 * quantum. */
	q = cfq_queue();
	h_set_tunable(q, "quantum", 4);
	for (i = 1; i <= 40; i++)
		pq_rd(q, (int)i, 1001, BE(4), i * 8);
	for (n = 0; n < 64 && (held[n] = queue_try_next(q)) != NULL; n++)
		;
	CHECK_EQ(n, 16);
	for (i = 0; i < n; i++)
		h_complete(q, held[i]);
	queue_stop(q);
	while (h_next_id(q) > 0)
		;
	CHECK_DONE(40);
	queue_free(q);
}

/*
 * FIFO expiry is checked at the start of a slice: a request far behind
 * the sweep, queued at 0, expires at 125 ms mid-slice and is served at
 * the start of the next slice, at 201 ms (each slice runs from its first
 * completion, 1 ms after its first dispatch).
 */
static void fifo_expiry(enum elv_dir dir, uint64_t at_ms)
{
	struct queue *q = cfq_queue();

	/* The async pool's slice is 40 ms: use the sync one for both. */
	h_set_tunable(q, "slice_async", 100);
	h_set_tunable(q, "slice_async_rq", 1000);
	CHECK_EQ(pq_fifo_served_ms(q, dir), at_ms);
}

static void test_fifo_expire(void)
{
	fifo_expiry(ELV_READ, 201);
	/* Async: 250 ms, seen at the slice start at 302 ms. */
	fifo_expiry(ELV_WRITE, 302);
}

/* Forward preferred; backward within back_seek_max at twice the cost. */
static void test_back_seek(void)
{
	struct queue *q = cfq_queue();

	/* Head at 1000 after 1. */
	pq_rd(q, 1, 1001, BE(4), 992);
	CHECK_STR(h_order(q, 0), "1");
	pq_rd(q, 2, 1001, BE(4), 900);	/* back 100: costs 200 */
	pq_rd(q, 3, 1001, BE(4), 1150);	/* forward 150 */
	pq_rd(q, 4, 1001, BE(4), 960);	/* back 40: costs 80 */
	CHECK_STR(h_order(q, 0), "4 2 3");
	CHECK_DONE(4);

	/*
	 * back_seek_max 16 KiB is 32 sectors: both backward ones are out of
	 * reach; the forward one first, then the lowest.
	 */
	h_set_tunable(q, "back_seek_max", 16);
	h_now = 100 * H_MS;
	pq_rd(q, 1, 1001, BE(4), 992);
	CHECK_STR(h_order(q, 0), "1");
	pq_rd(q, 2, 1001, BE(4), 900);
	pq_rd(q, 3, 1001, BE(4), 1150);
	pq_rd(q, 4, 1001, BE(4), 960);
	CHECK_STR(h_order(q, 0), "3 2 4");
	CHECK_DONE(4);
	queue_free(q);
}

/*
 * Async requests share one queue per class and level, whoever sends
 * them: sector order across processes, no per-process slices.  So do a
 * sync request of pid 0 (the kernel).
 */
static void test_async_pool(void)
{
	struct queue *q = cfq_queue();

	pq_wr(q, 1, 1001, BE(4), 100);
	pq_wr(q, 2, 1001, BE(4), 300);
	pq_wr(q, 3, 1002, BE(4), 200);
	pq_rd(q, 4, 0, BE(4), 250);
	pq_wr(q, 5, 1002, BE(4), 400);
	/*
	 * The sync one first, then the sweep from its end; at the top, the
	 * nearer of the two behind (both within back_seek_max).
	 */
	CHECK_STR(h_order(q, 0), "4 2 5 3 1");
	CHECK_EQ(h_wakeups, 0);
	CHECK_DONE(5);
	queue_free(q);
}

int main(void)
{
	/* A lost request would hang the drain: fail instead. */
	alarm(60);
	cfq = h_load("cfq");
	test_fair();
	test_prio_ratio();
	test_prio_ratio_psync();
	test_prio_ratio_far_files();
	test_slice_tunable();
	test_rt_first();
	test_rt_greedy();
	test_slice_starts_at_first_completion();
	test_service_tree_offset();
	test_overrun_charged();
	test_leftover_carried();
	test_resid_kept_while_empty();
	test_parked_queue_kept();
	test_idle_class_never_forced();
	test_idle_class_quiet();
	test_idle_window();
	pq_test_exit_process(cfq);
	test_may_queue();
	test_slow_thinker();
	test_seeky_min_tt();
	test_sequential_far_not_seeky();
	test_seeky_hw_tag_no_idle();
	test_close_preempt();
	pq_test_force(cfq);
	test_quantum();
	test_fifo_expire();
	test_back_seek();
	pq_test_back_seek_penalty(cfq);
	pq_test_fifo_expiry(cfq);
	test_async_pool();
	test_async_slice();
	pq_test_merge(cfq, true);
	pq_test_switch(cfq);
	return h_exit("test_cfq");
}
