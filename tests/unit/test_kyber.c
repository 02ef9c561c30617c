/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kyber through the real queue, on the virtual clock, with completions
 * driven by hand so that latencies are chosen by the test: FIFO order in
 * a domain, round-robin between domains with the batch sizes, depth limits
 * per domain (and dispatch going on with other domains), all reads in the
 * read domain, force ignoring depths, the write depth shrinking while
 * reads miss their target and staying there once they meet it (and the
 * other way round), growing only when its own target is missed, bounded
 * front merges, and a switch away with requests queued and in flight.
 */
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"

static const struct elevator_type *kyber;

/* The largest depths kyber starts with, the kernel's. */
#define READ_DEPTH	256
#define WRITE_DEPTH	128

#define H_US		1000ULL
#define MAX_HELD	1024

static struct queue *ky_queue(void)
{
	h_now = 0;
	return h_queue(kyber, 1024);
}

/* One 4 KiB request of its own file: no merging unless a test wants it. */
static void rd(struct queue *q, int id)
{
	h_rd(q, id, (uint64_t)id * 8);
}

static void wr(struct queue *q, int id)
{
	h_wr(q, id, (uint64_t)id * 8);
}

/* A read nobody waits for (readahead): still the read domain. */
static void ard(struct queue *q, int id)
{
	struct io *io = h_io(id, ELV_READ, 100 + (uint64_t)id, 0, 4096,
			     (uint64_t)id * 8);

	io->rq.sync = false;
	queue_submit(q, io);
}

/* Dispatch without completing, until kyber says no; returns how many. */
static unsigned dispatch_all(struct queue *q, struct io **held, unsigned max)
{
	unsigned n = 0;
	struct io *io;

	while (n < max && (io = queue_try_next(q)) != NULL)
		held[n++] = io;
	return n;
}

static void complete_all(struct queue *q, struct io **held, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		h_complete(q, held[i]);
}

/* ------------------------------------------------------------------ */
/* Order.                                                              */

/* No sorting: each domain is served in arrival order. */
static void test_fifo(void)
{
	struct queue *q = ky_queue();
	int i;

	for (i = 1; i <= 5; i++)
		queue_submit(q, h_io(i, ELV_READ, 100 + (uint64_t)i, 0, 4096,
				     (uint64_t)(6 - i) * 1000));
	CHECK_STR(h_order(q, 0), "1 2 3 4 5");
	for (i = 6; i <= 9; i++)
		queue_submit(q, h_io(i, ELV_WRITE, 100 + (uint64_t)i, 0, 4096,
				     (uint64_t)(10 - i) * 1000));
	CHECK_STR(h_order(q, 0), "6 7 8 9");
	CHECK_DONE(9);
	queue_free(q);
}

/*
 * Reads in batches of 16, writes of 8, round-robin; a domain that runs
 * dry ends its batch early.  Readahead is a read like any other (the
 * kernel's domains go by operation).
 */
static void test_round_robin(void)
{
	struct queue *q = ky_queue();
	int i;

	for (i = 1; i <= 20; i++)
		rd(q, i);
	for (i = 21; i <= 30; i++)
		wr(q, i);
	for (i = 31; i <= 33; i++)
		ard(q, i);
	CHECK_STR(h_order(q, 0),
		  "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 "
		  "21 22 23 24 25 26 27 28 "
		  "17 18 19 20 31 32 33 29 30");
	CHECK_DONE(33);
	queue_free(q);
}

/* ------------------------------------------------------------------ */
/* Depth limits.                                                       */

/*
 * Each domain has at most its depth in flight; the others go on being
 * served meanwhile, and a completion hands the token back.
 */
