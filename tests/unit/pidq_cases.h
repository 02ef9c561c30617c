/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the unit tests of the schedulers built on schedulers/pidq.c (cfq,
 * bfq) share: requests of one process at one priority, and the scenarios
 * that hold for both because pidq.c does the work.
 */
#ifndef PIDQ_CASES_H
#define PIDQ_CASES_H

#include "harness.h"

#define RT(l)	IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_RT, (l))
#define BE(l)	IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_BE, (l))
#define IDLE	IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_IDLE, 0)

/* A fresh queue of type on a virtual clock reset to 0. */
struct queue *pq_queue(const struct elevator_type *type);
/* A 4 KiB request of its own file (no merges) from pid at sector. */
struct io *pq_io(int id, pid_t pid, int ioprio, enum elv_dir dir,
		 uint64_t sector);
void pq_rd(struct queue *q, int id, pid_t pid, int ioprio, uint64_t sector);
void pq_wr(struct queue *q, int id, pid_t pid, int ioprio, uint64_t sector);

/*
 * Front merges within a process's queue, none across queues (their order
 * fixed when fifo_across, else either), no back merge or gap filling
 * across queues, no sync data into an async request (allow_merge), and a
 * gap filled between two.
 */
void pq_test_merge(const struct elevator_type *type, bool fifo_across);
/*
 * Draining (force): no idling, no idle-class delay, no per-queue limit on
 * what goes in flight.
 */
void pq_test_force(const struct elevator_type *type);
/*
 * A process's exit (queue_process_exited): the wait for it ends at once,
 * on the virtual clock standing still; after an exit while its reads are
 * queued and in flight, they are served and then no wait follows; the pid
 * back is a new process, waited for as any new one.  Another pid's exit
 * changes nothing.
 */
void pq_test_exit_process(const struct elevator_type *type);
/* A switch away with requests queued and in flight, and back. */
void pq_test_switch(const struct elevator_type *type);
/*
 * back_seek_penalty: a backward seek of 40 sectors costs 80 at the default
 * factor of 2 and loses to a forward one of 60; at 1 it wins.
 */
void pq_test_back_seek_penalty(const struct elevator_type *type);
/*
 * A request far behind a process's sweep is served once it has waited
 * fifo_expire_sync (or fifo_expire_async for writes), not at the end.
 */
void pq_test_fifo_expiry(const struct elevator_type *type);
/*
 * On q, prepared by the caller: request 2, queued at 0 far behind the
 * sweep of 400 requests of one process in direction dir, each served in
 * 1 ms; the time (ms) it is served.  Frees q.
 */
uint64_t pq_fifo_served_ms(struct queue *q, enum elv_dir dir);
/*
 * Idling, on q (fresh, slice_idle 8 ms): after its request completes, a
 * process's queue keeps the device; its next request within slice_idle
 * is served before another process's waiting one and the wait starts
 * again, to end on timeout.  The counters are the caller's to check.
 */
void pq_idle_window(struct queue *q);
/*
 * With slice_idle 0 on q: two processes' reads both go at once, with no
 * wait armed; the order they went in.
 */
const char *pq_no_idle_order(struct queue *q);

/*
 * A simulated device and processes: the device serves one request at a
 * time, holding it for its process's cost (1 ms unless said otherwise),
 * completes it, and the process issues its next one after its think time
 * (or its pause, after a burst), keeping depth requests outstanding.
 */
struct pq_proc {
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
	uint64_t stride;		/* sectors between requests, 0: size */
	unsigned size;			/* request sectors, 0: 8 (4 KiB) */
	unsigned burst;			/* requests between pauses, 0: none */
	unsigned pause_ms;		/* think time after each burst */
	uint64_t cgroup;		/* its control group, 0: the root */

	/* Results. */
	unsigned issued, outstanding, served;
	uint64_t sectors;
	uint64_t first_ns;		/* first service, or UINT64_MAX */
	uint64_t last_ns;
	uint64_t max_gap_ns;		/* longest wait between services */
	uint64_t max_wait_ns;		/* longest queueing of a request */
	uint64_t max_resume_ns;		/* of the first of a burst */
	uint64_t done_ns;		/* last of limit completed */
	uint64_t next_at;		/* may issue again then */
	unsigned run, max_run;		/* services in a row: now, most */
};

/* The simulation's state, also for a test that drives its own readers. */
struct pq_sim {
	int ids;			/* ids handed out, 1..ids */
	unsigned seen;			/* h_wakeups already armed */
	bool armed;			/* a wake-up is pending */
	unsigned stalls;		/* NULL with work, no wake-up: a hang */
	unsigned pending;		/* requests in the queue */
	unsigned switches;		/* service moved to another process */
	pid_t last_pid;			/* the process served last, or -1 */
};
extern struct pq_sim pq_sim;

/* Start a simulation of the n procs (none: only reset pq_sim) on q. */
void pq_sim_start(struct queue *q, struct pq_proc *procs, int n);
/* The timer thread: kick q when the wake-up time has come. */
void pq_sim_timer(struct queue *q);
void pq_sim_run(struct queue *q, struct pq_proc *procs, int n,
		uint64_t until_ns);
/* Drain what is left (forced), check ios 1..n were done once, free q. */
void pq_drain_end(struct queue *q, int n);
/* The same after a simulation, which must not have stalled. */
void pq_sim_end(struct queue *q);
/* |a - b| is within pct percent of the larger. */
bool pq_within(double a, double b, double pct);

#endif
