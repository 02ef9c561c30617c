/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The io_uring engine (-o engine=uring): one thread, the ring thread,
 * asks the elevator for the next io whenever fewer than its depth (the
 * threads setting) are in flight, submits each as one readv or writev on
 * an io_uring, and completes what the ring returns as a worker does: a
 * short transfer goes on where it stopped (perform_vec_step), then
 * queue_done and io->end.  Session threads only queue (dispatch.c), so
 * the elevator sees a device of that depth, as with that many workers.
 *
 * The ring thread waits in io_uring_enter alone: for completions, and
 * for an eventfd that the queue's work hook (queue_set_work, called
 * wherever a worker would be woken) writes when the thread said it has
 * nothing to dispatch (sleeping).  The hook runs under the queue lock and
 * costs one atomic exchange when the thread is busy.
 *
 * Since the ring thread alone performs backing I/O under this engine, a
 * write in flight needs no dio_lock: the one io that must exclude others,
 * an unaligned direct write's read-modify-write (dio.c), is performed on
 * this thread, synchronously, once nothing else is in flight.  Unaligned
 * direct reads are performed synchronously too (their bounce buffer).
 *
 * The I/O priority travels in each submission (sqe->ioprio), as
 * perform_io passes it with ioprio_set; a refused real-time class is
 * retried as best-effort (ioprio_refused).
 *
 * With a disk model, the ring waits as a worker sleeps, with timeouts on
 * the ring: an io transferred before the end the model booked for it is
 * completed at that end (the transfer is part of its service time), and
 * the hdd's next io is chosen once its head is free (diskmodel_try_next).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

#ifdef HAVE_LIBURING
#include <liburing.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct uring_op {
	struct perform_vec v;	/* v.io: NULL while free */
	struct iovec stack[PERFORM_IOV_STACK];
	int prio;		/* the submission's ioprio */
	uint64_t end_ns;	/* the disk model's end for it, or 0 */
	bool serving;		/* transferred; a timeout until end_ns */
	struct __kernel_timespec ts;	/* the timeout's end */
	struct uring_op *next_free;
};

/* The user_data of the ring's other entries (ops' are their address). */
#define URING_EFD ((uintptr_t)1)	/* the eventfd's read */
#define URING_HEAD ((uintptr_t)2)	/* the hdd's head frees */

struct uring {
	struct queue *q;
	struct io_uring ring;
	struct diskmodel *dm;	/* NULL: none; the dispatcher's */
	pthread_t thread;
	int efd;		/* the work hook's eventfd */
	int sleeping;		/* atomic: the thread waits for efd */
	/* The ring thread's alone. */
	uint64_t efd_val;	/* the armed read's buffer */
	bool efd_armed;		/* a read of efd is on the ring */
	bool head_armed;	/* URING_HEAD's timeout is on the ring */
	struct __kernel_timespec head_ts;
	unsigned depth;		/* ios in flight at most */
	unsigned nr_inflight;	/* ios dispatched, not completed */
	struct uring_op *free;
	struct uring_op ops[];
};

/* The queue's work hook, under the queue lock: wake a sleeping thread. */
static void uring_work(void *arg)
{
	struct uring *u = arg;

	if (__atomic_exchange_n(&u->sleeping, 0, __ATOMIC_SEQ_CST))
		eventfd_write(u->efd, 1);
}

/* Put op's next transfer on the ring.  The ring has a submission entry
 * for every op, the eventfd's read and the head's timeout, so there is
 * always one free. */
static void uring_prep(struct uring *u, struct uring_op *op)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	struct io *io = op->v.io;
	struct iovec *iov = op->v.iov + op->v.first;
	unsigned cnt = (unsigned)(op->v.cnt - op->v.first);
	uint64_t off = io->rq.offset + op->v.done;

	if (io->rq.dir == ELV_READ)
		io_uring_prep_readv(sqe, io->fd, iov, cnt, off);
	else
		io_uring_prep_writev(sqe, io->fd, iov, cnt, off);
	sqe->ioprio = (uint16_t)op->prio;
	io_uring_sqe_set_data(sqe, op);
}

static void uring_end(struct uring *u, struct uring_op *op)
{
	struct io *io = op->v.io;

	op->v.io = NULL;
	op->next_free = u->free;
	u->free = op;
	u->nr_inflight--;
	dispatch_done(u->q, io);
}