static void test_depth_limits(void)
{
	static struct io *held[MAX_HELD];
	struct queue *q = ky_queue();
	unsigned n, reads = 0, writes = 0, i;
	int id = 1;

	for (i = 0; i < WRITE_DEPTH + 10; i++)
		wr(q, id++);
	/* Readahead and waited-for reads share the read depth. */
	for (i = 0; i < READ_DEPTH / 2; i++)
		ard(q, id++);
	for (i = 0; i < READ_DEPTH / 2 + 5; i++)
		rd(q, id++);
	n = dispatch_all(q, held, MAX_HELD);
	for (i = 0; i < n; i++) {
		if (held[i]->rq.dir == ELV_WRITE)
			writes++;
		else
			reads++;
	}
	CHECK_EQ(writes, WRITE_DEPTH);
	CHECK_EQ(reads, READ_DEPTH);
	CHECK_EQ(n, WRITE_DEPTH + READ_DEPTH);

	/* A write completes: exactly one more write may go. */
	for (i = 0; held[i]->rq.dir != ELV_WRITE; i++)
		;
	h_complete(q, held[i]);
	held[i] = queue_try_next(q);
	CHECK(held[i] != NULL && held[i]->rq.dir == ELV_WRITE);
	CHECK(queue_try_next(q) == NULL);

	/* Then everything drains as tokens come back. */
	complete_all(q, held, n);
	CHECK_EQ(strlen(h_order(q, 0)) > 0, 1);
	CHECK_DONE(id - 1);
	queue_free(q);
}

/* Draining (force) hands out requests beyond the depth. */
static void test_force(void)
{
	static struct io *held[MAX_HELD];
	struct queue *q = ky_queue();
	unsigned n, more;
	int i;

	for (i = 1; i <= WRITE_DEPTH + 16; i++)
		wr(q, i);
	n = dispatch_all(q, held, MAX_HELD);
	CHECK_EQ(n, WRITE_DEPTH);
	queue_stop(q);
	more = dispatch_all(q, held + n, MAX_HELD - n);
	CHECK_EQ(more, 16);
	complete_all(q, held, n + more);
	CHECK_DONE(WRITE_DEPTH + 16);
	queue_free(q);
}

/* ------------------------------------------------------------------ */
/* Latency feedback.                                                   */

/*
 * The kernel judges a domain's histograms once they hold 500 samples (or
 * a second after the timer first found samples in them).  The helpers
 * below count, per direction, the samples left since the last judgement
 * (the probes' own completions), so that a stretch brings both domains to
 * 500 in its last round and not before, and the timer run that judges
 * them is the probe's first dispatch after the stretch.
 */
#define MIN_SAMPLES	500
#define STRETCH_ROUNDS	20
#define TIMER_NS	(100 * H_MS)

static int next_id;
static unsigned pending[2];	/* per enum elv_dir */

/*
 * Check that every request so far completed once, and start the ids
 * again (they are bounded); only with nothing queued or in flight.
 */
static void recycle_ids(void)
{
	if (next_id < H_MAX_IDS / 2)
		return;
	CHECK_DONE(next_id - 1);
	next_id = 1;
}

/*
 * Submit n requests of dir and dispatch them: kyber must let them all go.
 * held[] gets them.
 */
static unsigned start_n(struct queue *q, enum elv_dir dir, unsigned n,
			struct io **held)
{
	unsigned i, got;

	for (i = 0; i < n; i++) {
		if (dir == ELV_READ)
			rd(q, next_id++);
		else
			wr(q, next_id++);
	}
	got = dispatch_all(q, held, n);
	CHECK_EQ(got, n);
	if (got != n)
		exit(h_exit("test_kyber"));
	return got;
}

/*
 * One stretch of traffic: reads taking read_lat and writes write_lat
 * (device and total latency alike), in rounds whose reads and writes all
 * complete at one instant, so that no timer run falls between them.  At
 * the end the clock stands where the timer has expired: the next dispatch
 * runs it, and it judges both domains.  A round holds at most 25 of each
 * (500 / 20), so depths down to 32 suffice; 20 rounds of at most 15 ms
 * stay well inside the second.
 */
static void stretch(struct queue *q, uint64_t read_lat, uint64_t write_lat)
{
	static struct io *held[2 * MAX_HELD];
	uint64_t lat[2] = { [ELV_READ] = read_lat, [ELV_WRITE] = write_lat };
	unsigned need[2], n, i, r, d, first;

	recycle_ids();
	for (d = 0; d < 2; d++) {
		CHECK(pending[d] < MIN_SAMPLES - STRETCH_ROUNDS);
		need[d] = MIN_SAMPLES - pending[d];
	}
	/* The slower direction is dispatched first. */
	first = read_lat >= write_lat ? ELV_READ : ELV_WRITE;
	for (r = 0; r < STRETCH_ROUNDS; r++) {
		n = 0;
		for (i = 0; i < 2; i++) {
			d = i == 0 ? first : !first;
			if (i == 1)
				h_now += lat[first] - lat[d];
			n += start_n(q, d, need[d] * (r + 1) / STRETCH_ROUNDS -
				     need[d] * r / STRETCH_ROUNDS, held + n);
		}
		h_now += lat[!first];
		complete_all(q, held, n);
	}
	h_now += TIMER_NS;
	pending[ELV_READ] = pending[ELV_WRITE] = 0;
}

