/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The queue's latency histograms, busy time and depth integral on the
 * virtual clock: known waits and service times land in known buckets of
 * the right direction and priority class, percentiles follow, and
 * .control/stats prints them.
 */
#include <errno.h>

#include "harness.h"

#define H_US 1000ULL

/* Bucket bounds are "at most 2^i us", exactly. */
static void test_buckets(void)
{
	CHECK_EQ(stats_bucket(0), 0);
	CHECK_EQ(stats_bucket(1000), 0);
	CHECK_EQ(stats_bucket(1001), 1);
	CHECK_EQ(stats_bucket(2000), 1);
	CHECK_EQ(stats_bucket(2001), 2);
	CHECK_EQ(stats_bucket(100 * H_US), 7);		/* 64 < 100 <= 128 */
	CHECK_EQ(stats_bucket(1024 * H_US), 10);
	CHECK_EQ(stats_bucket(3600000000000ULL), STATS_BUCKETS - 1);
	CHECK_EQ(stats_bucket_us(10), 1024);
	CHECK_EQ(stats_bucket_us(STATS_BUCKETS - 1), 0);
}

/* Submit one io at t0, dispatch it after wait, complete it after service. */
static void h_timed(struct queue *q, int id, enum elv_dir dir, int class,
		    uint64_t wait, uint64_t service)
{
	struct io *io = h_io(id, dir, (uint64_t)id, 0, 4096, 8 * id);

	io->rq.ioprio = IOSCHED_IOPRIO(class, 0);
	queue_submit(q, io);
	h_now += wait;
	io = queue_try_next(q);
	CHECK(io != NULL);
	if (io == NULL)
		return;
	h_now += service;
	h_complete(q, io);
}

static void test_histograms(void)
{
	struct queue *q = h_queue(elv_noop(), 128);
	const struct stats_hist *w, *s;
	struct stats st;
	int i;

	/* 100 best-effort reads: 90 wait 10 us, 9 wait 100 us, 1 waits 5 ms;
	 * each is served in 3 us. */
	for (i = 1; i <= 100; i++)
		h_timed(q, i, ELV_READ, ELV_IOPRIO_CLASS_BE,
			i <= 90 ? 10 * H_US : i <= 99 ? 100 * H_US : 5 * H_MS,
			3 * H_US);
	/* One idle write waiting 1 ms, served in 20 ms; one of class NONE,
	 * which counts as best effort. */
	h_timed(q, 101, ELV_WRITE, ELV_IOPRIO_CLASS_IDLE, H_MS, 20 * H_MS);
	h_timed(q, 102, ELV_WRITE, ELV_IOPRIO_CLASS_NONE, 0, 1);
	CHECK_DONE(102);
	queue_get_stats(q, &st);

	w = &st.dir[ELV_READ].wait[STATS_CLASS_BE];
	CHECK_EQ(w->count, 100);
	CHECK_EQ(w->sum_ns, (900 + 900 + 5000) * H_US);
	CHECK_EQ(w->bucket[4], 90);		/* 10 us: 8 < t <= 16 */
	CHECK_EQ(w->bucket[7], 9);		/* 100 us: 64 < t <= 128 */
	CHECK_EQ(w->bucket[13], 1);		/* 5 ms: 4096 < t <= 8192 */
	CHECK_EQ(stats_percentile_us(w, 50), 16);
	CHECK_EQ(stats_percentile_us(w, 90), 16);
	CHECK_EQ(stats_percentile_us(w, 99), 128);
	CHECK_EQ(stats_percentile_us(w, 100), 8192);
	s = &st.dir[ELV_READ].service[STATS_CLASS_BE];
	CHECK_EQ(s->count, 100);
	CHECK_EQ(s->bucket[2], 100);		/* 3 us: 2 < t <= 4 */
	CHECK_EQ(stats_percentile_us(s, 99), 4);
	/* Nothing leaked into the other classes or direction. */
	CHECK_EQ(st.dir[ELV_READ].wait[STATS_CLASS_RT].count, 0);
	CHECK_EQ(st.dir[ELV_READ].wait[STATS_CLASS_IDLE].count, 0);
	CHECK_EQ(stats_percentile_us(&st.dir[ELV_READ].wait[STATS_CLASS_RT],
				     50), 0);

	w = &st.dir[ELV_WRITE].wait[STATS_CLASS_IDLE];
	s = &st.dir[ELV_WRITE].service[STATS_CLASS_IDLE];
	CHECK_EQ(w->count, 1);
	CHECK_EQ(w->bucket[10], 1);		/* 1 ms = 1000 us <= 1024 */
	CHECK_EQ(s->bucket[15], 1);		/* 20 ms: 16384 < t <= 32768 */
	CHECK_EQ(stats_percentile_us(s, 50), 32768);
	CHECK_EQ(st.dir[ELV_WRITE].wait[STATS_CLASS_BE].bucket[0], 1);
	CHECK_EQ(st.dir[ELV_WRITE].service[STATS_CLASS_BE].count, 1);
	queue_free(q);
}