/* A timeout on the ring until at_ns (clock_now_ns's clock), as data. */
static void uring_timeout(struct uring *u, struct __kernel_timespec *ts,
			  uint64_t at_ns, uintptr_t data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

	ts->tv_sec = (long long)(at_ns / 1000000000u);
	ts->tv_nsec = (long long)(at_ns % 1000000000u);
	io_uring_prep_timeout(sqe, ts, 0, IORING_TIMEOUT_ABS);
	io_uring_sqe_set_data64(sqe, data);
}

/* op's io is transferred: completed now, or at the disk model's end. */
static void uring_served(struct uring *u, struct uring_op *op)
{
	if (op->end_ns > clock_now_ns()) {
		op->serving = true;
		uring_timeout(u, &op->ts, op->end_ns, (uintptr_t)op);
		return;
	}
	uring_end(u, op);
}

/* A transfer of op came back with res (bytes, or -errno). */
static void uring_result(struct uring *u, struct uring_op *op, int res)
{
	if (op->serving) {
		uring_end(u, op);	/* the timeout: service is over */
		return;
	}
	/* Not done, nothing moved: the same transfer again. */
	if (res == -EAGAIN) {
		uring_prep(u, op);
		return;
	}
	/*
	 * The kernel checks the class of each submission: a refused
	 * real-time class fails it with EPERM, as ioprio_set would.  A
	 * write the file refuses (EPERM too) fails again as best-effort.
	 */
	if (res == -EPERM && op->prio != 0 && ioprio_refused(op->prio)) {
		op->prio = ioprio_allowed(op->prio);
		uring_prep(u, op);
		return;
	}
	if (perform_vec_step(&op->v, res))
		uring_prep(u, op);
	else
		uring_served(u, op);
}

/* Handle every completion there is. */
static void uring_reap(struct uring *u)
{
	struct io_uring_cqe *cqe;

	while (io_uring_peek_cqe(&u->ring, &cqe) == 0) {
		uintptr_t data = (uintptr_t)io_uring_cqe_get_data64(cqe);
		int res = cqe->res;

		io_uring_cqe_seen(&u->ring, cqe);
		if (data == URING_EFD)
			u->efd_armed = false;
		else if (data == URING_HEAD)
			u->head_armed = false;
		else
			uring_result(u, (struct uring_op *)data, res);
	}
}

/* Submit what is prepared and wait for at least one completion. */
static void uring_wait(struct uring *u)
{
	int ret = io_uring_submit_and_wait(&u->ring, 1);

	if (ret < 0 && ret != -EINTR)
		log_ratelimited(LOG_ERR, "io_uring_enter: %s", strerror(-ret));
	/* Awake: completions' queue_done need not write the eventfd. */
	__atomic_store_n(&u->sleeping, 0, __ATOMIC_SEQ_CST);
	uring_reap(u);
}

/* Submit io, which the elevator dispatched (to end not before end_ns),
 * or perform it now. */
static void uring_submit(struct uring *u, struct io *io, uint64_t end_ns)
{
	struct uring_op *op;

	dispatch_log(io);
	op = u->free;
	u->free = op->next_free;
	u->nr_inflight++;
	op->end_ns = end_ns;
	op->serving = false;
	if (io->dio_unaligned) {
		/* A read-modify-write must not overlap a write in flight. */
		if (io->rq.dir == ELV_WRITE)
			while (u->nr_inflight > 1)
				uring_wait(u);
		op->v.io = io;
		perform_io(io);
		ioprio_pass_end();
		uring_served(u, op);
		return;
	}
	op->prio = ioprio_allowed(io->rq.ioprio);
	/* Not the thread's buffer: several reads are in flight at once. */
	if (perform_vec_init(&op->v, io, op->stack, false) != 0) {
		uring_end(u, op);
		return;
	}
	uring_prep(u, op);
}

/* The next io to submit, booked on the disk model if any; NULL. */
static struct io *uring_next(struct uring *u, uint64_t *end_ns)
{
	uint64_t free_ns;
	struct io *io;

	*end_ns = 0;
	if (u->dm == NULL)
		return queue_try_next(u->q);
	io = diskmodel_try_next(u->dm, u->q, end_ns, &free_ns);
	/* The hdd's head is busy: look again when it frees. */
	if (io == NULL && free_ns != 0 && !u->head_armed) {
		uring_timeout(u, &u->head_ts, free_ns, URING_HEAD);
		u->head_armed = true;
	}
	return io;
}

