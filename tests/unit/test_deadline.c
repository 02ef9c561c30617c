/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * deadline through the real queue, on the virtual clock: sector order
 * within a batch, read and write expiry, direction changes after
 * writes_starved read batches, the fifo_batch bound, and merging (front
 * merges and their tunable, a gap filled between two queued requests
 * keeping the earlier deadline), and the I/O priority classes (real-time
 * first, idle only while no best-effort request is queued or in flight,
 * a held-back class looked at again on a wake-up, prio aging, a drain
 * serving every class).
 */
#include <errno.h>
#include <stdlib.h>

#include "harness.h"

static const struct elevator_type *deadline;

static struct queue *dl_queue(void)
{
	h_now = 0;
	h_wakeups = 0;
	h_wakeup_ns = 0;
	return h_queue(deadline, 256);
}

/* Requests queued together come out in ascending sector order. */
static void test_sorted(void)
{
	struct queue *q = dl_queue();

	h_rd(q, 1, 100);
	h_rd(q, 2, 500);
	h_rd(q, 3, 300);
	h_rd(q, 4, 200);
	h_rd(q, 5, 400);
	CHECK_STR(h_order(q, 0), "1 4 3 5 2");
	CHECK_DONE(5);
	queue_free(q);
}

/*
 * A batch starts at the oldest request and sweeps up; at the top the next
 * batch starts again at the oldest request left.
 */
static void test_sweep_wraps(void)
{
	struct queue *q = dl_queue();

	h_rd(q, 1, 300);
	h_rd(q, 2, 100);
	h_rd(q, 3, 500);
	h_rd(q, 4, 200);
	CHECK_STR(h_order(q, 0), "1 3 2 4");
	CHECK_DONE(4);
	queue_free(q);
}

/* A request arriving just ahead of the sweep joins it. */
static void test_join_sweep(void)
{
	struct queue *q = dl_queue();

	h_rd(q, 1, 100);
	h_rd(q, 2, 50);
	CHECK_STR(h_order(q, 1), "1");
	h_rd(q, 3, 300);
	h_rd(q, 4, 200);
	CHECK_STR(h_order(q, 0), "4 3 2");
	CHECK_DONE(4);
	queue_free(q);
}

/*
 * An expired request starts the next batch even though the sweep would
 * reach it only later; before expiry, the sweep goes on.
 */
static void expiry(enum elv_dir dir, uint64_t expire_ms)
{
	void (*sub)(struct queue *, int, uint64_t) =
		dir == ELV_READ ? h_rd : h_wr;
	struct queue *q = dl_queue();

	h_set_tunable(q, "fifo_batch", 1);
	sub(q, 1, 1000);
	CHECK_STR(h_order(q, 0), "1");
	h_now = 1 * H_MS;
	sub(q, 2, 10);
	h_now = 2 * H_MS;
	sub(q, 3, 2000);
	h_now = 3 * H_MS;
	sub(q, 4, 3000);
	sub(q, 5, 4000);
	h_now = 4 * H_MS;
	CHECK_STR(h_order(q, 1), "3");
	/* 2 expires at 1 ms + expire: just before, the sweep goes on. */
	h_now = (1 + expire_ms) * H_MS - 1;
	CHECK_STR(h_order(q, 1), "4");
	h_now = (1 + expire_ms) * H_MS;
	CHECK_STR(h_order(q, 1), "2");
	CHECK_STR(h_order(q, 0), "5");
	CHECK_DONE(5);
	queue_free(q);
}

static void test_read_expire(void)
{
	expiry(ELV_READ, 500);
}

static void test_write_expire(void)
{
	expiry(ELV_WRITE, 5000);
}

/* The tunable is read when used: a shorter expiry takes effect. */
static void test_expire_tunable(void)
{
	struct queue *q = dl_queue();

	h_set_tunable(q, "fifo_batch", 1);
	h_set_tunable(q, "read_expire", 10);
	h_rd(q, 1, 1000);
	CHECK_STR(h_order(q, 0), "1");
	h_rd(q, 2, 10);
	h_rd(q, 3, 2000);
	h_rd(q, 4, 3000);
	CHECK_STR(h_order(q, 1), "3");
	h_now = 10 * H_MS;
	CHECK_STR(h_order(q, 0), "2 4");
	CHECK_DONE(4);
	queue_free(q);
}

