/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * noop through the real queue: first in, first out, and merging (back
 * merges found by the queue, front merges offered by noop, and a gap
 * filled in between two queued requests), and a submitter dispatching
 * for itself.
 */
#include <limits.h>
#include <unistd.h>

#include "harness.h"

/* Requests come out in arrival order, whatever their sectors. */
static void test_fifo(void)
{
	struct queue *q = h_queue(elv_noop(), 128);

	queue_submit(q, h_io(1, ELV_READ, 1, 0, 4096, 900));
	queue_submit(q, h_io(2, ELV_WRITE, 2, 0, 4096, 100));
	queue_submit(q, h_io(3, ELV_READ, 3, 0, 4096, 500));
	queue_submit(q, h_io(4, ELV_READ, 4, 0, 4096, 10));
	CHECK_STR(h_order(q, 0), "1 2 3 4");
	CHECK(queue_try_next(q) == NULL);
	CHECK_DONE(4);
	queue_free(q);
}

/* A request continuing a queued one joins it, parts in file order. */
static void test_back_merge(void)
{
	struct queue *q = h_queue(elv_noop(), 128);
	struct stats st;

	queue_submit(q, h_io(1, ELV_READ, 1, 0, 4096, 100));
	queue_submit(q, h_io(2, ELV_READ, 1, 4096, 4096, 108));
	queue_submit(q, h_io(3, ELV_READ, 1, 8192, 4096, 116));
	queue_get_stats(q, &st);
	CHECK_EQ(st.dir[ELV_READ].queued, 1);
	CHECK_EQ(st.dir[ELV_READ].merges, 2);
	CHECK_STR(h_order(q, 0), "1+2+3");
	CHECK_DONE(3);
	queue_free(q);
}

/* A request ending where a queued one starts goes in front of it. */
static void test_front_merge(void)
{
	struct queue *q = h_queue(elv_noop(), 128);
	struct io *io;

	queue_submit(q, h_io(1, ELV_WRITE, 7, 8192, 4096, 216));
	queue_submit(q, h_io(2, ELV_WRITE, 7, 4096, 4096, 208));
	io = queue_try_next(q);
	CHECK(io != NULL);
	if (io != NULL) {
		CHECK_EQ(io->rq.offset, 4096);
		CHECK_EQ(io->rq.bytes, 8192);
		CHECK_EQ(io->rq.sector, 208);
		CHECK_EQ(io->rq.nr_sectors, 16);
		CHECK_EQ(h_part_id(io, 0), 2);
		CHECK_EQ(h_part_id(io, 1), 1);
		h_complete(q, io);
	}
	CHECK(queue_try_next(q) == NULL);
	CHECK_DONE(2);
	queue_free(q);
}

/* Filling the gap between two queued requests makes one of all three. */
static void test_fill_gap(void)
{
	struct queue *q = h_queue(elv_noop(), 128);

	queue_submit(q, h_io(1, ELV_READ, 1, 0, 4096, 100));
	queue_submit(q, h_io(2, ELV_READ, 1, 8192, 4096, 116));
	queue_submit(q, h_io(3, ELV_READ, 2, 0, 4096, 50));
	queue_submit(q, h_io(4, ELV_READ, 1, 4096, 4096, 108));
	CHECK_STR(h_order(q, 0), "1+4+2 3");
	CHECK_DONE(4);
	queue_free(q);
}

/* No merge across files, directions, or beyond the size limit. */
static void test_no_merge(void)
{
	struct queue *q = h_queue(elv_noop(), 128);
	uint64_t big = (uint64_t)IOSCHED_MAX_SECTORS << IOSCHED_SECTOR_SHIFT;

	queue_submit(q, h_io(1, ELV_READ, 1, 0, 4096, 100));
	queue_submit(q, h_io(2, ELV_READ, 2, 4096, 4096, 108));
	queue_submit(q, h_io(3, ELV_WRITE, 1, 4096, 4096, 108));
	queue_submit(q, h_io(4, ELV_READ, 3, 0, big, 1000));
	queue_submit(q, h_io(5, ELV_READ, 3, big, 4096, 1000 + big / 512));
	CHECK_STR(h_order(q, 0), "1 2 3 4 5");
	CHECK_DONE(5);
	queue_free(q);
}

/* Merging needs the same backing descriptor, not only the same file. */
static void test_no_merge_across_fds(void)
{
	struct queue *q = h_queue(elv_noop(), 128);
	struct io *io;

	queue_submit(q, h_io(1, ELV_READ, 1, 4096, 4096, 108));
	io = h_io(2, ELV_READ, 1, 8192, 4096, 116);
	io->fd = 5;
	queue_submit(q, io);	/* would be a back merge */
	io = h_io(3, ELV_READ, 1, 0, 4096, 100);
	io->fd = 5;
	queue_submit(q, io);	/* would be a front merge */
	CHECK_STR(h_order(q, 0), "1 2 3");
	CHECK_DONE(3);
	queue_free(q);
}