/* Dispatch while there is room; how many ios were dispatched. */
static unsigned uring_fill(struct uring *u)
{
	unsigned n = 0;
	uint64_t end_ns;
	struct io *io;

	while (u->nr_inflight < u->depth &&
	       (io = uring_next(u, &end_ns)) != NULL) {
		uring_submit(u, io, end_ns);
		n++;
	}
	return n;
}

static void uring_arm(struct uring *u)
{
	struct io_uring_sqe *sqe;

	if (u->efd_armed)
		return;
	sqe = io_uring_get_sqe(&u->ring);
	io_uring_prep_read(sqe, u->efd, &u->efd_val, sizeof u->efd_val, 0);
	io_uring_sqe_set_data64(sqe, URING_EFD);
	u->efd_armed = true;
}

static void *uring_thread(void *arg)
{
	struct uring *u = arg;

	for (;;) {
		uring_fill(u);
		if (u->nr_inflight < u->depth) {
			/*
			 * The elevator had nothing: from now on the work hook
			 * wakes us, so ask once more before waiting, lest work
			 * queued in between go unnoticed.
			 */
			__atomic_store_n(&u->sleeping, 1, __ATOMIC_SEQ_CST);
			if (uring_fill(u) != 0) {
				__atomic_store_n(&u->sleeping, 0,
						 __ATOMIC_SEQ_CST);
				continue;
			}
			if (u->nr_inflight == 0 && queue_stopped(u->q))
				break;
			uring_arm(u);
		}
		uring_wait(u);
	}
	return NULL;
}

/* A ring of depth ios, the eventfd's read and the head's timeout; 0 or
 * -errno. */
static int uring_init_ring(struct io_uring *ring, unsigned depth)
{
	return io_uring_queue_init(depth + 2, ring, 0);
}

int uring_probe(unsigned depth, char *err, size_t size)
{
	struct io_uring ring;
	int ret = uring_init_ring(&ring, depth);

	if (ret < 0) {
		snprintf(err, size, "engine=uring: io_uring_setup: %s",
			 strerror(-ret));
		return -1;
	}
	io_uring_queue_exit(&ring);
	return 0;
}

struct uring *uring_start(struct queue *q, unsigned depth,
			  struct diskmodel *dm)
{
	struct uring *u;
	int ret;

	u = calloc(1, sizeof *u + depth * sizeof u->ops[0]);
	if (u == NULL)
		return NULL;
	u->q = q;
	u->dm = dm;
	u->depth = depth;
	for (unsigned i = depth; i-- > 0;) {
		u->ops[i].next_free = u->free;
		u->free = &u->ops[i];
	}
	u->efd = eventfd(0, EFD_CLOEXEC);
	if (u->efd < 0) {
		log_err("engine=uring: eventfd: %s", strerror(errno));
		free(u);
		return NULL;
	}
	ret = uring_init_ring(&u->ring, depth);
	if (ret < 0) {
		log_err("engine=uring: io_uring_setup: %s", strerror(-ret));
		close(u->efd);
		free(u);
		return NULL;
	}
	queue_set_work(q, uring_work, u);
	ret = pthread_create(&u->thread, NULL, uring_thread, u);
	if (ret != 0) {
		log_err("cannot start the ring thread: %s", strerror(ret));
		queue_set_work(q, NULL, NULL);
		io_uring_queue_exit(&u->ring);
		close(u->efd);
		free(u);
		return NULL;
	}
	/* At most 15 characters, or the name is refused. */
	pthread_setname_np(u->thread, "iosched-ring");
	log_debug("io_uring engine started, depth %u", depth);
	return u;
}

void uring_stop(struct uring *u)
{
	if (u == NULL)
		return;
	pthread_join(u->thread, NULL);
	queue_set_work(u->q, NULL, NULL);
	io_uring_queue_exit(&u->ring);
	close(u->efd);
	free(u);
}

#else /* !HAVE_LIBURING */

int uring_probe(unsigned depth, char *err, size_t size)
{
	snprintf(err, size, "engine=uring: this fuse-iosched was built "
		 "without liburing (configure --with-liburing)");
	return -1;
}

struct uring *uring_start(struct queue *q, unsigned depth,
			  struct diskmodel *dm)
{
	errno = ENOSYS;
	return NULL;
}

void uring_stop(struct uring *u)
{
}

#endif /* HAVE_LIBURING */