/* Busy time and the depth integral, as io_ticks and time_in_queue. */
static void test_busy_depth(void)
{
	struct queue *q = h_queue(elv_noop(), 128);
	struct io *a, *b;
	struct stats st;

	h_now += 7 * H_MS;			/* idle: counts nothing */
	queue_submit(q, h_io(1, ELV_READ, 1, 0, 4096, 8));
	h_now += 2 * H_MS;			/* depth 1 for 2 ms */
	queue_submit(q, h_io(2, ELV_READ, 2, 0, 4096, 800));
	h_now += 3 * H_MS;			/* depth 2 for 3 ms */
	a = queue_try_next(q);
	b = queue_try_next(q);
	CHECK(a != NULL && b != NULL);
	h_now += H_MS;				/* still 2, in flight */
	if (a != NULL)
		h_complete(q, a);
	h_now += 4 * H_MS;			/* depth 1 for 4 ms */
	if (b != NULL)
		h_complete(q, b);
	h_now += 5 * H_MS;			/* idle again */
	queue_get_stats(q, &st);
	CHECK_EQ(st.busy_ns, 10 * H_MS);
	CHECK_EQ(st.depth_ns, (2 + 6 + 2 + 4) * H_MS);
	CHECK_DONE(2);
	queue_free(q);
}

/* The stats text: old lines first and intact, then the new ones. */
static void test_format(void)
{
	struct queue *q = h_queue(elv_noop(), 128);
	static char buf[16384];
	struct stats st;
	int n;

	h_timed(q, 1, ELV_WRITE, ELV_IOPRIO_CLASS_RT, 100 * H_US, 5 * H_US);
	CHECK_DONE(1);
	queue_get_stats(q, &st);
	n = stats_format(&st, buf, sizeof buf);
	CHECK(n > 0);
	CHECK(strncmp(buf, "read requests 0 merges 0 ", 25) == 0);
	CHECK(strstr(buf, "\nwrite requests 1 merges 0 ") != NULL);
	CHECK(strstr(buf, "\nswitches 0\nqueue busy_us 105 depth_us 105\n"
		      "buckets_us 1 2 4 8 ") != NULL);
	CHECK(strstr(buf, " 33554432 inf\n") != NULL);
	CHECK(strstr(buf, "\nwait write rt count 1 sum_us 100 p50_us 128 "
		      "p90_us 128 p99_us 128 buckets 0 0 0 0 0 0 0 1 0 ")
	      != NULL);
	CHECK(strstr(buf, "\nservice write rt count 1 sum_us 5 p50_us 8 ")
	      != NULL);
	CHECK(strstr(buf, "\nservice read idle count 0 sum_us 0 p50_us 0 ")
	      != NULL);
	/* Too small a buffer is an error, not a cut line. */
	CHECK_EQ(stats_format(&st, buf, 600), -ENOSPC);
	queue_free(q);
}

/*
 * Per control group: ios, bytes, wait and service of each group by
 * direction, the path from the host's cgroup_path ("/" for the root, "?"
 * for a group it does not know); at most STATS_GROUPS groups, the least
 * recently active one making room for a new one.
 */
