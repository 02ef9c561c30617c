/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pidq: the per-process queues that cfq and bfq share, and the order of
 * the requests within one (fuse-iosched(8), SCHEDULERS, cfq and bfq).
 * A process's synchronous requests go to its own queue, found by pid; the
 * rest (and the kernel's, pid 0) to one pooled queue per class and level.
 * Which queue gets the device, and for how long, is each scheduler's own.
 *
 * A scheduler embeds struct pidq first in its queue, so that pidq can
 * free a per-process queue it allocated, and struct pidq_data, named pq,
 * first in its elevator_data, so that the hooks below can be its own.
 * elv_priv[0] of a request points to the struct pidq of its queue from
 * pidq_add_rq until completion.  pidq.c is compiled into each module that
 * uses it, its functions hidden: two such modules each keep their own.
 */
#ifndef PIDQ_H
#define PIDQ_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fuse-iosched/elevator.h"

#pragma GCC visibility push(hidden)

/* Defaults of the tunables in struct pidq_data. */
/* How long (ms) to wait for a sync queue's process to issue again. */
#define PIDQ_SLICE_IDLE		8
/* Backward seeks up to this far (KiB) are taken, at this cost factor. */
#define PIDQ_BACK_SEEK_MAX	16384
#define PIDQ_BACK_SEEK_PENALTY	2
/* FIFO expiry of sync and async requests (ms). */
#define PIDQ_FIFO_EXPIRE_SYNC	125
#define PIDQ_FIFO_EXPIRE_ASYNC	250

#define PIDQ_LEVELS		IOSCHED_IOPRIO_LEVELS
#define PIDQ_DEFAULT_LEVEL	4

/* Per-process queues are found by pid in a table of 1 << this chains. */
#define PIDQ_HASH_BITS		6

/* Service classes, in the order they are served (elv_ioprio_class_index). */
enum pidq_class {
	PIDQ_RT = 0,
	PIDQ_BE = 1,
	PIDQ_IDLE = 2,
	PIDQ_NR_CLASSES = 3,
};

/* Think time: from a completion to the process's next request. */
struct pidq_ttime {
	bool idle_window;		/* worth idling for */
	bool has_end;
	uint64_t last_end_ns;
	uint64_t ttime_mean_ns;
	unsigned ttime_samples;
};

struct pidq {
	struct elv_pid_node node;	/* pid, 0 if pooled; else in pd->procs */
	struct elv_rb_root sort;	/* queued requests by sector */
	struct elv_list fifo;		/* queued requests by arrival */
	struct elv_request *next_rq;	/* the next stop of the sweep */
	unsigned queued;		/* requests held */
};

struct pidq_data {
	/*
	 * Tunables (see PIDQ_TUNABLE): the host sets them before
	 * init_queue and may change them between any two calls, so they
	 * are read when used.
	 */
	int64_t slice_idle;		/* ms */
	int64_t back_seek_max;		/* KiB */
	int64_t back_seek_penalty;	/* factor */
	int64_t fifo_expire_sync;	/* ms */
	int64_t fifo_expire_async;	/* ms */

	struct elv_pid_node *procs[1u << PIDQ_HASH_BITS]; /* queues by pid */
	struct pidq *pool[PIDQ_NR_CLASSES][PIDQ_LEVELS];
	unsigned queued;		/* requests held, all queues */
	uint64_t last_position;		/* end sector of the last dispatch */
};

/* A tunable of the struct pidq_data pq in a scheduler's data of type. */
#define PIDQ_TUNABLE(type, field, def, min, max, unit, desc) \
	{ #field, ELV_TUNABLE_OFFSET(type, pq.field), (def), (min), (max), \
	  (unit), (desc), 0, NULL, NULL }

void pidq_prio(int ioprio, enum pidq_class *cls, int *level);

void pidq_init_pool(struct pidq_data *pd, struct pidq *q,
		    enum pidq_class cls, int level);
void pidq_init_queue(struct pidq *q);
struct pidq *pidq_find_process(struct pidq_data *pd, pid_t pid);
void *pidq_new_process(struct pidq_data *pd, size_t size, pid_t pid);
void pidq_free_process(struct pidq_data *pd, struct pidq *q);

void pidq_think_time(const struct pidq_data *pd, struct pidq_ttime *t,
		     uint64_t now_ns);

void pidq_add_rq(struct pidq_data *pd, struct pidq *q, struct elv_request *rq);
bool pidq_remove_rq(struct pidq_data *pd, struct pidq *q,
		    struct elv_request *rq);
struct elv_request *pidq_fifo_expired(const struct pidq_data *pd,
				  const struct pidq *q, uint64_t now_ns);
void pidq_merged_fifo(struct elv_request *rq, struct elv_request *next);

/* Hooks, for the schedulers' elevator_ops. */
void pidq_exit_queue(struct elevator_queue *eq);
bool pidq_allow_merge(struct elevator_queue *eq, const struct elv_request *rq,
		      const struct elv_request *next, enum elv_merge type);
void pidq_merged(struct elevator_queue *eq, struct elv_request *rq,
		 enum elv_merge type);
bool pidq_has_work(struct elevator_queue *eq);

#pragma GCC visibility pop

#endif /* PIDQ_H */
