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

#endif