/*
 * How many requests of one domain kyber lets into flight now: the depth.
 * They complete at once (with all those queued), adding samples of no
 * latency, which a stretch counts.
 */
static unsigned probe_n(struct queue *q, enum elv_dir dir, unsigned nr)
{
	static struct io *held[MAX_HELD];
	unsigned n, i;

	recycle_ids();
	for (i = 0; i < nr; i++) {
		if (dir == ELV_READ)
			rd(q, next_id++);
		else
			wr(q, next_id++);
	}
	n = dispatch_all(q, held, MAX_HELD);
	complete_all(q, held, n);
	/* The rest go too, so that the queue is empty for what follows. */
	while (h_next_id(q) >= 0)
		;
	pending[dir] += nr;
	return n;
}

static unsigned probe(struct queue *q, enum elv_dir dir)
{
	return probe_n(q, dir, READ_DEPTH + 8);
}

static struct queue *ky_latency_queue(void)
{
	next_id = 1;
	pending[ELV_READ] = pending[ELV_WRITE] = 0;
	return ky_queue();
}

/* The depth of dir (probe) after a stretch at these latencies. */
static unsigned depth_after(struct queue *q, uint64_t read_lat,
			    uint64_t write_lat, enum elv_dir dir)
{
	stretch(q, read_lat, write_lat);
	return probe(q, dir);
}

/*
 * Three stretches of reads and writes both at 400 us, meeting their
 * targets, leave the depth of dir at depth: kyber never grows a depth
 * back on its own (the kernel has no regrowth either).
 */
static void ky_no_regrowth(struct queue *q, enum elv_dir dir, unsigned depth)
{
	int i;

	for (i = 0; i < 3; i++) {
		CHECK_EQ(depth_after(q, 400 * H_US, 400 * H_US, dir), depth);
	}
}

/*
 * Reads taking 5 ms against their 2 ms target: the device is congested.
 * Writes meet theirs at 5 ms (p99 in the second quarter of 10 ms), so the
 * write depth is scaled by 2/4 per stretch; reads keep their full depth.
 * Once reads are fast again nothing changes (the kernel has no regrowth):
 * writes grow only when they miss their own target, by its p99 (15 ms
 * against 10 ms: bucket 5, so 6/4), which throttles the fast reads too.
 */
static void test_read_latency_throttles_writes(void)
{
	struct queue *q = ky_latency_queue();

	CHECK_EQ(depth_after(q, 5 * H_MS, 5 * H_MS, ELV_WRITE),
		 WRITE_DEPTH / 2);
	CHECK_EQ(depth_after(q, 5 * H_MS, 5 * H_MS, ELV_WRITE),
		 WRITE_DEPTH / 4);
	CHECK_EQ(probe(q, ELV_READ), READ_DEPTH);

	/* Reads at 400 us: no congestion, and no regrowth either. */
	ky_no_regrowth(q, ELV_WRITE, WRITE_DEPTH / 4);
	CHECK_EQ(depth_after(q, 400 * H_US, 15 * H_MS, ELV_WRITE),
		 WRITE_DEPTH / 4 * 6 / 4);
	CHECK_EQ(probe(q, ELV_READ), READ_DEPTH / 4);
	/* Three write depths and one read depth; probes found no token. */
	CHECK_EQ(h_counter(q, "write_adjust"), 3);
	CHECK_EQ(h_counter(q, "read_adjust"), 1);
	CHECK_EQ(h_counter(q, "congested"), 3);
	/* Timer runs: the six that judged, and those that found too few. */
	CHECK_EQ(h_counter(q, "windows"), 9);
	CHECK(h_counter(q, "write_throttled") > 0);
	CHECK(h_counter(q, "read_throttled") > 0);
	while (h_next_id(q) >= 0)
		;
	CHECK_DONE(next_id - 1);
	queue_free(q);
}

