/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The disk model: the cost of an io (transfer only when contiguous; seek,
 * half a revolution and transfer otherwise), the seek curve (monotonic,
 * capped at a full stroke, averaging seek_ms over random I/O), the
 * parameters, and the head serving one io at a time (booked on a virtual
 * clock, and for real through a queue with two workers).  The ssd model:
 * reads without seeks, writes cheap into the buffer and waiting once it
 * is full, channels in parallel, reads waiting behind stalled writes.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"

#define US 1000ULL
#define STROKE (1ULL << 31)	/* 1 TiB of sectors */

/* A request for the cost function alone. */
static struct elv_request rq_at(uint64_t sector, uint64_t bytes)
{
	struct elv_request rq = {
		.dir = ELV_READ,
		.sector = sector,
		.bytes = bytes,
		.nr_sectors = (bytes + 511) / 512,
	};

	return rq;
}

static struct diskmodel *model(unsigned seek_ms, unsigned rpm,
			       unsigned mb_per_s)
{
	struct diskmodel *dm = diskmodel_new(seek_ms, rpm, mb_per_s);

	if (dm == NULL) {
		fprintf(stderr, "diskmodel_new(%u, %u, %u) failed\n", seek_ms,
			rpm, mb_per_s);
		exit(1);
	}
	return dm;
}

/* The head already there: bytes at the media rate, nothing else. */
static void test_contiguous(void)
{
	struct diskmodel *dm = model(8, 7200, 150);
	struct elv_request rq = rq_at(1000, 4096);

	CHECK_EQ(diskmodel_cost_ns(dm, 1000, &rq), 4096 * 1000 / 150);
	rq = rq_at(0, 1 << 20);
	CHECK_EQ(diskmodel_cost_ns(dm, 0, &rq), (1 << 20) * 1000 / 150);
	diskmodel_free(dm);
}

/* One sector away: a track-to-track seek and half a revolution. */
static void test_rotation(void)
{
	struct diskmodel *dm = model(8, 7200, 150);
	struct elv_request rq = rq_at(1001, 4096);
	uint64_t transfer = 4096 * 1000 / 150, cost;

	cost = diskmodel_cost_ns(dm, 1000, &rq);
	/* 60000 / 7200 / 2 ms = 4.1667 ms; track to track 0.5 ms. */
	CHECK(cost >= transfer + 4166666 + 500 * US);
	CHECK(cost < transfer + 4166666 + 510 * US);
	/* Backwards costs the same as forwards. */
	CHECK_EQ(diskmodel_cost_ns(dm, 1002, &rq), cost);
	diskmodel_free(dm);
}

/* Longer seeks cost more, up to a full stroke, and no more after it. */
static void test_seek_curve(void)
{
	struct diskmodel *dm = model(8, 7200, 150);
	uint64_t prev = 0, s, full;
	int shift;

	CHECK_EQ(diskmodel_seek_ns(dm, 0), 0);
	for (shift = 0; shift <= 62; shift++) {
		s = diskmodel_seek_ns(dm, 1ULL << shift);
		/* Growing up to the stroke (2^31), flat after it. */
		CHECK(shift > 31 || shift == 0 ? s >= prev : s > prev);
		prev = s;
	}
	/* full = 0.5 + (8 - 0.5) * 15 / 8 ms: 8 ms on average. */
	full = 500 * US + 7500 * US * 15 / 8;
	CHECK_EQ(diskmodel_seek_ns(dm, STROKE), full);
	CHECK_EQ(diskmodel_seek_ns(dm, STROKE + 1), full);
	/* Fallback sectors (2^62 + slot) against real ones: capped. */
	CHECK_EQ(diskmodel_seek_ns(dm, (1ULL << 62) + (5ULL << 24)), full);
	CHECK_EQ(diskmodel_seek_ns(dm, UINT64_MAX), full);
	/* A quarter stroke: halfway up the square root. */
	s = diskmodel_seek_ns(dm, STROKE / 4);
	CHECK(s > 500 * US + (full - 500 * US) / 2 - 10 * US);
	CHECK(s < 500 * US + (full - 500 * US) / 2 + 10 * US);
	diskmodel_free(dm);
}