/*
 * Nor across control groups (struct elv_request's cgroup), so that a
 * scheduler keeping groups apart never finds one group's data in
 * another's request; within a group they merge.
 */
static void test_no_merge_across_cgroups(void)
{
	struct queue *q = h_queue(elv_noop(), 128);
	struct io *io;

	io = h_io(1, ELV_READ, 1, 4096, 4096, 108);
	io->rq.cgroup = 7;
	queue_submit(q, io);
	queue_submit(q, h_io(2, ELV_READ, 1, 8192, 4096, 116));
	queue_submit(q, h_io(3, ELV_READ, 1, 0, 4096, 100));
	io = h_io(4, ELV_READ, 1, 12288, 4096, 124);
	queue_submit(q, io);	/* joins 2, of the root group too */
	CHECK_STR(h_order(q, 0), "1 2+4 3");
	CHECK_DONE(4);
	queue_free(q);
}

/* A newer queued request that cannot merge does not hide one that can. */
static void test_merge_past_unmergeable(void)
{
	struct queue *q = h_queue(elv_noop(), 128);

	queue_submit(q, h_io(1, ELV_READ, 1, 0, 4096, 100));
	queue_submit(q, h_io(2, ELV_WRITE, 1, 0, 4096, 100));
	queue_submit(q, h_io(3, ELV_READ, 1, 4096, 4096, 108));
	queue_submit(q, h_io(4, ELV_WRITE, 1, 12288, 4096, 124));
	queue_submit(q, h_io(5, ELV_READ, 1, 12288, 4096, 124));
	queue_submit(q, h_io(6, ELV_READ, 1, 8192, 4096, 116));
	CHECK_STR(h_order(q, 0), "1+3+6+5 2 4");
	CHECK_DONE(6);
	queue_free(q);
}

/*
 * nr_requests applies to each direction apart: with two reads held a
 * write still gets in, a third read waits until a read completes.
 */
static void test_limit_per_direction(void)
{
	struct queue *q = h_queue(elv_noop(), 2);
	struct h_submitter *s;
	struct io *io;

	queue_submit(q, h_io(1, ELV_READ, 1, 0, 4096, 100));
	queue_submit(q, h_io(2, ELV_READ, 2, 0, 4096, 200));
	s = h_submit_start(q, h_io(3, ELV_WRITE, 3, 0, 4096, 300));
	CHECK(h_submitted(s, 5000));
	h_submit_join(s);
	s = h_submit_start(q, h_io(4, ELV_READ, 4, 0, 4096, 400));
	CHECK(!h_submitted(s, 100));
	io = queue_try_next(q);		/* read 1 goes in flight: still held */
	CHECK(!h_submitted(s, 50));
	if (io != NULL)
		h_complete(q, io);
	CHECK(h_submitted(s, 5000));
	h_submit_join(s);
	CHECK_STR(h_order(q, 0), "2 3 4");
	CHECK_DONE(4);
	queue_free(q);
}

/* A merged io never has more parts than one preadv takes (IOV_MAX). */
static void test_parts_limit(void)
{
	struct queue *q = h_queue(elv_noop(), 2048);
	struct io *io;
	int i;

	for (i = 1; i <= IOV_MAX + 1; i++)
		queue_submit(q, h_io(i, ELV_READ, 1, (uint64_t)(i - 1) * 512,
				     512, (uint64_t)i));
	io = queue_try_next(q);
	CHECK(io != NULL && io->nr_parts == IOV_MAX);
	if (io != NULL)
		h_complete(q, io);
	CHECK_STR(h_order(q, 0), "1025");
	CHECK_DONE(IOV_MAX + 1);
	queue_free(q);
}

/* Direct ios merge only with ios of the same mode, and only aligned. */
static void test_no_merge_dio(void)
{
	struct queue *q = h_queue(elv_noop(), 128);
	struct io *a = h_io(1, ELV_READ, 1, 0, 4096, 100);
	struct io *b = h_io(2, ELV_READ, 1, 4096, 4096, 108);
	struct io *c = h_io(3, ELV_READ, 1, 8192, 1000, 116);
	struct io *d = h_io(4, ELV_READ, 1, 9192, 4096, 118);

	a->dio_align = c->dio_align = d->dio_align = 512;
	c->dio_unaligned = d->dio_unaligned = true;
	queue_submit(q, a);
	queue_submit(q, b);	/* buffered after direct */
	queue_submit(q, c);	/* unaligned after buffered */
	queue_submit(q, d);	/* unaligned after unaligned */
	CHECK_STR(h_order(q, 0), "1 2 3 4");
	CHECK_DONE(4);
	queue_free(q);
}