/*
 * The same the other way round: writes taking 15 ms against 10 ms while
 * reads take 400 us (p99 in the first quarter of 2 ms): reads are
 * throttled to 1/4 of their depth, and stay there once writes are fast.
 * Reads then missing their target grow by their p99 (5 ms against 2 ms:
 * bucket 9, the last, so 8/4).
 */
static void test_write_latency_throttles_reads(void)
{
	struct queue *q = ky_latency_queue();

	CHECK_EQ(depth_after(q, 400 * H_US, 15 * H_MS, ELV_READ),
		 READ_DEPTH / 4);
	CHECK_EQ(probe(q, ELV_WRITE), WRITE_DEPTH);
	ky_no_regrowth(q, ELV_READ, READ_DEPTH / 4);
	CHECK_EQ(depth_after(q, 5 * H_MS, 400 * H_US, ELV_READ),
		 READ_DEPTH / 4 * 8 / 4);
	CHECK_DONE(next_id - 1);
	queue_free(q);
}

/*
 * A higher target turns the same latencies into no congestion at all:
 * reads and writes taking rd_ns and wr_ns, against a target (name) of
 * high, then low; the depth of dir is full, then cut to low_depth.
 */
static void target_case(const char *name, int64_t high, int64_t low,
			uint64_t rd_ns, uint64_t wr_ns, enum elv_dir dir,
			unsigned full, unsigned low_depth)
{
	struct queue *q = ky_latency_queue();

	h_set_tunable(q, name, high);
	CHECK_EQ(depth_after(q, rd_ns, wr_ns, dir), full);
	h_set_tunable(q, name, low);
	CHECK_EQ(depth_after(q, rd_ns, wr_ns, dir), low_depth);
	while (h_next_id(q) >= 0)
		;
	CHECK_DONE(next_id - 1);
	queue_free(q);
}

static void test_target_tunable(void)
{
	target_case("read_lat_nsec", 8 * H_MS, 2 * H_MS, 5 * H_MS, 5 * H_MS,
		    ELV_WRITE, WRITE_DEPTH, WRITE_DEPTH / 2);
	target_case("write_lat_nsec", 20 * H_MS, 10 * H_MS, 400 * H_US,
		    15 * H_MS, ELV_READ, READ_DEPTH, READ_DEPTH / 4);
}

/*
 * n requests of dir taking lat each, in rounds of at most 100 that
 * complete at one instant.
 */
static void feed(struct queue *q, enum elv_dir dir, unsigned n, uint64_t lat)
{
	static struct io *held[100];
	unsigned k;

	recycle_ids();
	while (n > 0) {
		k = start_n(q, dir, n < 100 ? n : 100, held);
		h_now += lat;
		complete_all(q, held, k);
		n -= k;
	}
}

/*
 * A domain with fewer than 500 samples is not judged until a second after
 * the timer first found them.  100 reads at 5 ms (slow), and 500 writes
 * at 1 ms, judged at the first timer run (101 ms) without congestion.
 * The reads count from there: the runs at 201 and 1100 ms leave them be,
 * and the write depth with them; the run at 1200 ms judges them, finds
 * the device congested and throttles the writes, whose p99 it does not
 * know this time (264 probe samples since) but remembers from 1100 ms.
 */
static void test_few_samples_wait(void)
{
	struct queue *q = ky_latency_queue();

	feed(q, ELV_WRITE, 500, 1 * H_MS);
	feed(q, ELV_READ, 100, 5 * H_MS);
	h_now = 101 * H_MS;
	CHECK_EQ(probe(q, ELV_WRITE), WRITE_DEPTH);
	h_now = 1000 * H_MS;
	CHECK_EQ(probe(q, ELV_WRITE), WRITE_DEPTH);
	h_now = 1100 * H_MS;
	CHECK_EQ(probe(q, ELV_WRITE), WRITE_DEPTH);
	CHECK_EQ(h_counter(q, "congested"), 0);
	h_now = 1200 * H_MS;
	CHECK_EQ(probe(q, ELV_WRITE), WRITE_DEPTH / 4);
	CHECK_EQ(h_counter(q, "congested"), 1);
	CHECK_DONE(next_id - 1);
	queue_free(q);
}

