/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * anticipatory through the real queue, on the virtual clock: waiting for
 * a process's next close read after its read completed, and every way the
 * wait ends (the read arrives, another process's close read, the timeout,
 * an expired read, a batch that is over, force, a switch); the statistics
 * that decide whether to wait (think time, quiet processes, kernel
 * reads); the elevator with short backward seeks; batches; merging.
 *
 * Each request of a test has its own file, so that nothing merges by
 * accident; processes are given by pid.  The queue remembers the earliest
 * wake-up armed until its timer fires: tests call fire() to model that.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define ANTIC_MS	6	/* antic_expire's default */
#define READ_EXPIRE_MS	125

#define PID_A	500
#define PID_B	501
#define PID_C	502
#define PID_D	503
#define PID_A_CHAIN	534	/* in PID_A's chain of the pid table */

static const struct elevator_type *as;

static struct queue *as_queue(void)
{
	h_now = 0;
	h_wakeups = 0;
	h_wakeup_ns = 0;
	return h_queue(as, 256);
}

static void sub(struct queue *q, int id, enum elv_dir dir, pid_t pid,
		uint64_t sector)
{
	struct io *io = h_io(id, dir, 100 + (uint64_t)id, 0, 4096, sector);

	io->rq.pid = pid;
	queue_submit(q, io);
}

static void rd(struct queue *q, int id, pid_t pid, uint64_t sector)
{
	sub(q, id, ELV_READ, pid, sector);
}

static void wr(struct queue *q, int id, pid_t pid, uint64_t sector)
{
	sub(q, id, ELV_WRITE, pid, sector);
}

/* A's read at sector 1000 served, B's far one queued: waiting for A, 1 ms. */
static struct queue *as_waiting(void)
{
	struct queue *q = as_queue();

	rd(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, PID_B, 900000);
	CHECK(queue_try_next(q) == NULL);
	h_now = 1 * H_MS;
	return q;
}

/* A's read at sector 1000 dispatched, *io, in flight; B's far one queued. */
static struct queue *as_in_flight(struct io **io)
{
	struct queue *q = as_queue();

	rd(q, 1, PID_A, 1000);
	rd(q, 2, PID_B, 900000);
	*io = queue_try_next(q);
	CHECK(*io != NULL && h_part_id(*io, 0) == 1);
	return q;
}

/* A write from a file opened O_SYNC, O_DSYNC or O_DIRECT. */
static struct io *sync_io(int id, uint64_t file, uint64_t offset,
			  pid_t pid, uint64_t sector)
{
	struct io *io = h_io(id, ELV_WRITE, file, offset, 4096, sector);

	io->rq.pid = pid;
	io->rq.sync = io->rq.sync_write = true;
	return io;
}

/* An id as h_order writes it. */
static const char *id_str(int id)
{
	static char buf[16];

	snprintf(buf, sizeof buf, "%d", id);
	return buf;
}

/* The timer fired at at_ms: the queue forgets the wake-up it armed. */
static void fire(struct queue *q, uint64_t at_ns)
{
	h_now = at_ns;
	queue_kick(q);
}

/*
 * The classic case: A's read completes, B's far read is queued; instead
 * of seeking away the disk idles until A's next read, close to the head,
 * arrives and is served first.
 */
static void test_waits_for_next_read(void)
{
	struct queue *q = as_queue();
	struct io *io;

	rd(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 0), "1");
	/* A submitter dispatching for itself is held back like a worker
	 * (queue_submit_idle: the queue had nothing queued). */
	io = h_io(2, ELV_READ, 102, 0, 4096, 900000);
	io->rq.pid = PID_B;
	CHECK(queue_submit_idle(q, io, &io) && io == NULL);
	CHECK(queue_try_next(q) == NULL);
	CHECK_EQ(h_wakeups, 1);
	CHECK_EQ(h_wakeup_ns, ANTIC_MS * H_MS);

	h_now = 2 * H_MS;
	rd(q, 3, PID_A, 1008);
	CHECK_STR(h_order(q, 1), "3");
	/*
	 * A came back in 2 ms: it is waited for again, from now.  The
	 * first wake-up comes too early and arms the next.
	 */
	CHECK_STR(h_order(q, 0), "");
	fire(q, ANTIC_MS * H_MS);
	CHECK(queue_try_next(q) == NULL);
	CHECK_EQ(h_wakeups, 2);
	CHECK_EQ(h_wakeup_ns, (2 + ANTIC_MS) * H_MS);
	fire(q, (2 + ANTIC_MS) * H_MS);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * While A's read is in flight nothing else is dispatched: the think time
 * starts when A has its data, so the wait is armed from the completion.
 */
