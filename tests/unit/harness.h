/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A tiny harness for the unit tests: a virtual clock for the queue, a
 * recorder for scheduler wake-ups, an io factory, and assertions that print
 * file:line and let the test go on so that one run shows every failure.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fuse-iosched.h"

#define H_MS 1000000ULL

/* The virtual clock, in ns; tests move it by hand. */
extern uint64_t h_now;
/* Wake-ups schedulers asked for: how many, and the last time asked. */
extern unsigned h_wakeups;
extern uint64_t h_wakeup_ns;
extern int h_failures;

/*
 * Control groups' weights, as the host's cgroup_weight service answers
 * them (asked at each call) in queues made while h_weight was set; a
 * queue made while it was NULL has no hook: every group has the default.
 */
extern uint32_t (*h_weight)(uint64_t cgroup);

/* A queue on the virtual clock; exits the test if it cannot be made. */
struct queue *h_queue(const struct elevator_type *type, unsigned nr_requests);

/*
 * One io of one part of len bytes, 8 sectors per 4 KiB.  The part carries
 * id, so tests can tell which submissions a dispatched io holds.
 */
struct io *h_io(int id, enum elv_dir dir, uint64_t file, uint64_t offset,
		uint64_t bytes, uint64_t sector);
/* Submit a 4 KiB read or write of file 100 + id, offset 0, at sector. */
void h_rd(struct queue *q, int id, uint64_t sector);
void h_wr(struct queue *q, int id, uint64_t sector);
/* The host's timer: the wake-up the scheduler asked for has come. */
void h_fire(struct queue *q);
/* The id of the n-th part of io (0 first), or -1. */
int h_part_id(const struct io *io, unsigned n);
/* How many times the part of id was completed (ids below H_MAX_IDS). */
#define H_MAX_IDS 16384
unsigned h_completions(int id);
/*
 * Check that parts 1..n were each completed exactly once and no other id
 * was, then forget all completions (for the next test).
 */
#define CHECK_DONE(n) h_check_done((n), __FILE__, __LINE__)
void h_check_done(int n, const char *file, int line);
/* Mark every part done, tell the queue, free the io; returns its parts. */
unsigned h_complete(struct queue *q, struct io *io);
/* Dispatch one io and complete it at once; returns its first id or -1. */
int h_next_id(struct queue *q);

/*
 * Dispatch up to max ios (0: until the scheduler returns NULL), complete
 * each at once, and return their ids in order: "1 2 5+6" (an io holding
 * parts 5 and 6).  The string is static.
 */
const char *h_order(struct queue *q, unsigned max);

/*
 * Switch q to type while the nr_held ios of held (NULL entries skipped)
 * are in flight.  A helper thread waits a little, so that the switch is
 * draining, then serves q for at most serve_first ios while the held ones
 * are still in flight (what only the drain's force can dispatch), then
 * completes the held ones and serves q until the switch is over.  Checks
 * that the switch succeeded and left nothing queued or in flight; returns
 * how many ios the helper served before completing the held ones.
 */
unsigned h_switch_held(struct queue *q, const struct elevator_type *type,
		       struct io **held, unsigned nr_held,
		       unsigned serve_first);

/*
 * A submission that may wait for a slot: h_submit_start runs queue_submit
 * on a thread of its own; h_submitted says whether it returned within ms
 * (a wait that would never end shows as false, not as a hung test);
 * h_submit_join waits for it without limit.
 */
struct h_submitter;
struct h_submitter *h_submit_start(struct queue *q, struct io *io);
bool h_submitted(struct h_submitter *s, unsigned ms);
void h_submit_join(struct h_submitter *s);

/*
 * Load scheduler name from $MODULE_DIR (or the build tree's) and find it;
 * exits the test if it cannot.
 */
const struct elevator_type *h_load(const char *name);
/* Set a tunable of the active scheduler; exits the test on a bad name. */
void h_set_tunable(struct queue *q, const char *name, int64_t value);
/* The active scheduler's counter, as .control/stats shows it; a missing
 * one is a failed check (and reads as UINT64_MAX). */
uint64_t h_counter(struct queue *q, const char *name);

/* Print the verdict and return the exit status for main. */
int h_exit(const char *test);

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			h_failures++;					\
		}							\
	} while (0)

#define CHECK_EQ(a, b)							\
	do {								\
		int64_t h_a_ = (int64_t)(a), h_b_ = (int64_t)(b);	\
		if (h_a_ != h_b_) {					\
			fprintf(stderr, "%s:%d: %s == %s: got %" PRId64	\
				", expected %" PRId64 "\n", __FILE__,	\
				__LINE__, #a, #b, h_a_, h_b_);		\
			h_failures++;					\
		}							\
	} while (0)

#define CHECK_STR(a, b)							\
	do {								\
		const char *h_a_ = (a), *h_b_ = (b);			\
		if (strcmp(h_a_, h_b_) != 0) {				\
			fprintf(stderr, "%s:%d: %s: got \"%s\", "	\
				"expected \"%s\"\n", __FILE__, __LINE__,	\
				#a, h_a_, h_b_);			\
			h_failures++;					\
		}							\
	} while (0)

#endif /* HARNESS_H */
