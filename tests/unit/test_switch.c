/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Switching schedulers online: elv_switch drains the queue (queued
 * requests are dispatched, in-flight ones completed) before the new
 * scheduler takes over, and no request is lost or served twice, also with
 * submitters and workers running while noop and deadline alternate.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"

static const struct elevator_type *deadline;

/* ------------------------------------------------------------------ */
/* A switch with requests queued and in flight.                        */

#define HELD 5
#define QUEUED 20

static void test_switch_drains(void)
{
	struct io *held[HELD];
	struct queue *q = h_queue(elv_noop(), 128);
	int i;

	h_now = 0;
	for (i = 1; i <= QUEUED; i++)
		queue_submit(q, h_io(i, i % 2 ? ELV_READ : ELV_WRITE,
				     (uint64_t)i, 0, 4096,
				     (uint64_t)(QUEUED - i) * 100));
	for (i = 0; i < HELD; i++) {
		held[i] = queue_try_next(q);
		CHECK(held[i] != NULL);
		if (held[i] == NULL)
			exit(h_exit("test_switch"));
	}
	h_switch_held(q, deadline, held, HELD, 0);
	/* Everything submitted before the switch is done, exactly once. */
	CHECK_DONE(QUEUED);

	/* The new scheduler is the one serving: deadline sorts. */
	queue_submit(q, h_io(1, ELV_READ, 1, 0, 4096, 100));
	queue_submit(q, h_io(2, ELV_READ, 2, 0, 4096, 300));
	queue_submit(q, h_io(3, ELV_READ, 3, 0, 4096, 200));
	CHECK_STR(h_order(q, 0), "1 3 2");
	CHECK_DONE(3);

	/* Switching to the active scheduler is a no-op that succeeds. */
	CHECK_EQ(elv_switch(q, deadline), 0);
	CHECK(queue_elevator_type(q) == deadline);
	CHECK_EQ(elv_switch(q, elv_noop()), 0);
	CHECK(queue_elevator_type(q) == elv_noop());
	queue_free(q);
}

/* ------------------------------------------------------------------ */
/* Switching back and forth under load.                                */

#define STRESS_IOS 3000
#define STRESS_WORKERS 2
#define STRESS_SWITCHES 30

static struct queue *sq;
static unsigned stress_parts;	/* parts completed, atomic */
static bool stress_submitted;	/* the submitter is done, atomic */
static int stress_switches;	/* switches done, atomic */

static void *submitter_main(void *arg)
{
	unsigned seed = 12345;
	uint64_t file, off;
	int id;

	for (id = 1; id <= STRESS_IOS; id++) {
		/*
		 * A few files written and read in 4 KiB steps, so that
		 * back and front merges happen, mixed with random blocks.
		 */
		if (rand_r(&seed) % 2) {
			file = (uint64_t)(id % 4);
			off = (uint64_t)(id / 4) * 4096;
		} else {
			file = 10 + (uint64_t)id;
			off = 0;
		}
		if (rand_r(&seed) % 8 == 0 && off >= 8192)
			off -= 8192;	/* a step backwards: front merge */
		/* Halfway, let some switches happen while ios are queued. */
		while (id == STRESS_IOS / 2 &&
		       __atomic_load_n(&stress_switches, __ATOMIC_ACQUIRE) <
		       STRESS_SWITCHES / 2)
			usleep(100);
		queue_submit(sq, h_io(id, rand_r(&seed) % 3 ? ELV_READ :
				      ELV_WRITE, file, off, 4096,
				      file * 100000 + off / 512));
	}
	__atomic_store_n(&stress_submitted, true, __ATOMIC_RELEASE);
	return NULL;
}

static void *worker_main(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	struct io *io;

	while ((io = queue_next(sq)) != NULL) {
		__atomic_add_fetch(&h_now, 100000, __ATOMIC_RELAXED);
		if (rand_r(&seed) % 4 == 0)
			usleep(100);	/* keep some in flight */
		__atomic_add_fetch(&stress_parts, h_complete(sq, io),
				   __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_switch_under_load(void)
{
	pthread_t sub, workers[STRESS_WORKERS];
	struct stats st;
	int i, switches;

	h_now = 0;
	sq = h_queue(elv_noop(), 32);
	pthread_create(&sub, NULL, submitter_main, NULL);
	for (i = 0; i < STRESS_WORKERS; i++)
		pthread_create(&workers[i], NULL, worker_main,
			       (void *)(uintptr_t)(i + 1));
	/* Switch at least STRESS_SWITCHES times, and until all is queued. */
	for (switches = 0; switches < STRESS_SWITCHES ||
	     !__atomic_load_n(&stress_submitted, __ATOMIC_ACQUIRE);
	     switches++) {
		const struct elevator_type *to = switches % 2 ? elv_noop() :
						 deadline;

		CHECK_EQ(elv_switch(sq, to), 0);
		/* The scheduler asked for is the one in charge. */
		CHECK(queue_elevator_type(sq) == to);
		__atomic_store_n(&stress_switches, switches + 1,
				 __ATOMIC_RELEASE);
		usleep(1000);
	}
	pthread_join(sub, NULL);
	queue_stop(sq);
	for (i = 0; i < STRESS_WORKERS; i++)
		pthread_join(workers[i], NULL);

	CHECK_EQ(stress_parts, STRESS_IOS);
	CHECK_DONE(STRESS_IOS);
	queue_get_stats(sq, &st);
	CHECK_EQ(st.dir[ELV_READ].requests + st.dir[ELV_WRITE].requests,
		 STRESS_IOS);
	CHECK_EQ(st.dir[ELV_READ].completed + st.dir[ELV_WRITE].completed,
		 STRESS_IOS);
	CHECK_EQ(st.dir[ELV_READ].queued + st.dir[ELV_WRITE].queued, 0);
	CHECK_EQ(st.dir[ELV_READ].in_flight + st.dir[ELV_WRITE].in_flight, 0);
	CHECK_EQ(st.switches, switches);
	/* The load must have exercised merging, or the test proves less. */
	CHECK(st.dir[ELV_READ].merges + st.dir[ELV_WRITE].merges > 0);
	queue_free(sq);
}

int main(void)
{
	/* A lost request would hang the drain: fail instead, after a while. */
	alarm(60);
	deadline = h_load("deadline");
	test_switch_drains();
	test_switch_under_load();
	return h_exit("test_switch");
}