/* A dispatched request is no merge target any more. */
static void test_no_merge_in_flight(void)
{
	struct queue *q = h_queue(elv_noop(), 128);
	struct io *io;

	queue_submit(q, h_io(1, ELV_READ, 1, 0, 4096, 100));
	io = queue_try_next(q);
	CHECK(io != NULL);
	queue_submit(q, h_io(2, ELV_READ, 1, 4096, 4096, 108));
	if (io != NULL)
		h_complete(q, io);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(2);
	queue_free(q);
}

/*
 * A submitter that dispatches at once gets what the elevator chooses:
 * its own request on an empty queue, else the oldest one; a request it
 * merged away comes out inside the one it joined.
 */
static void test_submit_dispatch(void)
{
	struct queue *q = h_queue(elv_noop(), 128);
	struct io *io, *next;

	io = queue_submit_dispatch(q, h_io(1, ELV_READ, 1, 0, 4096, 100));
	CHECK(io != NULL && h_part_id(io, 0) == 1);
	if (io != NULL)
		h_complete(q, io);
	queue_submit(q, h_io(2, ELV_WRITE, 2, 0, 4096, 500));
	queue_submit(q, h_io(3, ELV_READ, 3, 0, 4096, 50));
	io = queue_submit_dispatch(q, h_io(4, ELV_WRITE, 2, 4096, 4096, 508));
	CHECK(io != NULL && io->nr_parts == 2 && h_part_id(io, 0) == 2 &&
	      h_part_id(io, 1) == 4);
	if (io != NULL)
		h_complete(q, io);
	CHECK_STR(h_order(q, 0), "3");
	CHECK_DONE(4);
	/* A lender submits only onto an idle queue. */
	io = h_io(1, ELV_WRITE, 5, 0, 4096, 700);
	queue_submit(q, h_io(2, ELV_READ, 6, 0, 4096, 800));
	CHECK(!queue_submit_idle(q, io, &next));
	CHECK_STR(h_order(q, 0), "2");
	CHECK(queue_submit_idle(q, io, &next) && next == io);
	if (next != NULL)
		h_complete(q, next);
	CHECK_DONE(2);
	queue_free(q);
}

/* A submission in a thread of its own, which may have to wait. */
struct submitter {
	struct queue *q;
	struct io *io;
	bool done;	/* atomic */
};

static void *submitter_main(void *arg)
{
	struct submitter *s = arg;

	queue_submit(s->q, s->io);
	__atomic_store_n(&s->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Whether *flag becomes true within ms milliseconds. */
static bool flag_within(bool *flag, unsigned ms)
{
	for (; ms > 0; ms--) {
		if (__atomic_load_n(flag, __ATOMIC_ACQUIRE))
			return true;
		usleep(1000);
	}
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

/*
 * nr_requests counts queued plus in flight: with one of each on a queue
 * of two, a new request waits until a completion frees a slot, but one
 * that merges into a queued request is admitted at the limit.
 */
static void test_nr_requests(void)
{
	struct queue *q = h_queue(elv_noop(), 2);
	struct submitter s = { q, h_io(3, ELV_READ, 3, 0, 4096, 300), false };
	struct stats st;
	struct io *io;
	pthread_t t;

	queue_submit(q, h_io(1, ELV_READ, 1, 0, 4096, 100));
	io = queue_try_next(q);
	CHECK(io != NULL);
	queue_submit(q, h_io(2, ELV_READ, 2, 0, 4096, 200));
	/* Full, but a merge takes no slot (main's alarm ends a hang). */
	queue_submit(q, h_io(4, ELV_READ, 2, 4096, 4096, 208));
	pthread_create(&t, NULL, submitter_main, &s);
	/* A bounded look: waiting, it must not return. */
	CHECK(!flag_within(&s.done, 200));
	queue_get_stats(q, &st);
	CHECK_EQ(st.dir[ELV_READ].queued, 1);
	CHECK_EQ(st.dir[ELV_READ].in_flight, 1);
	if (io != NULL)
		h_complete(q, io);
	CHECK(flag_within(&s.done, 10000));
	pthread_join(t, NULL);
	CHECK_STR(h_order(q, 0), "2+4 3");
	CHECK_DONE(4);
	queue_free(q);
}

int main(void)
{
	/* A submitter that waits for ever fails the test instead. */
	alarm(60);
	test_fifo();
	test_back_merge();
	test_front_merge();
	test_fill_gap();
	test_no_merge();
	test_no_merge_across_fds();
	test_no_merge_across_cgroups();
	test_limit_per_direction();
	test_merge_past_unmergeable();
	test_no_merge_in_flight();
	test_parts_limit();
	test_no_merge_dio();
	test_submit_dispatch();
	test_nr_requests();
	return h_exit("test_noop");
}