/*
 * Each domain is judged on its own samples, which another domain's
 * judgement leaves alone; and a p99 remembered from a run without
 * congestion is used once.  300 writes at 15 ms (missing their 10 ms) and
 * 500 reads at 400 us: the run at 115 ms judges the reads only (good, no
 * congestion: the read depth stays, their p99 is remembered).  200 more
 * writes make 500: the run at 215 ms judges them, congested, and
 * throttles the reads, unknown then, with their remembered p99 (first
 * quarter: to 1/4).  500 more slow writes: congested again at 315 ms, but
 * the reads' p99 was used up, and they are left alone (the probes keep
 * them below 500 samples: 264 + 72).
 */
static void test_domains_judged_apart(void)
{
	struct queue *q = ky_latency_queue();

	feed(q, ELV_WRITE, 300, 15 * H_MS);
	feed(q, ELV_READ, 500, 400 * H_US);
	h_now = 115 * H_MS;
	CHECK_EQ(probe(q, ELV_READ), READ_DEPTH);
	CHECK_EQ(h_counter(q, "congested"), 0);
	feed(q, ELV_WRITE, 200, 15 * H_MS);
	h_now = 215 * H_MS;
	CHECK_EQ(probe_n(q, ELV_READ, READ_DEPTH / 4 + 8), READ_DEPTH / 4);
	CHECK_EQ(h_counter(q, "congested"), 1);
	feed(q, ELV_WRITE, 500, 15 * H_MS);
	h_now = 315 * H_MS;
	CHECK_EQ(probe_n(q, ELV_READ, READ_DEPTH / 4 + 8), READ_DEPTH / 4);
	CHECK_EQ(h_counter(q, "congested"), 2);
	CHECK_DONE(next_id - 1);
	queue_free(q);
}

/* ------------------------------------------------------------------ */
/* async_depth, and what counts as latency.                            */

/* A write nobody waits for (writeback). */
static struct io *awr_io(int id)
{
	struct io *io = h_io(id, ELV_WRITE, 100 + (uint64_t)id, 0, 4096,
			     (uint64_t)id * 8);

	io->rq.sync = false;
	return io;
}

/* A write a process waits for (O_SYNC, O_DIRECT, no writeback cache). */
static void swr(struct queue *q, int id)
{
	struct io *io = h_io(id, ELV_WRITE, 100 + (uint64_t)id, 0, 4096,
			     (uint64_t)id * 8);

	io->rq.sync = true;
	queue_submit(q, io);
}

/*
 * Start a submission that should not have to wait; if it does wait (a
 * limit where there should be none), free a slot so that the test goes
 * on, and say so.
 */
static void submit_unlimited(struct queue *q, struct io *io)
{
	struct h_submitter *s = h_submit_start(q, io);

	CHECK(h_submitted(s, 1000));
	if (!h_submitted(s, 0))
		h_next_id(q);
	h_submit_join(s);
}

/*
 * The kernel's async_depth: asynchronous writes may fill 3/4 of the write
 * slots (6 of 8), counting every write held, synchronous or not;
 * synchronous writes may fill all 8, and reads have their own slots,
 * readahead too.
 */
static void test_async_depth(void)
{
	struct queue *q = h_queue(kyber, 8);
	struct h_submitter *s;
	int i, id = 1;

	h_now = 0;
	for (i = 0; i < 6; i++)
		submit_unlimited(q, awr_io(id++));
	s = h_submit_start(q, awr_io(id++));
	CHECK(!h_submitted(s, 50));
	/* A synchronous write takes one of the last two slots. */
	swr(q, id++);
	CHECK(!h_submitted(s, 20));
	/* Seven held, then six: still not below 3/4. */
	CHECK_EQ(h_next_id(q), 1);
	CHECK(!h_submitted(s, 50));
	CHECK_EQ(h_next_id(q), 2);
	CHECK(h_submitted(s, 1000));
	h_submit_join(s);
	CHECK_STR(h_order(q, 0), "3 4 5 6 8 7");

	/* Readahead is a read: all 8 read slots. */
	for (i = 0; i < 8; i++) {
		struct io *io = h_io(id, ELV_READ, 100 + (uint64_t)id, 0, 4096,
				     (uint64_t)id * 8);

		io->rq.sync = false;
		id++;
		submit_unlimited(q, io);
	}
	CHECK_STR(h_order(q, 0), "9 10 11 12 13 14 15 16");
	CHECK_DONE(id - 1);
	queue_free(q);
}