/* Random positions on the whole device: the mean seek is seek_ms. */
static void test_average_seek(void)
{
	struct diskmodel *dm = model(8, 7200, 150);
	uint64_t x = 12345, a, b, sum = 0;
	const unsigned n = 200000;

	for (unsigned i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		a = (x >> 20) % STROKE;
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		b = (x >> 20) % STROKE;
		sum += diskmodel_seek_ns(dm, a > b ? a - b : b - a);
	}
	CHECK(sum / n > 7800 * US);
	CHECK(sum / n < 8200 * US);
	diskmodel_free(dm);
}

/* seek_ms, rpm and mb_per_s each change their term only. */
static void test_parameters(void)
{
	struct diskmodel *dm;
	struct elv_request far = rq_at(STROKE, 1 << 20);

	dm = model(5, 7200, 100);
	CHECK_EQ(diskmodel_seek_ns(dm, STROKE), 500 * US + 4500 * US * 15 / 8);
	CHECK_EQ(diskmodel_cost_ns(dm, 0, &far),
		 500 * US + 4500 * US * 15 / 8 + 4166666 +
		 (1 << 20) * 1000 / 100);
	diskmodel_free(dm);

	dm = model(5, 15000, 100);
	CHECK_EQ(diskmodel_cost_ns(dm, 0, &far),
		 500 * US + 4500 * US * 15 / 8 + 2000000 +
		 (1 << 20) * 1000 / 100);
	diskmodel_free(dm);

	dm = model(5, 15000, 1000);
	CHECK_EQ(diskmodel_cost_ns(dm, 0, &far),
		 500 * US + 4500 * US * 15 / 8 + 2000000 +
		 (1 << 20) * 1000 / 1000);
	diskmodel_free(dm);

	/* No seek time at all, but the platter still turns. */
	dm = model(0, 5400, 100);
	CHECK_EQ(diskmodel_seek_ns(dm, STROKE), 0);
	CHECK_EQ(diskmodel_cost_ns(dm, 0, &far),
		 5555555 + (1 << 20) * 1000 / 100);
	diskmodel_free(dm);

	errno = 0;
	CHECK(diskmodel_new(8, 0, 150) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(diskmodel_new(8, 7200, 0) == NULL && errno == EINVAL);
	CHECK(diskmodel_name_valid("none"));
	CHECK(diskmodel_name_valid("hdd"));
	CHECK(diskmodel_name_valid("ssd"));
	CHECK(!diskmodel_name_valid("tape"));
	CHECK(!diskmodel_name_valid(""));
}

/* Bookings queue up behind each other and move the head. */
static void test_book(void)
{
	struct diskmodel *dm = model(8, 7200, 100);
	struct elv_request a = rq_at(0, 4096), b = rq_at(8, 4096);
	struct elv_request c = rq_at(STROKE, 4096);
	uint64_t t = 4096 * 1000 / 100, end;

	/* The head starts at sector 0: a is contiguous, b follows a. */
	end = diskmodel_book(dm, &a, 1000 * US);
	CHECK_EQ(end, 1000 * US + t);
	/* Asked for at the same time, b waits for a. */
	end = diskmodel_book(dm, &b, 1000 * US);
	CHECK_EQ(end, 1000 * US + 2 * t);
	/* c is a full stroke away from b's end. */
	end = diskmodel_book(dm, &c, 1000 * US);
	CHECK_EQ(end, 1000 * US + 3 * t + diskmodel_seek_ns(dm, STROKE - 16) +
		 4166666);
	/* After idling, the next starts when asked; c to a: a full stroke. */
	end = diskmodel_book(dm, &a, 10000000 * US);
	CHECK_EQ(end, 10000000 * US + t + diskmodel_seek_ns(dm, STROKE) +
		 4166666);
	diskmodel_free(dm);
}

#define MIB (1ULL << 20)

/* Defaults with a 4 MiB buffer, so that it fills in a few writes. */
static struct diskmodel *ssd(unsigned channels)
{
	struct diskmodel_ssd p = {
		.channels = channels,
		.read_us = 80,
		.mb_per_s = 500,
		.buffer_mib = 4,
		.drain_mb_per_s = 100,
	};
	struct diskmodel *dm = diskmodel_ssd_new(&p);

	if (dm == NULL) {
		fprintf(stderr, "diskmodel_ssd_new failed\n");
		exit(1);
	}
	return dm;
}

static struct elv_request wr_at(uint64_t sector, uint64_t bytes)
{
	struct elv_request rq = rq_at(sector, bytes);

	rq.dir = ELV_WRITE;
	return rq;
}

/* A read costs its access time and transfer wherever it is: no seeks. */
static void test_ssd_read(void)
{
	struct diskmodel *dm = ssd(1);
	struct elv_request near = rq_at(8, 4096), far = rq_at(STROKE, 4096);

	CHECK_EQ(diskmodel_ssd_cost_ns(dm, &near, 0), 80 * US + 4096 * 1000 / 500);
	CHECK_EQ(diskmodel_ssd_cost_ns(dm, &far, 0), 80 * US + 4096 * 1000 / 500);
	diskmodel_free(dm);
}

/* Into an empty buffer, a write costs its transfer only: less than a read. */
static void test_ssd_write_buffered(void)
{
	struct diskmodel *dm = ssd(1);
	struct elv_request w = wr_at(0, 4096), r = rq_at(0, 4096);

	CHECK_EQ(diskmodel_ssd_cost_ns(dm, &w, 0), 4096 * 1000 / 500);
	CHECK(diskmodel_ssd_cost_ns(dm, &w, 0) <
	      diskmodel_ssd_cost_ns(dm, &r, 0));
	diskmodel_free(dm);
}

/*
 * Writes fill the buffer; once full, a write waits for the drain (1 MiB
 * at 100 MB/s: 10.49 ms); the level falls with time, so after a pause
 * writes are cheap again.
 */
static void test_ssd_buffer_fills(void)
{
	struct diskmodel *dm = ssd(1);
	struct elv_request w = wr_at(0, MIB);
	uint64_t t = MIB * 1000 / 500, drain = MIB * 1000 / 100, end, want;

	for (int i = 0; i < 4; i++) {
		end = diskmodel_book(dm, &w, 0);
		CHECK_EQ(end, (i + 1) * t);
	}
	/* Four MiB in, 4 t of drain (8.4 ms of 42 ms) gone: the fifth
	 * waits until 1 MiB has drained past the four already in. */
	end = diskmodel_book(dm, &w, 0);
	want = 4 * t + (drain - 4 * t) + t;
	/* Give or take the rounding of bytes to nanoseconds and back. */
	CHECK(end + 10 >= want && end <= want + 10);
	/* Long after the drain, the buffer is empty again. */
	end = diskmodel_book(dm, &w, 1000000 * US);
	CHECK_EQ(end, 1000000 * US + t);
	diskmodel_free(dm);
}

/* Channels serve in parallel: as many reads as channels end together. */
static void test_ssd_channels(void)
{
	struct diskmodel *dm = ssd(4);
	struct elv_request r = rq_at(0, 4096);
	uint64_t c = diskmodel_ssd_cost_ns(dm, &r, 0);

	for (int i = 0; i < 4; i++)
		CHECK_EQ(diskmodel_book(dm, &r, 0), c);
	/* The fifth waits for the first channel to free. */
	CHECK_EQ(diskmodel_book(dm, &r, 0), 2 * c);
	diskmodel_free(dm);
}

/*
 * A read queued in the device behind writes stalled on a full buffer
 * waits for them: its latency grows with the writes piled up ahead.
 */
static void test_ssd_read_behind_writes(void)
{
	struct diskmodel *dm = ssd(2);
	struct elv_request w = wr_at(0, MIB), r = rq_at(0, 4096);
	uint64_t alone = diskmodel_ssd_cost_ns(dm, &r, 0), end, few, many;

	for (int i = 0; i < 6; i++)
		diskmodel_book(dm, &w, 0);
	end = diskmodel_book(dm, &r, 0);
	few = end;
	CHECK(few > 10 * alone);
	diskmodel_free(dm);

	dm = ssd(2);
	for (int i = 0; i < 12; i++)
		diskmodel_book(dm, &w, 0);
	many = diskmodel_book(dm, &r, 0);
	CHECK(many > few);
	diskmodel_free(dm);
}

/* Parameters out of range are refused with EINVAL. */
static void test_ssd_parameters(void)
{
	struct diskmodel_ssd p = { 4, 80, 500, 32, 300 };
	struct diskmodel *dm;

	dm = diskmodel_ssd_new(&p);
	CHECK(dm != NULL);
	diskmodel_free(dm);
	p.channels = 0;
	errno = 0;
	CHECK(diskmodel_ssd_new(&p) == NULL && errno == EINVAL);
	p.channels = DISKMODEL_SSD_CHANNELS_MAX + 1;
	errno = 0;
	CHECK(diskmodel_ssd_new(&p) == NULL && errno == EINVAL);
	p.channels = 4;
	p.drain_mb_per_s = 0;
	errno = 0;
	CHECK(diskmodel_ssd_new(&p) == NULL && errno == EINVAL);
}

struct worker {
	pthread_t thread;
	struct diskmodel *dm;
	struct queue *q;
	uint64_t done_ns;	/* when its last io's service ended */
	int got;		/* ios it got */
};

/* As a dispatch worker does: take an io, wait out its service, complete. */
static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct io *io;
	uint64_t end_ns;

	while ((io = diskmodel_next(w->dm, w->q, &end_ns)) != NULL) {
		diskmodel_wait(end_ns);
		w->done_ns = clock_now_ns();
		w->got++;
		h_complete(w->q, io);
	}
	return NULL;
}

