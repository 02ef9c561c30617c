/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dispatch workers: each takes what the elevator dispatches, performs
 * it with one vectored syscall on the backing fd, tells the queue, and
 * answers FUSE.  Workers hold no lock while doing I/O.  With a disk model
 * (diskmodel.c), each io also waits out its service time on the model.
 * Without one, the thread that submits an io performs what the elevator
 * dispatches right then (dispatch_submit); workers do the rest.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "fuse-iosched.h"

/* Most ios have few parts; a merged one has at most IOV_MAX (queue.c). */
#define DISPATCH_IOV_STACK 64

struct dispatch {
	struct queue *q;
	struct diskmodel *dm;	/* NULL: none; owned, read-only */
	unsigned nr_threads;
	pthread_t threads[];
};

/*
 * Set each part's result from the bytes the syscalls moved (done) and the
 * error that stopped them (err, 0 for a short read at end of file): parts
 * wholly done get their length, the part where it stopped gets what it
 * got (a short read or write), later parts get the error (or 0 for reads
 * past the end).  A writeback write cut short by an error gets the error
 * instead: the kernel takes a short count there as done, and the rest
 * would be lost without a word.  So does a read: FUSE takes a short read
 * for the end of the file (or a hole), and would show zeros or a shorter
 * file where the error was.
 */
void dispatch_spread(struct io *io, size_t done, int err)
{
	struct io_part *p;

	for (p = io->parts; p != NULL; p = p->next) {
		if (done >= p->len) {
			p->result = (ssize_t)p->len;
			done -= p->len;
		} else if (done > 0 && err &&
			   (io->rq.dir == ELV_READ || p->whole)) {
			p->result = -err;
			done = 0;
		} else if (done > 0) {
			p->result = (ssize_t)done;
			done = 0;
		} else {
			p->result = err ? -err : 0;
		}
	}
}

/* Perform io with preadv/pwritev over its parts' buffers. */
static void dispatch_vectored(struct io *io)
{
	struct iovec stack_iov[DISPATCH_IOV_STACK], *iov = stack_iov;
	struct io_part *p;
	size_t done = 0, total = io->rq.bytes;
	int cnt = 0, first = 0, err = 0;
	ssize_t n;

	if (io->nr_parts > DISPATCH_IOV_STACK) {
		iov = calloc(io->nr_parts, sizeof *iov);
		if (iov == NULL) {
			dispatch_spread(io, 0, ENOMEM);
			return;
		}
	}
	for (p = io->parts; p != NULL; p = p->next)
		iov[cnt++] = (struct iovec){ .iov_base = p->buf, .iov_len = p->len };

	/* Go on after short transfers until done, end of file or error. */
	while (done < total) {
		off_t off = (off_t)(io->rq.offset + done);

		if (io->rq.dir == ELV_READ)
			n = preadv(io->fd, iov + first, cnt - first, off);
		else
			n = pwritev(io->fd, iov + first, cnt - first, off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		if (n == 0) {
			if (io->rq.dir == ELV_WRITE)
				err = EIO;	/* no progress: do not spin */
			break;
		}
		done += (size_t)n;
		/* O_DIRECT cannot go on from the middle of a block. */
		if (io->dio_align != 0 && (done & (io->dio_align - 1)) != 0)
			break;
		/* Skip the iovecs done; trim the one cut in the middle. */
		while (first < cnt && (size_t)n >= iov[first].iov_len) {
			n -= (ssize_t)iov[first].iov_len;
			first++;
		}
		if (first < cnt) {
			iov[first].iov_base = (char *)iov[first].iov_base + n;
			iov[first].iov_len -= (size_t)n;
		}
	}
	if (iov != stack_iov)
		free(iov);
	dispatch_spread(io, done, err);
}

void dispatch_perform(struct io *io)
{
	struct inode *inode = io->inode;
	bool lock;

	/* The backing disk's scheduler sees the request's class, as loop's. */
	ioprio_pass(io->rq.ioprio);
	if (io->dio_unaligned) {
		dio_perform(io);
		return;
	}
	/*
	 * Writes to an inode that has a direct descriptor exclude the
	 * read-modify-writes of dio.c (dio_lock).  Other inodes, the common
	 * buffered case, pay one load.
	 */
	lock = io->rq.dir == ELV_WRITE && inode != NULL &&
	       __atomic_load_n(&inode->dio_used, __ATOMIC_ACQUIRE);
	if (lock)
		pthread_rwlock_rdlock(&inode->dio_lock);
	dispatch_vectored(io);
	if (lock)
		pthread_rwlock_unlock(&inode->dio_lock);
}

/* The next io to perform; with a disk model, booked on it until *end_ns. */
static struct io *dispatch_next(struct dispatch *d, uint64_t *end_ns)
{
	*end_ns = 0;
	if (d->dm != NULL)
		return diskmodel_next(d->dm, d->q, end_ns);
	return queue_next(d->q);
}

/*
 * Perform io, which the elevator dispatched, and complete it, not before
 * end_ns: a disk model's service overlaps the syscall (diskmodel.c).
 */
static void dispatch_one(struct dispatch *d, struct io *io, uint64_t end_ns)
{
	log_debug("dispatch %c off=%llu bytes=%llu sector=%llu ino=%llu",
		  io->rq.dir == ELV_READ ? 'R' : 'W',
		  (unsigned long long)io->rq.offset,
		  (unsigned long long)io->rq.bytes,
		  (unsigned long long)io->rq.sector,
		  (unsigned long long)(io->inode != NULL ? io->inode->ino : 0));
	dispatch_perform(io);
	if (end_ns != 0)
		diskmodel_wait(end_ns);
	queue_done(d->q, io);
	io->end(io);
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
	if (d->dm != NULL) {
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

	if (d->dm != NULL || !queue_submit_idle(d->q, io, &next))
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

struct dispatch *dispatch_start(struct queue *q, unsigned threads,
				struct diskmodel *dm)
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
	for (; d->nr_threads < threads; d->nr_threads++) {
		err = pthread_create(&d->threads[d->nr_threads], NULL,
				     dispatch_worker, d);
		if (err != 0) {
			log_err("cannot start dispatch worker: %s", strerror(err));
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

void dispatch_stop(struct dispatch *d)
{
	if (d == NULL)
		return;
	for (unsigned i = 0; i < d->nr_threads; i++)
		pthread_join(d->threads[i], NULL);
	log_debug("%u dispatch workers stopped", d->nr_threads);
	diskmodel_free(d->dm);
	free(d);
}