/* Reads first; a write batch after writes_starved read batches. */
static void test_writes_starved(void)
{
	struct queue *q = dl_queue();
	int i;

	h_set_tunable(q, "fifo_batch", 1);
	for (i = 1; i <= 6; i++)
		h_rd(q, i, (uint64_t)i * 100);
	for (i = 7; i <= 9; i++)
		h_wr(q, i, (uint64_t)i * 100);
	CHECK_STR(h_order(q, 0), "1 2 7 3 4 8 5 6 9");
	CHECK_DONE(9);

	/* With writes_starved 0, waiting writes go first every time. */
	h_set_tunable(q, "writes_starved", 0);
	h_rd(q, 1, 100);
	h_rd(q, 2, 200);
	h_wr(q, 3, 300);
	h_wr(q, 4, 400);
	CHECK_STR(h_order(q, 0), "3 4 1 2");
	CHECK_DONE(4);
	queue_free(q);
}

/* A batch holds at most fifo_batch requests. */
static void test_fifo_batch(void)
{
	struct queue *q = dl_queue();
	int i;

	h_set_tunable(q, "fifo_batch", 4);
	h_set_tunable(q, "writes_starved", 1);
	for (i = 1; i <= 8; i++)
		h_rd(q, i, (uint64_t)i * 100);
	for (i = 9; i <= 16; i++)
		h_wr(q, i, (uint64_t)i * 100);
	CHECK_STR(h_order(q, 0), "1 2 3 4 9 10 11 12 5 6 7 8 13 14 15 16");
	CHECK_DONE(16);
	queue_free(q);
}

/* The default fifo_batch is 16: a write gets in after 16 reads. */
static void test_fifo_batch_default(void)
{
	struct queue *q = dl_queue();
	int i;

	h_set_tunable(q, "writes_starved", 1);
	for (i = 1; i <= 20; i++)
		h_rd(q, i, (uint64_t)i * 100);
	h_wr(q, 21, 50);
	CHECK_STR(h_order(q, 0),
		  "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 21 17 18 19 20");
	CHECK_DONE(21);
	queue_free(q);
}

/* A merged 1 MiB request counts as eight 128 KiB ones in a batch. */
static void test_fifo_batch_big(void)
{
	struct queue *q = dl_queue();
	int i;

	h_set_tunable(q, "writes_starved", 1);
	for (i = 1; i <= 4; i++)
		queue_submit(q, h_io(i, ELV_WRITE, 100 + i, 0, 1 << 20,
				     (uint64_t)i * 4096));
	CHECK_STR(h_order(q, 1), "1");
	/* A read arriving mid-batch gets in after two 1 MiB writes. */
	h_rd(q, 5, 50);
	CHECK_STR(h_order(q, 0), "2 5 3 4");
	CHECK_DONE(5);
	queue_free(q);
}

/* Front merges: offered with front_merges=1, not with 0. */
static void test_front_merges(void)
{
	struct queue *q = dl_queue();

	queue_submit(q, h_io(1, ELV_READ, 1, 4096, 4096, 208));
	queue_submit(q, h_io(2, ELV_READ, 1, 0, 4096, 200));
	CHECK_STR(h_order(q, 0), "2+1");
	CHECK_DONE(2);

	h_set_tunable(q, "front_merges", 0);
	queue_submit(q, h_io(1, ELV_READ, 1, 4096, 4096, 208));
	queue_submit(q, h_io(2, ELV_READ, 1, 0, 4096, 200));
	/* Two requests; the oldest starts the batch. */
	CHECK_STR(h_order(q, 0), "1 2");
	CHECK_DONE(2);

	/* Back merges are the queue's and stay on. */
	queue_submit(q, h_io(1, ELV_WRITE, 1, 0, 4096, 200));
	queue_submit(q, h_io(2, ELV_WRITE, 1, 4096, 4096, 208));
	CHECK_STR(h_order(q, 0), "1+2");
	CHECK_DONE(2);
	queue_free(q);
}

/* After a front merge the request moves down in sector order. */
static void test_front_merge_resorts(void)
{
	struct queue *q = dl_queue();

	h_rd(q, 1, 0);
	CHECK_STR(h_order(q, 0), "1");
	h_rd(q, 2, 3004);
	queue_submit(q, h_io(3, ELV_READ, 1, 4096, 4096, 3008));
	queue_submit(q, h_io(4, ELV_READ, 1, 0, 4096, 3000));
	CHECK_STR(h_order(q, 0), "4+3 2");
	CHECK_DONE(4);
	queue_free(q);
}