/*
 * Total latency counts from add_request, when the request got its slot,
 * as the kernel counts from the allocation of its tag: a wait for a slot
 * is not latency.  Reads taking 5 ms mark the device congested.
 * Synchronous writes, each done at most 40 ms after it came, keep the
 * write slots at the async limit (3 of 4) for 200 ms while eight
 * asynchronous writes wait; these then complete as soon as they are
 * added.  Against a 100 ms target the writes' p99 is the 40 ms of the
 * synchronous ones (the second quarter), so congestion halves the write
 * depth.  Counting the wait, the p99 would be 200 ms and the depth would
 * grow instead.  500 writes done at once then give the write domain the
 * samples it needs to be judged (its p99 stays that of the 31 before):
 * at the timer run after them (315 ms) without congestion, since the 20
 * reads wait for their second; the run at 2100 ms judges the reads,
 * congested, and scales the writes by the p99 remembered from 315 ms.
 */
#define SLOT_WAITERS	8

/* Requests of dir that came to the queue, waiting for a slot or not. */
static uint64_t arrived(struct queue *q, enum elv_dir dir)
{
	struct stats st;

	queue_get_stats(q, &st);
	return st.dir[dir].requests;
}

static void test_slot_wait_not_latency(void)
{
	struct h_submitter *w[SLOT_WAITERS];
	struct io *held[4], *sync[32];
	struct queue *q = h_queue(kyber, 4);
	unsigned n, i, head = 0, tail = 0, tries;
	int id = 1;

	h_now = 0;
	next_id = 1;
	h_set_tunable(q, "write_lat_nsec", 100 * H_MS);
	for (i = 0; i < 5; i++) {
		for (n = 0; n < 4; n++)
			rd(q, id++);
		n = dispatch_all(q, held, 4);
		CHECK_EQ(n, 4);
		h_now += 5 * H_MS;
		complete_all(q, held, n);
	}
	for (i = 0; i < 3; i++) {
		swr(q, id++);
		sync[tail++] = queue_try_next(q);
	}
	for (i = 0; i < SLOT_WAITERS; i++)
		w[i] = h_submit_start(q, awr_io(id++));
	/* Their wait starts now, not whenever their threads get to run. */
	for (tries = 0; tries < 5000 && arrived(q, ELV_WRITE) < 3 +
	     SLOT_WAITERS; tries++)
		usleep(1000);
	CHECK_EQ(arrived(q, ELV_WRITE), 3 + SLOT_WAITERS);
	for (i = 0; i < 20; i++) {
		swr(q, id++);
		sync[tail++] = queue_try_next(q);
		h_now += 10 * H_MS;
		h_complete(q, sync[head++]);
	}
	for (i = 0; i < SLOT_WAITERS; i++)
		CHECK(!h_submitted(w[i], i == 0 ? 50 : 0));
	while (head < tail)
		h_complete(q, sync[head++]);
	/* The waiters come in three at a time, and leave at once. */
	for (tries = 0; tries < 1000; tries++) {
		while (h_next_id(q) >= 0)
			;
		for (n = 0, i = 0; i < SLOT_WAITERS; i++)
			n += h_submitted(w[i], 0);
		if (n == SLOT_WAITERS)
			break;
		usleep(1000);
	}
	while (h_next_id(q) >= 0)
		;
	for (i = 0; i < SLOT_WAITERS; i++)
		h_submit_join(w[i]);
	CHECK_DONE(id - 1);

	CHECK_EQ(queue_set_nr_requests(q, 1024), 0);
	next_id = 1;
	feed(q, ELV_WRITE, MIN_SAMPLES, 0);
	h_now = 2000 * H_MS;
	CHECK_EQ(probe(q, ELV_WRITE), WRITE_DEPTH);
	h_now = 2100 * H_MS;
	CHECK_EQ(probe(q, ELV_WRITE), WRITE_DEPTH / 2);
	CHECK_DONE(next_id - 1);
	queue_free(q);
}

/* ------------------------------------------------------------------ */
/* Merging.                                                            */

static void rd_at(struct queue *q, int id, uint64_t file, uint64_t off)
{
	queue_submit(q, h_io(id, ELV_READ, file, off, 4096,
			     file * 100000 + off / 512));
}