/*
 * For real: two workers, two ios of 1 MiB, the first contiguous with the
 * head (10.49 ms at 100 MB/s) and the second far away (another 10.49 ms,
 * a full stroke of 8.94 ms and 4.17 ms of rotation): the last io ends
 * no earlier than the sum, as the head serves one at a time.
 * Then stopping the queue ends both workers.
 */
static void test_next(void)
{
	struct diskmodel *dm = model(5, 7200, 100);
	struct queue *q = h_queue(elv_noop(), 16);
	struct worker w[2];
	uint64_t start, last = 0, want;
	int got = 0;

	want = 2 * ((1 << 20) * 1000 / 100) + diskmodel_seek_ns(dm, STROKE) +
	       4166666;
	start = clock_now_ns();
	queue_submit(q, h_io(1, ELV_READ, 1, 0, 1 << 20, 0));
	queue_submit(q, h_io(2, ELV_READ, 2, 0, 1 << 20, 2 * STROKE));
	for (int i = 0; i < 2; i++) {
		w[i] = (struct worker){ .dm = dm, .q = q };
		if (pthread_create(&w[i].thread, NULL, worker_run, &w[i]) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			exit(1);
		}
	}
	/* Both ios are handed out well within a second. */
	for (int i = 0; i < 200 && h_completions(2) == 0; i++)
		usleep(5000);
	queue_stop(q);
	for (int i = 0; i < 2; i++) {
		pthread_join(w[i].thread, NULL);
		got += w[i].got;
		if (w[i].done_ns > last)
			last = w[i].done_ns;
	}
	CHECK_EQ(got, 2);
	CHECK(last - start >= want);
	if (last - start < want)
		fprintf(stderr, "served in %" PRIu64 " ns, want >= %" PRIu64
			"\n", last - start, want);
	CHECK_DONE(2);
	queue_free(q);
	diskmodel_free(dm);
}

int main(void)
{
	test_contiguous();
	test_rotation();
	test_seek_curve();
	test_average_seek();
	test_parameters();
	test_book();
	test_next();
	test_ssd_read();
	test_ssd_write_buffered();
	test_ssd_buffer_fills();
	test_ssd_channels();
	test_ssd_read_behind_writes();
	test_ssd_parameters();
	return h_exit("test_diskmodel");
}