/*
 * Filling the gap between two queued requests merges all three; the
 * result keeps the earlier deadline (and FIFO place) of the two.
 */
static void test_merged_requests_deadline(void)
{
	struct queue *q = dl_queue();

	h_set_tunable(q, "fifo_batch", 1);
	h_rd(q, 1, 0);
	CHECK_STR(h_order(q, 0), "1");
	/* 2 is the oldest, at the end of the file range. */
	queue_submit(q, h_io(2, ELV_READ, 9, 8192, 4096, 3016));
	h_now = 50 * H_MS;
	h_rd(q, 3, 100);
	h_now = 100 * H_MS;
	queue_submit(q, h_io(4, ELV_READ, 9, 0, 4096, 3000));
	h_now = 200 * H_MS;
	queue_submit(q, h_io(5, ELV_READ, 9, 4096, 4096, 3008));
	/*
	 * 4+5+2 is one request now.  At 500 ms 2's deadline has come: the
	 * merged request goes before 3, which the sweep would pick.
	 */
	h_now = 500 * H_MS;
	CHECK_STR(h_order(q, 0), "4+5+2 3");
	CHECK_DONE(5);
	queue_free(q);
}

/* Deadline never idles: force or not, queued work comes out. */
static void test_never_idles(void)
{
	struct queue *q = dl_queue();
	int i;

	for (i = 1; i <= 50; i++) {
		if (i % 3 == 0)
			h_wr(q, i, (uint64_t)(i * 7919) % 1000);
		else
			h_rd(q, i, (uint64_t)(i * 7919) % 1000);
	}
	for (i = 0; i < 50; i++)
		CHECK(h_next_id(q) > 0);
	CHECK(queue_try_next(q) == NULL);
	CHECK_EQ(h_wakeups, 0);
	CHECK_DONE(50);
	queue_free(q);
}

/* Submit io with I/O priority class cls (level 4 where it has one). */
static void submit_class(struct queue *q, struct io *io, int cls)
{
	io->rq.ioprio = IOSCHED_IOPRIO(cls, cls == ELV_IOPRIO_CLASS_IDLE ? 0 : 4);
	queue_submit(q, io);
}

/* A read like rd's, of I/O priority class cls. */
static void rd_class(struct queue *q, int id, uint64_t sector, int cls)
{
	submit_class(q, h_io(id, ELV_READ, 100 + id, 0, 4096, sector), cls);
}

/*
 * Check that q dispatches nothing now; an io it dispatches all the same
 * is completed, so that a failed check cannot leave a drain waiting.
 */
static void none_next(struct queue *q, int line)
{
	struct io *io = queue_try_next(q);

	if (io != NULL) {
		fprintf(stderr, "%s:%d: dispatched %d, expected nothing\n",
			__FILE__, line, h_part_id(io, 0));
		h_failures++;
		h_complete(q, io);
	}
}
#define NONE_NEXT(q) none_next((q), __LINE__)

/*
 * Best-effort read 1 (sector 100) dispatched, idle read 2 (sector 10)
 * queued; returns read 1, in flight.
 */
static struct io *be_in_flight(struct queue *q)
{
	struct io *be;

	rd_class(q, 1, 100, ELV_IOPRIO_CLASS_BE);
	be = queue_try_next(q);
	CHECK(be != NULL && h_part_id(be, 0) == 1);
	if (be == NULL)
		exit(h_exit("test_deadline"));
	rd_class(q, 2, 10, ELV_IOPRIO_CLASS_IDLE);
	return be;
}

/* Classes in order: real-time, best-effort (none among them), idle. */
static void test_prio_classes_order(void)
{
	struct queue *q = dl_queue();

	rd_class(q, 1, 10, ELV_IOPRIO_CLASS_IDLE);
	rd_class(q, 2, 100, ELV_IOPRIO_CLASS_BE);
	rd_class(q, 3, 200, ELV_IOPRIO_CLASS_NONE);
	rd_class(q, 4, 300, ELV_IOPRIO_CLASS_RT);
	CHECK_STR(h_order(q, 0), "4 2 3 1");
	CHECK_DONE(4);
	queue_free(q);
}