static void test_groups(void)
{
	struct queue *q = h_queue(elv_noop(), 128);
	const struct stats_group *g;
	static char buf[65536];
	struct stats st;
	struct io *io;
	int i;

	h_now = 0;
	h_timed(q, 1, ELV_READ, ELV_IOPRIO_CLASS_BE, 10 * H_US, 3 * H_US);
	io = h_io(2, ELV_WRITE, 2, 0, 8192, 100);
	io->rq.cgroup = 7;
	queue_submit(q, io);
	h_now += 100 * H_US;
	io = queue_try_next(q);
	h_now += 2 * H_MS;
	h_complete(q, io);
	queue_get_stats(q, &st);
	CHECK_EQ(st.nr_groups, 2);
	g = &st.group[0];
	CHECK(g->id == 0 && strcmp(g->path, "/") == 0);
	CHECK(g->dir[ELV_READ].ios == 1 && g->dir[ELV_READ].bytes == 4096);
	CHECK(g->dir[ELV_READ].wait.count == 1 &&
	      g->dir[ELV_READ].wait.sum_ns == 10 * H_US);
	CHECK(g->dir[ELV_READ].service.sum_ns == 3 * H_US);
	CHECK(g->dir[ELV_WRITE].ios == 0);
	g = &st.group[1];
	CHECK(g->id == 7 && strcmp(g->path, "?") == 0);
	CHECK(g->dir[ELV_WRITE].ios == 1 && g->dir[ELV_WRITE].bytes == 8192);
	CHECK(g->dir[ELV_WRITE].wait.sum_ns == 100 * H_US);
	CHECK(g->dir[ELV_WRITE].service.sum_ns == 2 * H_MS);
	CHECK(stats_format(&st, buf, sizeof buf) > 0);
	CHECK(strstr(buf, "\ncgroup / read ios 1 bytes 4096\n"
			 "cgroup_wait / read count 1 sum_us 10 ") != NULL);
	CHECK(strstr(buf, "\ncgroup ? write ios 1 bytes 8192\n") != NULL);
	CHECK(strstr(buf, "\ncgroup_service ? write count 1 sum_us 2000 ")
	      != NULL);

	/* STATS_GROUPS more groups: the root and 7, least recent, go. */
	for (i = 0; i < STATS_GROUPS; i++) {
		h_now += H_MS;
		io = h_io(3 + i, ELV_READ, 3 + (uint64_t)i, 0, 512, 1000);
		io->rq.cgroup = 100 + (uint64_t)i;
		queue_submit(q, io);
		h_complete(q, queue_try_next(q));
	}
	queue_get_stats(q, &st);
	CHECK_EQ(st.nr_groups, STATS_GROUPS);
	for (i = 0; i < STATS_GROUPS; i++)
		CHECK(st.group[i].id >= 100 &&
		      st.group[i].dir[ELV_READ].service.count == 1);
	queue_free(q);

	/* A path is one word: blanks and backslashes escaped. */
	memset(&st, 0, sizeof st);
	st.nr_groups = 1;
	snprintf(st.group[0].path, sizeof st.group[0].path, "/a b\\c");
	CHECK(stats_format(&st, buf, sizeof buf) > 0);
	CHECK(strstr(buf, "\ncgroup /a\\x20b\\x5cc read ios 0 ") != NULL);
	/* The largest a group can print fits .control/stats' 64 KiB. */
	memset(&st, 0xff, sizeof st);
	st.nr_groups = STATS_GROUPS;
	st.sched.n = 0;
	for (i = 0; i < STATS_GROUPS; i++) {
		memset(st.group[i].path, '\n', STATS_GROUP_PATH_MAX - 1);
		st.group[i].path[STATS_GROUP_PATH_MAX - 1] = '\0';
	}
	CHECK(stats_format(&st, buf, sizeof buf) > 0);
}

int main(void)
{
	test_buckets();
	test_histograms();
	test_busy_depth();
	test_format();
	test_groups();
	return h_exit("test_stats");
}