static void test_waits_for_read_in_flight(void)
{
	struct io *io;
	struct queue *q = as_in_flight(&io);

	CHECK(queue_try_next(q) == NULL);
	h_now = 3 * H_MS;
	CHECK(queue_try_next(q) == NULL);
	if (io != NULL)
		h_complete(q, io);
	CHECK(queue_try_next(q) == NULL);
	CHECK_EQ(h_wakeup_ns, (3 + ANTIC_MS) * H_MS);
	h_now = 4 * H_MS;
	rd(q, 3, PID_A, 1008);
	CHECK_STR(h_order(q, 1), "3");
	fire(q, 100 * H_MS);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * The host tells of an exit (queue_process_exited).  At first exits count
 * as followed by a cooperator (exit_no_coop 0): the wait for the exited
 * process goes on, and a far read still waits for its end.  After an exit
 * with reads in flight and queued, they are served and no wait follows.
 * A later process with the same pid is waited for again.  Another pid's
 * exit changes nothing.
 */
static void test_exit_process(void)
{
	struct queue *q = as_queue();
	struct io *io;

	rd(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, PID_B, 900000);
	CHECK_STR(h_order(q, 0), "");
	queue_process_exited(q, PID_C);
	CHECK_STR(h_order(q, 0), "");
	queue_process_exited(q, PID_A);
	CHECK_STR(h_order(q, 0), "");
	fire(q, ANTIC_MS * H_MS);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_EQ(h_counter(q, "antic_timeouts"), 1);
	CHECK_EQ(h_counter(q, "antic_exits"), 0);

	/* Exited with a read in flight and one queued: no wait after. */
	rd(q, 3, PID_C, 900100);
	rd(q, 7, PID_C, 900108);
	rd(q, 4, PID_D, 10);
	io = queue_try_next(q);
	CHECK(io != NULL && h_part_id(io, 0) == 3);
	queue_process_exited(q, PID_C);
	if (io != NULL)
		h_complete(q, io);
	CHECK_STR(h_order(q, 1), "7");
	CHECK_STR(h_order(q, 0), "4");

	/* The pid again, a new process: waited for as any other. */
	h_now = 10 * H_MS;
	rd(q, 5, PID_A, 3000);
	CHECK_STR(h_order(q, 0), "5");
	rd(q, 6, PID_B, 700000);
	CHECK_STR(h_order(q, 0), "");
	fire(q, 100 * H_MS);
	CHECK_STR(h_order(q, 0), "6");
	CHECK_DONE(7);
	queue_free(q);
}

/*
 * One process per file, as a shell script reads: A reads and exits, and
 * C, the next process, reads close by while the wait for A goes on, which
 * runs antic_expire from the exit (C could not start before).  C's read
 * is served at once, ahead of B's far one, and counts as a close read,
 * not a timeout.
 */
static void test_exit_cooperator(void)
{
	struct queue *q = as_queue();

	rd(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, PID_B, 900000);
	CHECK_STR(h_order(q, 0), "");
	h_now = 4 * H_MS;
	queue_process_exited(q, PID_A);
	CHECK_STR(h_order(q, 0), "");
	h_now = (ANTIC_MS + 3) * H_MS;
	CHECK_STR(h_order(q, 0), "");
	rd(q, 3, PID_C, 1016);
	CHECK_STR(h_order(q, 1), "3");
	CHECK_EQ(h_counter(q, "antic_close"), 1);
	CHECK_EQ(h_counter(q, "antic_timeouts"), 0);
	CHECK_EQ(h_counter(q, "antic_exits"), 0);
	fire(q, 100 * H_MS);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * Exits that nobody follows: each wait for an exited process times out
 * and raises exit_no_coop by an eighth of the way to AS_AVG_ONE (32, 60,
 * 84, 105, 124, 140); once above half, the seventh exit ends its wait at
 * once, on the clock standing still (antic_exits), and B's far read goes.
 */
static void test_exit_learns(void)
{
	struct queue *q = as_queue();
	uint64_t t, s;
	int k;

	for (k = 0; k < 7; k++) {
		t = (uint64_t)k * 100 * H_MS;
		s = 1000 + (uint64_t)k * 2000000;
		h_now = t;
		rd(q, 2 * k + 1, 600 + k, s);
		CHECK_STR(h_order(q, 0), id_str(2 * k + 1));
		rd(q, 2 * k + 2, 700 + k, s + 1000000);
		CHECK_STR(h_order(q, 0), "");
		queue_process_exited(q, 600 + k);
		if (k < 6) {
			CHECK_STR(h_order(q, 0), "");
			fire(q, t + (ANTIC_MS + 1) * H_MS);
		}
		CHECK_STR(h_order(q, 0), id_str(2 * k + 2));
		queue_process_exited(q, 700 + k);
	}
	CHECK_EQ(h_counter(q, "antic_timeouts"), 6);
	CHECK_EQ(h_counter(q, "antic_exits"), 1);
	CHECK_DONE(14);
	queue_free(q);
}

/*
 * A far read of a process whose pid shares PID_A's chain in the table
 * (elv_pid_find) is not taken for A's own: the wait goes on.
 */
static void test_pid_chain(void)
{
	struct queue *q = as_waiting();

	rd(q, 3, PID_A_CHAIN, 500000);
	CHECK(queue_try_next(q) == NULL);
	CHECK_EQ(h_counter(q, "antic_hits"), 0);
	fire(q, (1 + ANTIC_MS) * H_MS);
	CHECK_STR(h_order(q, 0), "3 2");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * A far read of another process does not end the wait; a close one does,
 * and is served at once.
 */
static void test_close_read_breaks(void)
{
	struct queue *q = as_waiting();

	rd(q, 3, PID_C, 500000);
	CHECK(queue_try_next(q) == NULL);
	rd(q, 4, 503, 1100);
	CHECK_STR(h_order(q, 1), "4");
	/* Now 503 is the one waited for; the far reads still wait. */
	CHECK_STR(h_order(q, 0), "");
	fire(q, (1 + ANTIC_MS) * H_MS);
	CHECK_STR(h_order(q, 0), "3 2");
	CHECK_DONE(4);
	queue_free(q);
}

/* A does not come back within antic_expire: B is served. */
static void test_timeout(void)
{
	struct queue *q = as_queue();

	rd(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, PID_B, 900000);
	CHECK(queue_try_next(q) == NULL);
	CHECK_EQ(h_wakeup_ns, ANTIC_MS * H_MS);
	h_now = ANTIC_MS * H_MS - 1;
	CHECK(queue_try_next(q) == NULL);
	fire(q, ANTIC_MS * H_MS);
	CHECK_EQ(h_next_id(q), 2);
	/*
	 * A new process did not come back in time: the next new one (B) is
	 * not waited for, C's far read goes at once.
	 */
	rd(q, 3, PID_C, 10);
	CHECK_EQ(h_next_id(q), 3);
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * The same under a host that tells of exits: A's timeout does not count
 * against new processes (A's exit may be told just after it), so B, new
 * too, is waited for, and C's far read waits.
 */
static void test_timeout_exits_told(void)
{
	struct queue *q = as_queue();

	queue_process_exited(q, PID_D);
	rd(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, PID_B, 900000);
	CHECK(queue_try_next(q) == NULL);
	fire(q, ANTIC_MS * H_MS);
	CHECK_EQ(h_next_id(q), 2);
	rd(q, 3, PID_C, 10);
	CHECK(queue_try_next(q) == NULL);
	fire(q, 2 * ANTIC_MS * H_MS);
	CHECK_EQ(h_next_id(q), 3);
	CHECK_DONE(3);
	queue_free(q);
}

/* An expired read ends the wait before antic_expire does. */
static void test_fifo_expiry_breaks(void)
{
	struct io *io;
	struct queue *q = as_in_flight(&io);

	h_now = (READ_EXPIRE_MS - 1) * H_MS;
	if (io != NULL)
		h_complete(q, io);
	CHECK(queue_try_next(q) == NULL);
	/* The wake-up is at B's expiry, earlier than the wait's end. */
	CHECK_EQ(h_wakeup_ns, READ_EXPIRE_MS * H_MS);
	h_now = READ_EXPIRE_MS * H_MS - 1;
	CHECK(queue_try_next(q) == NULL);
	fire(q, READ_EXPIRE_MS * H_MS);
	CHECK_STR(h_order(q, 1), "2");
	CHECK_DONE(2);
	queue_free(q);
}

/*
 * A's own read ends the wait even far from the head; the elevator then
 * serves what is cheapest from there.
 */
static void test_own_far_read_breaks(void)
{
	struct queue *q = as_waiting();

	rd(q, 3, PID_A, 500000);
	CHECK_STR(h_order(q, 1), "3");
	fire(q, 100 * H_MS);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * A streaming process is served ahead of a far read only until that read
 * expires: read_expire bounds what anticipation costs others.
 */
static void test_read_expire_bounds(void)
{
	struct queue *q = as_queue();
	int i, bad = 0;

	rd(q, 1, PID_A, 1000);
	rd(q, 2, PID_B, 900000);
	CHECK_STR(h_order(q, 1), "1");
	for (i = 1; i < 122; i++) {
		h_now = (uint64_t)i * H_MS;
		rd(q, 2 + i, PID_A, 1000 + 8 * (uint64_t)i);
		if (h_next_id(q) != 2 + i)
			bad++;
	}
	CHECK_EQ(bad, 0);
	/* Waiting for A's next read (till 127 ms) is bounded by B's expiry. */
	h_now = 122 * H_MS;
	CHECK(queue_try_next(q) == NULL);
	CHECK_EQ(h_wakeup_ns, READ_EXPIRE_MS * H_MS);
	fire(q, READ_EXPIRE_MS * H_MS);
	rd(q, 124, PID_A, 1000 + 8 * 122);
	CHECK_STR(h_order(q, 1), "2");
	/* Now B is the one waited for. */
	CHECK_STR(h_order(q, 1), "");
	fire(q, (READ_EXPIRE_MS + ANTIC_MS) * H_MS);
	CHECK_STR(h_order(q, 1), "124");
	CHECK_DONE(124);
	queue_free(q);
}

/* A process that thinks longer than antic_expire is not waited for. */
static void test_long_thinker(void)
{
	struct queue *q = as_queue();

	rd(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 0), "1");
	h_now = 1 * H_MS;
	rd(q, 2, PID_A, 1008);
	CHECK_STR(h_order(q, 0), "2");
	h_now = 51 * H_MS;
	rd(q, 3, PID_A, 1016);
	CHECK_STR(h_order(q, 0), "3");
	/* A's mean think time is now above 6 ms. */
	rd(q, 4, PID_B, 900000);
	CHECK_STR(h_order(q, 0), "4");
	CHECK_EQ(h_wakeups, 0);
	CHECK_DONE(4);

	/*
	 * After more than a second of silence A counts as a new process
	 * (its history forgotten), and new processes came back fast.
	 */
	h_now = 2100 * H_MS;
	rd(q, 1, PID_A, 1024);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, PID_B, 900000);
	CHECK(queue_try_next(q) == NULL);
	CHECK_EQ(h_wakeup_ns, (2100 + ANTIC_MS) * H_MS);
	fire(q, (2100 + ANTIC_MS) * H_MS);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(2);
	queue_free(q);
}

/* Reads of the kernel (pid 0) and writes are never waited after. */
static void test_no_anticipation_for(void)
{
	struct queue *q = as_queue();

	rd(q, 1, 0, 1000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, PID_B, 900000);
	CHECK_STR(h_order(q, 1), "2");
	CHECK_EQ(h_wakeups, 0);
	CHECK_DONE(2);
	queue_free(q);

	q = as_queue();
	wr(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, PID_A, 500000);
	CHECK_STR(h_order(q, 1), "2");
	CHECK_EQ(h_wakeups, 0);
	CHECK_DONE(2);
	queue_free(q);
}

/*
 * Deceptive idleness against writes: during a read batch, queued writes
 * wait for A's next read too, until the wait times out.
 */
static void test_holds_writes(void)
{
	struct queue *q = as_queue();

	rd(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 0), "1");
	wr(q, 2, PID_B, 1016);
	CHECK(queue_try_next(q) == NULL);
	CHECK_EQ(h_wakeup_ns, ANTIC_MS * H_MS);
	/* Other processes' writes, however close, do not end the wait. */
	wr(q, 3, PID_B, 1024);
	CHECK(queue_try_next(q) == NULL);
	h_now = 1 * H_MS;
	rd(q, 4, PID_A, 1008);
	CHECK_STR(h_order(q, 1), "4");
	fire(q, (1 + ANTIC_MS) * H_MS);
	CHECK_STR(h_order(q, 0), "2 3");
	CHECK_DONE(4);
	queue_free(q);
}

/*
 * Any request of the process waited for ends the wait, its write too (the
 * kernel's as_can_break_anticipation: same io_context): it is busy
 * writing, not thinking about its next read.
 */
static void test_own_request_breaks(void)
{
	struct queue *q = as_waiting();

	wr(q, 3, PID_A, 50000000);
	/* No more waiting for A: B's read goes (and B is waited for). */
	CHECK_STR(h_order(q, 0), "2");
	fire(q, (1 + ANTIC_MS) * H_MS);
	CHECK_STR(h_order(q, 0), "3");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * The close window is the kernel's: 4 MiB ahead and 2 MiB behind at
 * first, doubling each millisecond waited, everything after antic_expire.
 */
static void test_close_window(void)
{
	struct queue *q = as_queue();

	rd(q, 1, PID_A, 100000);
	CHECK_STR(h_order(q, 0), "1");
	/* Head at 100008: a read 3 MiB ahead breaks the wait at once. */
	rd(q, 2, PID_B, 100008 + 6144);
	CHECK_STR(h_order(q, 1), "2");
	/* B is waited for (head 106160): 3 MiB behind is outside ... */
	rd(q, 3, PID_C, 106160 - 6144);
	CHECK(queue_try_next(q) == NULL);
	/* ... until 1 ms into the wait, when the window has doubled. */
	h_now = 1 * H_MS;
	CHECK_STR(h_order(q, 1), "3");
	/* C is waited for (head 100024): 100 MiB ahead is close only
	 * once the window has doubled five times. */
	rd(q, 4, 503, 100024 + 204800);
	h_now = 5 * H_MS;
	CHECK(queue_try_next(q) == NULL);
	h_now = 6 * H_MS;
	CHECK_STR(h_order(q, 1), "4");
	CHECK_DONE(4);
	queue_free(q);
}

/*
 * Think-time samples are capped at 20 ms (the kernel's MAX_THINKTIME): a
 * process that thinks 1 ms and paused once for half a second is still
 * waited for.
 */
static void test_think_time_cap(void)
{
	struct queue *q = as_queue();
	int i;

	for (i = 0; i < 20; i++) {
		h_now = (uint64_t)i * H_MS;
		rd(q, 1, PID_A, 1000 + 8 * (uint64_t)i);
		CHECK_STR(h_order(q, 0), "1");
		CHECK_DONE(1);
	}
	h_now = 520 * H_MS;
	rd(q, 1, PID_A, 2000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, PID_B, 900000);
	/* Mean think time (7 x 1 + 20) / 8 ms, under antic_expire. */
	CHECK(queue_try_next(q) == NULL);
	CHECK_EQ(h_wakeup_ns, (520 + ANTIC_MS) * H_MS);
	h_now = 521 * H_MS;
	rd(q, 3, PID_A, 2008);
	CHECK_STR(h_order(q, 1), "3");
	fire(q, (521 + ANTIC_MS) * H_MS);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * In a write batch, sector order gives way to the oldest write once it has
 * waited write_expire: a write far behind the head, queued at 0, is served
 * at 50 ms under write_expire=50 while closer ones keep arriving.
 */
static void test_write_expire(void)
{
	struct queue *q = as_queue();
	uint64_t served_ms = 0;
	int i;

	h_set_tunable(q, "write_expire", 50);
	wr(q, 1, PID_A, 100000);
	CHECK_STR(h_order(q, 1), "1");
	wr(q, 2, PID_B, 100);
	for (i = 1; i <= 300 && served_ms == 0; i++) {
		h_now = (uint64_t)i * H_MS;
		wr(q, 2 + i, PID_A, 100008 + 8 * (uint64_t)i);
		if (h_next_id(q) == 2)
			served_ms = (uint64_t)i;
	}
	CHECK_EQ(served_ms, 50);
	queue_stop(q);
	while (h_next_id(q) > 0)
		;
	CHECK_DONE(i + 1);
	queue_free(q);
}

/* antic_expire=0: never idles, and serves a batch in sector order. */
static void test_antic_off(void)
{
	struct queue *q = as_queue();

	h_set_tunable(q, "antic_expire", 0);
	rd(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, PID_B, 9000000);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(2);

	h_now = 10 * H_MS;
	rd(q, 1, 601, 100000);
	rd(q, 2, 602, 500000);
	rd(q, 3, 603, 300000);
	rd(q, 4, 604, 200000);
	rd(q, 5, 605, 400000);
	/* All behind the head: the sweep wraps to the lowest, goes up. */
	CHECK_STR(h_order(q, 0), "1 4 3 5 2");
	CHECK_EQ(h_wakeups, 0);
	CHECK_DONE(5);
	queue_free(q);
}

/*
 * The elevator goes one way, but takes a step back at twice its cost;
 * further back than 1 Mi sectors (the kernel's MAXBACK, 512 MiB) it waits
 * for the sweep to wrap.
 */
static void test_back_seeks(void)
{
	struct queue *q = as_queue();

	h_set_tunable(q, "antic_expire", 0);
	rd(q, 1, 601, 1000);
	CHECK_STR(h_order(q, 0), "1");
	/* Head at 1008: 108 back costs 216, 292 forward costs 292. */
	rd(q, 2, 602, 900);
	rd(q, 3, 603, 1300);
	CHECK_STR(h_order(q, 1), "2");
	/* Head at 908: 108 back costs 216 > 192 forward. */
	rd(q, 4, 604, 800);
	rd(q, 5, 605, 1100);
	CHECK_STR(h_order(q, 0), "5 3 4");
	CHECK_DONE(5);

	rd(q, 1, 601, 100000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, 602, 100008 - 40000);	/* 80000 > 50000 forward */
	rd(q, 3, 603, 100008 + 50000);
	CHECK_STR(h_order(q, 0), "3 2");
	CHECK_DONE(3);

	/* 250 MiB back (costing 1000000) beats 1500000 forward ... */
	rd(q, 1, 601, 3000000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, 602, 3000008 - 500000);
	rd(q, 3, 603, 3000008 + 1500000);
	CHECK_STR(h_order(q, 1), "2");
	/* ... but 1100000 back is too far: the sweep goes on (3 and 5
	 * ahead) and wraps for it. */
	rd(q, 4, 604, 2500008 - 1100000);
	rd(q, 5, 605, 2500008 + 3000000);
	CHECK_STR(h_order(q, 0), "3 5 4");
	CHECK_DONE(5);

	/* Past the last request the sweep wraps to the lowest, then goes
	 * forward, instead of stepping back one request at a time. */
	rd(q, 1, 601, 9000000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, 602, 100);
	rd(q, 3, 603, 4000000);
	rd(q, 4, 604, 9000016);
	CHECK_STR(h_order(q, 0), "4 2 3");
	CHECK_DONE(4);
	queue_free(q);
}

/* With force (the host draining) the scheduler never idles. */
static void test_force(void)
{
	struct queue *q = as_queue();

	rd(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, PID_B, 900000);
	CHECK(queue_try_next(q) == NULL);
	queue_stop(q);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(2);
	queue_free(q);
}

/*
 * Read and write batches take turns when the other direction waits: a
 * batch runs for its batch expiry, then the other starts at its oldest.
 */
static void test_batches(void)
{
	struct queue *q = as_queue();
	int i;

	h_set_tunable(q, "antic_expire", 0);
	for (i = 1; i <= 6; i++)
		rd(q, i, 600 + i, (uint64_t)i * 100);
	for (i = 7; i <= 12; i++)
		wr(q, i, 600 + i, (uint64_t)i * 100 + 1000);
	CHECK_STR(h_order(q, 1), "1");
	h_now = 250 * H_MS;
	CHECK_STR(h_order(q, 1), "2");
	h_now = 500 * H_MS - 1;
	CHECK_STR(h_order(q, 1), "3");
	/* read_batch_expire (500 ms) is over. */
	h_now = 500 * H_MS;
	CHECK_STR(h_order(q, 1), "7");
	h_now = 625 * H_MS - 1;
	CHECK_STR(h_order(q, 1), "8");
	/* A tunable shortens the next read batch. */
	h_set_tunable(q, "read_batch_expire", 10);
	/* write_batch_expire (125 ms) is over. */
	h_now = 625 * H_MS;
	CHECK_STR(h_order(q, 1), "4");
	h_now = 635 * H_MS - 1;
	CHECK_STR(h_order(q, 1), "5");
	h_now = 635 * H_MS;
	CHECK_STR(h_order(q, 1), "9");
	/* The rest of the write batch, then the last read. */
	CHECK_STR(h_order(q, 0), "10 11 12 6");
	CHECK_DONE(12);
	queue_free(q);
}

/*
 * changed_batch: a change of direction waits for the other direction's
 * requests in flight, so that the new batch is not charged for them.
 */
static void test_changed_batch(void)
{
	struct queue *q = as_queue();
	struct io *io;

	h_set_tunable(q, "antic_expire", 0);
	rd(q, 1, 601, 1000);
	CHECK_STR(h_order(q, 1), "1");		/* read batch till 500 ms */
	wr(q, 2, 602, 5000);
	h_now = 499 * H_MS;
	rd(q, 3, 603, 2000);
	io = queue_try_next(q);
	CHECK(io != NULL && h_part_id(io, 0) == 3);
	h_now = 500 * H_MS;
	/* The batch is over, but read 3 is still in flight. */
	CHECK(queue_try_next(q) == NULL);
	h_now = 510 * H_MS;
	if (io != NULL)
		h_complete(q, io);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * new_batch: a read batch's clock starts at its first completion, not at
 * its first dispatch.
 */
static void test_new_batch(void)
{
	struct queue *q = as_queue();
	struct io *io;

	h_set_tunable(q, "antic_expire", 0);
	wr(q, 1, 601, 5000);
	CHECK_STR(h_order(q, 1), "1");		/* write batch till 125 ms */
	rd(q, 2, 602, 1000);
	wr(q, 4, 604, 6000);
	h_now = 125 * H_MS;
	io = queue_try_next(q);
	CHECK(io != NULL && h_part_id(io, 0) == 2);
	h_now = 175 * H_MS;
	if (io != NULL)
		h_complete(q, io);
	/* The read batch runs till 175 + 500 ms, not 125 + 500. */
	h_now = 650 * H_MS;
	rd(q, 3, 603, 2000);
	CHECK_EQ(h_next_id(q), 3);
	h_now = 675 * H_MS;
	CHECK_EQ(h_next_id(q), 4);
	CHECK_DONE(4);
	queue_free(q);
}

/*
 * write_batch_count: a write batch ends after its count of requests
 * (12 for write_batch_expire 125 ms) even with time left, when reads wait.
 */
static void test_write_batch_count(void)
{
	struct queue *q = as_queue();
	int i;

	h_set_tunable(q, "antic_expire", 0);
	for (i = 1; i <= 14; i++)
		wr(q, i, 600 + i, 100000 + 8 * (uint64_t)i);
	rd(q, 15, 615, 1000);
	CHECK_STR(h_order(q, 13), "15 1 2 3 4 5 6 7 8 9 10 11 12");
	/* Twelve writes at time 0: the read batch comes before the rest. */
	rd(q, 16, 616, 1008);
	CHECK_STR(h_order(q, 1), "16");
	h_now = 500 * H_MS;
	CHECK_STR(h_order(q, 0), "13 14");
	CHECK_DONE(16);
	queue_free(q);
}

/*
 * update_write_batch: a write batch that took more than three times
 * write_batch_expire (to the first read completion after it) halves the
 * next one's count: 12 becomes 6.
 */
static void test_update_write_batch(void)
{
	struct queue *q = as_queue();
	struct io *io;
	int i;

	h_set_tunable(q, "antic_expire", 0);
	for (i = 1; i <= 10; i++)
		wr(q, i, 600 + i, 100000 + 8 * (uint64_t)i);
	/* The first write takes 400 ms while a read waits. */
	io = queue_try_next(q);
	CHECK(io != NULL && h_part_id(io, 0) == 1);
	rd(q, 11, 611, 1000);
	h_now = 400 * H_MS;
	if (io != NULL)
		h_complete(q, io);
	CHECK_STR(h_order(q, 1), "11");
	h_now = 900 * H_MS;
	rd(q, 12, 612, 1008);
	/* The read batch is over: six writes, the read, the rest. */
	CHECK_STR(h_order(q, 0), "2 3 4 5 6 7 12 8 9 10");
	CHECK_DONE(12);
	queue_free(q);
}

/*
 * last_check_fifo: when many reads have expired together, the FIFO is
 * looked at once per read_expire: the oldest goes, then the elevator
 * serves the rest in sector order from there, not in arrival order.
 */
static void test_last_check_fifo(void)
{
	struct queue *q = as_queue();

	h_set_tunable(q, "antic_expire", 0);
	rd(q, 1, 601, 100);
	CHECK_STR(h_order(q, 1), "1");
	rd(q, 2, 602, 5000);
	rd(q, 3, 603, 2000);
	rd(q, 4, 604, 4000);
	rd(q, 5, 605, 3000);
	h_now = 200 * H_MS;
	CHECK_STR(h_order(q, 0), "2 4 5 3");
	CHECK_DONE(5);
	queue_free(q);
}

/* An anticipation does not outlast its batch when writes wait. */
static void test_batch_ends_wait(void)
{
	struct queue *q = as_queue();
	int i;

	h_set_tunable(q, "read_expire", 10000);
	rd(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 1), "1");
	wr(q, 2, PID_B, 900000);
	/* A streams for almost the whole read batch. */
	for (i = 1; i < 498; i++) {
		h_now = (uint64_t)i * H_MS;
		rd(q, 2 + i, PID_A, 1000 + 8 * (uint64_t)i);
		CHECK_EQ(h_next_id(q), 2 + i);
	}
	h_now = 498 * H_MS;
	CHECK(queue_try_next(q) == NULL);
	CHECK_EQ(h_wakeup_ns, 500 * H_MS);
	fire(q, 500 * H_MS);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(499);
	queue_free(q);
}

/*
 * Waiting for a read in flight in a new read batch, with writes queued:
 * the last write batch's end is long past, and asking to be woken then
 * would have the host call at once, again and again until the read
 * completes.  The wake-up asked for is the oldest read's deadline.
 */
static void test_no_wakeup_in_the_past(void)
{
	struct queue *q = as_queue();
	struct io *io;

	wr(q, 1, PID_B, 900000);
	CHECK_STR(h_order(q, 0), "1");
	h_now = 1000 * H_MS;
	rd(q, 2, PID_A, 1000);
	io = queue_try_next(q);
	CHECK(io != NULL && h_part_id(io, 0) == 2);
	wr(q, 3, PID_B, 900008);
	rd(q, 4, PID_C, 500000);
	h_wakeups = 0;
	CHECK(queue_try_next(q) == NULL);
	CHECK(h_wakeups == 0 || h_wakeup_ns > h_now);
	CHECK_EQ(h_wakeup_ns, (1000 + READ_EXPIRE_MS) * H_MS);
	if (io != NULL)
		h_complete(q, io);
	fire(q, h_wakeup_ns);
	CHECK_STR(h_order(q, 0), "4 3");
	CHECK_DONE(4);
	queue_free(q);
}

/*
 * Sync writes belong to the sync batch, as the kernel's rq_is_sync and
 * PF_SYNCWRITE had it: an O_SYNC write goes out in the read batch, in
 * sector order with the reads, ahead of older background writes; it
 * never merges with a background write; and its process is waited for
 * after it as after a read.
 */
static void test_sync_write_in_sync_batch(void)
{
	struct queue *q = as_queue();

	h_set_tunable(q, "antic_expire", 0);
	wr(q, 1, PID_C, 5000);
	rd(q, 2, PID_A, 1000);
	queue_submit(q, sync_io(3, 103, 0, PID_B, 1008));
	CHECK_STR(h_order(q, 0), "2 3 1");
	CHECK_DONE(3);
	CHECK_EQ(h_counter(q, "sync_writes"), 1);

	/* Adjacent in one file, but of two classes: no merge. */
	queue_submit(q, h_io(1, ELV_WRITE, 9, 0, 4096, 3000));
	queue_submit(q, sync_io(2, 9, 4096, PID_B, 3008));
	CHECK_STR(h_order(q, 0), "1 2");
	CHECK_DONE(2);

	/* D's sync write completes: D is waited for, not C's far read. */
	h_set_tunable(q, "antic_expire", ANTIC_MS);
	h_now = 1000 * H_MS;
	queue_submit(q, sync_io(1, 106, 0, PID_D, 4000));
	CHECK_STR(h_order(q, 1), "1");
	rd(q, 2, PID_C, 900000);
	CHECK_STR(h_order(q, 0), "");
	h_now += 1 * H_MS;
	queue_submit(q, sync_io(3, 106, 4096, PID_D, 4008));
	CHECK_STR(h_order(q, 1), "3");
	fire(q, h_now + 100 * H_MS);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * Near synchronous I/O, asynchronous writes go out one at a time, as to
 * a disk without command queueing: a read that comes waits for one write
 * to drain, not a device queue of them.  A second after the last sync
 * request, writes go out together again.
 */
static void test_one_write_in_flight_near_sync(void)
{
	struct queue *q = as_queue();
	struct io *io;

	h_set_tunable(q, "antic_expire", 0);
	rd(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 0), "1");
	wr(q, 2, PID_C, 5000);
	wr(q, 3, PID_C, 5008);
	wr(q, 4, PID_C, 5016);
	io = queue_try_next(q);
	CHECK(io != NULL && h_part_id(io, 0) == 2);
	CHECK(queue_try_next(q) == NULL);
	CHECK_EQ(h_counter(q, "writes_held"), 1);
	h_now = 1 * H_MS;
	if (io != NULL)
		h_complete(q, io);
	io = queue_try_next(q);
	CHECK(io != NULL && h_part_id(io, 0) == 3);
	CHECK(queue_try_next(q) == NULL);
	h_now = 1001 * H_MS;
	CHECK_EQ(h_next_id(q), 4);
	if (io != NULL)
		h_complete(q, io);
	CHECK_DONE(4);
	queue_free(q);
}

/*
 * The counters say how each wait ended: the awaited process came back
 * (hit), another process's close read broke it, or antic_expire passed.
 */
static void test_counters(void)
{
	struct queue *q = as_waiting();

	rd(q, 3, PID_A, 1008);
	CHECK_STR(h_order(q, 1), "3");
	CHECK(queue_try_next(q) == NULL);
	h_now = 2 * H_MS;
	rd(q, 4, PID_C, 1100);
	CHECK_STR(h_order(q, 1), "4");
	CHECK(queue_try_next(q) == NULL);
	fire(q, (2 + ANTIC_MS) * H_MS);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(4);
	CHECK_EQ(h_counter(q, "antic_started"), 3);
	CHECK_EQ(h_counter(q, "antic_hits"), 1);
	CHECK_EQ(h_counter(q, "antic_close"), 1);
	CHECK_EQ(h_counter(q, "antic_timeouts"), 1);
	CHECK_EQ(h_counter(q, "antic_other"), 0);
	CHECK_EQ(h_counter(q, "sync_batches"), 1);
	CHECK_EQ(h_counter(q, "async_batches"), 0);
	queue_free(q);
}

/* Front merges and gap filling, as deadline does them. */
static void test_merges(void)
{
	struct queue *q = as_queue();
	struct io *io;

	h_set_tunable(q, "antic_expire", 0);
	queue_submit(q, h_io(1, ELV_READ, 1, 4096, 4096, 208));
	queue_submit(q, h_io(2, ELV_READ, 1, 0, 4096, 200));
	CHECK_STR(h_order(q, 0), "2+1");
	CHECK_DONE(2);

	/* 2 is the oldest; 4+5+2 keeps its deadline and goes before 3. */
	rd(q, 1, 601, 0);
	CHECK_STR(h_order(q, 0), "1");
	queue_submit(q, h_io(2, ELV_READ, 9, 8192, 4096, 3016));
	h_now = 50 * H_MS;
	rd(q, 3, 603, 100);
	h_now = 100 * H_MS;
	queue_submit(q, h_io(4, ELV_READ, 9, 0, 4096, 3000));
	queue_submit(q, h_io(5, ELV_READ, 9, 4096, 4096, 3008));
	h_now = READ_EXPIRE_MS * H_MS;
	io = queue_try_next(q);
	CHECK(io != NULL && io->nr_parts == 3 && h_part_id(io, 0) == 4 &&
	      io->rq.sector == 3000 && io->rq.nr_sectors == 24);
	if (io != NULL)
		h_complete(q, io);
	CHECK_STR(h_order(q, 0), "3");
	CHECK_DONE(5);
	queue_free(q);
}

/*
 * More processes than the statistics table holds: entries are recycled,
 * nothing is lost; close reads never make the scheduler idle.
 */
static void test_many_processes(void)
{
	struct queue *q = as_queue();
	int round, i, n;

	for (round = 0; round < 3; round++) {
		for (i = 1; i <= 200; i++)
			rd(q, i, 1000 + round * 200 + i, (uint64_t)i * 8);
		for (n = 0; h_next_id(q) > 0; n++)
			;
		CHECK_EQ(n, 200);
		CHECK_DONE(200);
		h_now += 10 * H_MS;
	}
	CHECK_EQ(h_wakeups, 0);
	queue_free(q);
}

/* ------------------------------------------------------------------ */
/* A switch while a process is being waited for.                       */

struct server {
	struct queue *q;
	bool stop;
};

static void *server_main(void *arg)
{
	struct server *s = arg;
	struct timespec ts = { 0, 1000000 };
	struct io *io;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		io = queue_try_next(s->q);
		if (io != NULL)
			h_complete(s->q, io);
		else
			nanosleep(&ts, NULL);
	}
	return NULL;
}

static void test_switch_while_waiting(void)
{
	struct server s = { .q = as_queue() };
	pthread_t t;

	rd(s.q, 1, PID_A, 1000);
	CHECK_STR(h_order(s.q, 0), "1");
	rd(s.q, 2, PID_B, 900000);
	rd(s.q, 3, PID_C, 800000);
	CHECK(queue_try_next(s.q) == NULL);
	/* The clock stands still: only the drain can end the wait. */
	pthread_create(&t, NULL, server_main, &s);
	CHECK_EQ(elv_switch(s.q, elv_noop()), 0);
	CHECK(queue_elevator_type(s.q) == elv_noop());
	__atomic_store_n(&s.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	CHECK_DONE(3);

	/* And back: a fresh instance that waits again. */
	CHECK_EQ(elv_switch(s.q, as), 0);
	rd(s.q, 1, PID_A, 1000);
	CHECK_STR(h_order(s.q, 0), "1");
	rd(s.q, 2, PID_B, 900000);
	CHECK(queue_try_next(s.q) == NULL);
	queue_stop(s.q);
	CHECK_STR(h_order(s.q, 0), "2");
	CHECK_DONE(2);
	queue_free(s.q);
}

/*
 * may_queue: with reads full, the process being anticipated is admitted
 * over nr_requests (ELV_MQUEUE_MUST); another process waits for a slot.
 */
static void test_may_queue(void)
{
	struct queue *q;
	struct h_submitter *s;
	struct io *io;

	h_now = 0;
	q = h_queue(as, 2);
	rd(q, 1, PID_A, 1000);
	CHECK_STR(h_order(q, 0), "1");
	rd(q, 2, PID_B, 900000);
	rd(q, 3, PID_C, 900100);
	CHECK(queue_try_next(q) == NULL);	/* waiting for A */
	io = h_io(4, ELV_READ, 104, 0, 4096, 1008);
	io->rq.pid = PID_A;
	s = h_submit_start(q, io);
	CHECK(h_submitted(s, 5000));
	h_submit_join(s);
	io = h_io(5, ELV_READ, 105, 0, 4096, 500);
	io->rq.pid = PID_C + 1;
	s = h_submit_start(q, io);
	CHECK(!h_submitted(s, 100));
	CHECK_STR(h_order(q, 1), "4");
	queue_stop(q);
	h_order(q, 1);
	CHECK(h_submitted(s, 5000));
	h_submit_join(s);
	h_order(q, 0);
	CHECK_DONE(5);
	queue_free(q);
}

int main(void)
{
	/* A wait that never ends would hang the switch: fail instead. */
	alarm(60);
	as = h_load("anticipatory");
	test_waits_for_next_read();
	test_waits_for_read_in_flight();
	test_exit_process();
	test_exit_cooperator();
	test_exit_learns();
	test_close_read_breaks();
	test_pid_chain();
	test_timeout();
	test_timeout_exits_told();
	test_fifo_expiry_breaks();
	test_own_far_read_breaks();
	test_read_expire_bounds();
	test_write_expire();
	test_long_thinker();
	test_no_anticipation_for();
	test_holds_writes();
	test_own_request_breaks();
	test_close_window();
	test_think_time_cap();
	test_antic_off();
	test_back_seeks();
	test_force();
	test_batches();
	test_batch_ends_wait();
	test_no_wakeup_in_the_past();
	test_changed_batch();
	test_new_batch();
	test_write_batch_count();
	test_update_write_batch();
	test_last_check_fifo();
	test_merges();
	test_sync_write_in_sync_batch();
	test_one_write_in_flight_near_sync();
	test_counters();
	test_many_processes();
	test_switch_while_waiting();
	test_may_queue();
	return h_exit("test_anticipatory");
}
