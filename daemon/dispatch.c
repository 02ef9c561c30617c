/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dispatch workers: each takes what the elevator dispatches, performs
 * it on the backing fd (perform.c), tells the queue, and answers FUSE.  Workers hold no lock while doing I/O.
 * Above the queue, requests of a control group over its limits wait in
 * the throttle (throttle.c) and a thread of their own, the releaser,
 * submits them when their group's budget allows.  With a disk model
 * (diskmodel.c), each io also waits out its service time on the model.
 * Without one, the thread that submits an io performs what the elevator
 * dispatches right then (dispatch_submit; a ring thread of fusering.c
 * only when no other request waits for it); workers do the rest.
 * With -o engine=uring there are no workers: uring.c's ring thread
 * dispatches everything and submitters only queue.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

struct dispatch {
	struct queue *q;
	struct diskmodel *dm;	/* NULL: none; owned, read-only */
	struct throttle *tl;	/* NULL: groups=off; owned */
	pthread_t releaser;	/* submits what tl releases */
	bool releasing;		/* releaser started, not yet joined */
	struct uring *ring;	/* engine=uring: dispatches all; owned */
	unsigned nr_threads;
	pthread_t threads[];
};

/* The next io to perform; with a disk model, booked on it until *end_ns. */
static struct io *dispatch_next(struct dispatch *d, uint64_t *end_ns)
{
	*end_ns = 0;
	if (d->dm != NULL)
		return diskmodel_next(d->dm, d->q, end_ns);
	return queue_next(d->q);
}

void dispatch_log(const struct io *io)
{
	log_debug("dispatch %c off=%llu bytes=%llu sector=%llu ino=%llu",
		  io->rq.dir == ELV_READ ? 'R' : 'W',
		  (unsigned long long)io->rq.offset,
		  (unsigned long long)io->rq.bytes,
		  (unsigned long long)io->rq.sector,
		  (unsigned long long)(io->inode != NULL ? io->inode->ino : 0));
}

void dispatch_done(struct queue *q, struct io *io)
{
	queue_done(q, io);
	io->end(io);
}

/*
 * Perform io, which the elevator dispatched, and complete it, not before
 * end_ns: a disk model's service overlaps the syscall (diskmodel.c).
 */
static void dispatch_one(struct dispatch *d, struct io *io, uint64_t end_ns)
{
	dispatch_log(io);
	perform_io(io);
	if (end_ns != 0)
		diskmodel_wait(end_ns);
	dispatch_done(d->q, io);
}

/*
 * The submitting thread asks the elevator right away and performs what
 * it dispatches, as blk-mq's submitter runs its hardware queue: when the
 * elevator sends the new request straight on, the hand-off to a worker
 * (a wake-up and a context switch for every request) is saved.  What the
 * elevator holds back is left to the workers.  A disk model serialises
 * dispatch through its head, so there the workers do it all.
 */
void dispatch_submit(struct dispatch *d, struct io *io)
{
	/* Counted before: once parked, io is the releaser's. */
	size_t copies = d->tl != NULL ? memory_copies_of(io) : 0;

	if (d->tl != NULL && throttle_submit(d->tl, io)) {
		/* parked: the releaser submits it */
		if (copies != 0)
			memory_copy_park(copies);
		return;
	}
	/* A ring thread with requests waiting queues only (fusering.c). */
	if (d->dm != NULL || d->ring != NULL || fusering_busy()) {
		queue_submit(d->q, io);
		return;
	}
	io = queue_submit_dispatch(d->q, io);
	if (io != NULL) {
		dispatch_one(d, io, 0);
		ioprio_pass_end();
	}
}

bool dispatch_submit_lent(struct dispatch *d, struct io *io)
{
	struct io *next;

	/* A throttled writer would hold a session thread while it waits. */
	if (d->dm != NULL || (d->tl != NULL && throttle_limited(d->tl, io)))
		return false;
	if (d->ring != NULL)
		return queue_submit_idle(d->q, io, NULL);
	if (!queue_submit_idle(d->q, io, &next))
		return false;
	if (next != NULL) {
		dispatch_one(d, next, 0);
		ioprio_pass_end();
	}
	return true;
}

static void *dispatch_worker(void *arg)
{
	struct dispatch *d = arg;
	struct io *io;
	uint64_t end_ns;

	while ((io = dispatch_next(d, &end_ns)) != NULL)
		dispatch_one(d, io, end_ns);
	return NULL;
}

/*
 * The releaser: submits each throttled io once its group's budget allows
 * it.  A thread of its own, not the timer's loop: queue_submit may wait
 * for a slot, which frees only as ios complete, and the loop serves the
 * schedulers' wake-ups that dispatch them.  Workers perform what it
 * submits.
 */
static void *dispatch_releaser(void *arg)
{
	struct dispatch *d = arg;
	struct io *io;

	while ((io = throttle_next(d->tl)) != NULL) {
		size_t copies = memory_copies_of(io);

		if (copies != 0)
			memory_copy_unpark(copies);
		queue_submit(d->q, io);
	}
	return NULL;
}

struct dispatch *dispatch_start(struct queue *q, unsigned threads,
				struct diskmodel *dm, bool groups,
				enum engine engine)
{
	struct dispatch *d;
	int err;

	d = calloc(1, sizeof *d + threads * sizeof d->threads[0]);
	if (d == NULL) {
		diskmodel_free(dm);
		return NULL;
	}
	d->q = q;
	d->dm = dm;
	if (groups) {
		d->tl = throttle_new(cgroup_limits, NULL);
		if (d->tl == NULL) {
			diskmodel_free(dm);
			free(d);
			return NULL;
		}
		err = pthread_create(&d->releaser, NULL, dispatch_releaser, d);
		if (err != 0) {
			log_err("cannot start the throttle's releaser: %s",
				strerror(err));
			throttle_free(d->tl);
			diskmodel_free(dm);
			free(d);
			return NULL;
		}
		d->releasing = true;
		/* At most 15 characters, or the name is refused. */
		pthread_setname_np(d->releaser, "iosched-throtl");
	}
	if (engine == ENGINE_URING) {
		d->ring = uring_start(q, threads, dm);
		if (d->ring == NULL) {
			dispatch_drain(d);
			queue_stop(q);
			dispatch_stop(d);
			return NULL;
		}
		return d;
	}
	for (; d->nr_threads < threads; d->nr_threads++) {
		err = pthread_create(&d->threads[d->nr_threads], NULL,
				     dispatch_worker, d);
		if (err != 0) {
			log_err("cannot start dispatch worker: %s", strerror(err));
			dispatch_drain(d);
			queue_stop(q);
			dispatch_stop(d);
			return NULL;
		}
		/* So that ps -L and /proc/PID/task tell the workers apart;
		 * named here, so that they are when the mount appears. */
		pthread_setname_np(d->threads[d->nr_threads], "iosched-worker");
	}
	log_debug("%u dispatch workers started", threads);
	return d;
}

void dispatch_drain(struct dispatch *d)
{
	if (d == NULL || !d->releasing)
		return;
	throttle_stop(d->tl);
	pthread_join(d->releaser, NULL);
	d->releasing = false;
}

void dispatch_stop(struct dispatch *d)
{
	if (d == NULL)
		return;
	dispatch_drain(d);
	throttle_free(d->tl);
	uring_stop(d->ring);
	for (unsigned i = 0; i < d->nr_threads; i++)
		pthread_join(d->threads[i], NULL);
	log_debug("%u dispatch workers stopped", d->nr_threads);
	diskmodel_free(d->dm);
	free(d);
}