struct rd_place {
	uint64_t file, off;
};

/* Reads 1..n at the places at, in turn, go out in the order want. */
static void merged_order(struct queue *q, const struct rd_place *at, int n,
			 const char *want)
{
	int i;

	for (i = 0; i < n; i++)
		rd_at(q, i + 1, at[i].file, at[i].off);
	CHECK_STR(h_order(q, 0), want);
	CHECK_DONE(n);
}

static void test_merges(void)
{
	struct queue *q = ky_queue();
	struct io *io;
	int i;

	/* A front merge, then a back merge (both found by the host). */
	merged_order(q, (const struct rd_place[]){ { 1, 4096 }, { 1, 0 },
						   { 1, 8192 } }, 3, "2+1+3");

	/* The host finds a front partner however far back it is queued. */
	rd_at(q, 1, 1, 4096);
	for (i = 2; i <= 9; i++)
		rd_at(q, i, 10 + (uint64_t)i, 0);
	rd_at(q, 10, 1, 0);
	CHECK_STR(h_order(q, 0), "10+1 2 3 4 5 6 7 8 9");
	CHECK_DONE(10);

	/* A gap filled: the older of the two keeps its place. */
	merged_order(q, (const struct rd_place[]){ { 1, 0 }, { 2, 0 },
						   { 1, 8192 }, { 1, 4096 } },
		     4, "1+4+3 2");
	merged_order(q, (const struct rd_place[]){ { 1, 8192 }, { 2, 0 },
						   { 1, 0 }, { 1, 4096 } },
		     4, "3+4+1 2");

	/*
	 * A waited-for read merging with readahead: one domain, so the
	 * request keeps its place, and the reads go before the write.
	 */
	queue_free(q);
	q = ky_queue();
	io = h_io(1, ELV_READ, 1, 0, 4096, 100000);
	io->rq.sync = false;
	queue_submit(q, io);
	ard(q, 2);
	wr(q, 3);
	rd_at(q, 4, 1, 4096);
	CHECK_STR(h_order(q, 0), "1+4 2 3");
	CHECK_DONE(4);
	queue_free(q);
}

/* ------------------------------------------------------------------ */
/* A switch with requests queued and in flight.                        */

#define SW_HELD		WRITE_DEPTH	/* writes in flight: depth reached */
#define SW_QUEUED	16		/* writes queued beyond it */
#define SW_READS	10

static void test_switch_away(void)
{
	struct io *held[SW_HELD];
	struct queue *q = ky_queue();
	int i, id = 1;

	for (i = 0; i < SW_HELD + SW_QUEUED; i++)
		wr(q, id++);
	for (i = 0; i < SW_HELD; i++) {
		held[i] = queue_try_next(q);
		CHECK(held[i] != NULL && held[i]->rq.dir == ELV_WRITE);
		if (held[i] == NULL)
			exit(h_exit("test_kyber"));
	}
	/* The write domain is out of tokens. */
	CHECK(queue_try_next(q) == NULL);
	for (i = 0; i < SW_READS; i++)
		rd(q, id++);
	/*
	 * While the held writes are in flight, only the drain's force can
	 * get the queued ones past the depth.
	 */
	CHECK_EQ(h_switch_held(q, elv_noop(), held, SW_HELD,
			       SW_QUEUED + SW_READS), SW_QUEUED + SW_READS);
	CHECK_DONE(id - 1);

	/* And back: a fresh kyber instance serves in FIFO order. */
	CHECK_EQ(elv_switch(q, kyber), 0);
	CHECK(queue_elevator_type(q) == kyber);
	rd(q, 1);
	rd(q, 2);
	wr(q, 3);
	CHECK_STR(h_order(q, 0), "1 2 3");
	CHECK_DONE(3);
	queue_free(q);
}

int main(void)
{
	/* A lost request would hang the drain: fail instead. */
	alarm(60);
	kyber = h_load("kyber");
	test_fifo();
	test_round_robin();
	test_depth_limits();
	test_force();
	test_read_latency_throttles_writes();
	test_write_latency_throttles_reads();
	test_target_tunable();
	test_few_samples_wait();
	test_domains_judged_apart();
	test_async_depth();
	test_slot_wait_not_latency();
	test_merges();
	test_switch_away();
	return h_exit("test_kyber");
}