/* An idle request waits while a best-effort one is queued, older or not. */
static void test_prio_idle_waits_queued(void)
{
	struct queue *q = dl_queue();

	rd_class(q, 1, 10, ELV_IOPRIO_CLASS_IDLE);
	h_now = 1 * H_MS;
	rd_class(q, 2, 100, ELV_IOPRIO_CLASS_BE);
	rd_class(q, 3, 200, ELV_IOPRIO_CLASS_BE);
	CHECK_STR(h_order(q, 0), "2 3 1");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * An idle request waits while a best-effort one is in flight; when that
 * completes, not at once (its process is about to send the next) but on
 * the wake-up DL_PRIO_RERUN_MS after it was held back.
 */
static void test_prio_idle_waits_in_flight(void)
{
	struct queue *q = dl_queue();
	struct io *be = be_in_flight(q);

	NONE_NEXT(q);
	CHECK_EQ(h_wakeups, 1);
	CHECK_EQ(h_wakeup_ns, 3 * H_MS);
	h_now = 1 * H_MS;
	h_complete(q, be);
	NONE_NEXT(q);
	/*
	 * The host's timer fired for an earlier wake-up, which had kept
	 * deadline's from being armed: deadline asks again.
	 */
	queue_kick(q);
	NONE_NEXT(q);
	CHECK_EQ(h_wakeups, 2);
	CHECK_EQ(h_wakeup_ns, 3 * H_MS);
	/* The best-effort process sends its next one: it goes first. */
	rd_class(q, 3, 108, ELV_IOPRIO_CLASS_BE);
	CHECK_STR(h_order(q, 1), "3");
	h_now = 3 * H_MS;
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * prio_aging_expire: an idle request that waited that long goes out even
 * while best-effort requests are in flight and queued.
 */
static void prio_aging(int64_t expire_ms)
{
	struct queue *q = dl_queue();
	struct io *be;

	if (expire_ms != 10000)
		h_set_tunable(q, "prio_aging_expire", expire_ms);
	be = be_in_flight(q);
	h_now = (uint64_t)expire_ms * H_MS - 1;
	NONE_NEXT(q);
	rd_class(q, 3, 108, ELV_IOPRIO_CLASS_BE);
	CHECK_STR(h_order(q, 1), "3");
	h_now = (uint64_t)expire_ms * H_MS;
	rd_class(q, 4, 116, ELV_IOPRIO_CLASS_BE);
	CHECK_STR(h_order(q, 0), "2 4");
	h_complete(q, be);
	CHECK_DONE(4);
	queue_free(q);
}

static void test_prio_aging(void)
{
	prio_aging(10000);
	prio_aging(50);
}

/* A read of class cls of 4 KiB at offset of file 7, sector offset / 512. */
static void rd_file(struct queue *q, int id, uint64_t offset, int cls)
{
	submit_class(q, h_io(id, ELV_READ, 7, offset, 4096, offset / 512), cls);
}

/*
 * Merged away, a request no longer holds its class back: after a gap
 * filled between two best-effort requests, the idle one follows at once.
 * Requests of two classes never merge.
 */
static void test_prio_merges(void)
{
	struct queue *q = dl_queue();

	rd_file(q, 1, 0, ELV_IOPRIO_CLASS_BE);
	rd_file(q, 2, 8192, ELV_IOPRIO_CLASS_BE);
	rd_file(q, 3, 4096, ELV_IOPRIO_CLASS_BE);
	rd_file(q, 4, 12288, ELV_IOPRIO_CLASS_IDLE);
	CHECK_STR(h_order(q, 0), "1+3+2 4");
	CHECK_DONE(4);
	queue_free(q);
}

/* A drain serves an idle request while a best-effort one is in flight. */
static void test_prio_drain(void)
{
	struct queue *q = dl_queue();
	struct io *held[1] = { be_in_flight(q) };

	NONE_NEXT(q);
	CHECK_EQ(h_switch_held(q, elv_noop(), held, 1, 1), 1);
	CHECK_DONE(2);
	queue_free(q);
}

int main(void)
{
	deadline = h_load("deadline");
	test_sorted();
	test_sweep_wraps();
	test_join_sweep();
	test_read_expire();
	test_write_expire();
	test_expire_tunable();
	test_writes_starved();
	test_fifo_batch();
	test_fifo_batch_default();
	test_fifo_batch_big();
	test_front_merges();
	test_front_merge_resorts();
	test_merged_requests_deadline();
	test_never_idles();
	test_prio_classes_order();
	test_prio_idle_waits_queued();
	test_prio_idle_waits_in_flight();
	test_prio_aging();
	test_prio_merges();
	test_prio_drain();
	return h_exit("test_deadline");
}
