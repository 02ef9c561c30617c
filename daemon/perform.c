/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Performing an io: one vectored syscall on the backing fd for all its
 * parts (or dio.c's bounce buffer for an unaligned direct one), with the
 * caller's I/O priority, and the result spread over the parts.  Whoever
 * performs (a worker, or the submitting thread) holds no lock; a write
 * takes its inode's dio_lock here, shared (dio.c).
 *
 * The transfer itself is a struct perform_vec fed one syscall's result
 * at a time (perform_vec_step): perform_io issues them with preadv and
 * pwritev, uring.c through its ring; both go on after short transfers and
 * end the same way.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "daemon.h"

/*
 * Reads of up to PERFORM_LOCAL_MAX bytes are performed into a buffer the
 * performing thread keeps for its life: request_end answers from it on
 * the same thread right after, so a small read (4 KiB random reads) costs
 * no malloc and free, which were a tenth of the daemon's instructions
 * per request.  Larger reads get buffers of their own.
 */
#define PERFORM_LOCAL_MAX (64 * 1024)
#define PERFORM_LOCAL_ALIGN 4096	/* covers direct I/O's alignment */

static __thread char *perform_local;
static pthread_key_t perform_local_key;	/* frees it when the thread ends */
static pthread_once_t perform_local_once = PTHREAD_ONCE_INIT;

static void perform_local_init(void)
{
	pthread_key_create(&perform_local_key, free);
}

/* The thread's buffer, or NULL (out of memory: the caller mallocs). */
static char *perform_local_buf(void)
{
	if (perform_local == NULL) {
		pthread_once(&perform_local_once, perform_local_init);
		perform_local = aligned_alloc(PERFORM_LOCAL_ALIGN,
					      PERFORM_LOCAL_MAX);
		if (perform_local != NULL)
			pthread_setspecific(perform_local_key, perform_local);
	}
	return perform_local;
}

bool perform_is_local(const void *buf)
{
	return perform_local != NULL && (const char *)buf >= perform_local &&
	       (const char *)buf < perform_local + PERFORM_LOCAL_MAX;
}

/*
 * A read's buffers are allocated now, not when it was queued: a backlog
 * of queued reads holds no data memory, only those being performed do.
 */
static int perform_read_bufs(struct io *io, bool local_ok)
{
	char *local;

	if (local_ok && io->rq.bytes <= PERFORM_LOCAL_MAX &&
	    io->dio_align <= PERFORM_LOCAL_ALIGN &&
	    (local = perform_local_buf()) != NULL) {
		/* Parts in file order, back to back, as one buffer. */
		for (struct io_part *p = io->parts; p != NULL; p = p->next) {
			p->buf = local;
			local += p->len;
		}
		return 0;
	}
	for (struct io_part *p = io->parts; p != NULL; p = p->next)
		if (p->buf == NULL &&
		    (p->buf = io_alloc_buf(io, p->len)) == NULL)
			return ENOMEM;
	return 0;
}

/* io cannot be performed: err spread over its parts; -err. */
static int perform_vec_fail(struct perform_vec *v, int err)
{
	perform_vec_step(v, -err);
	return -err;
}

int perform_vec_init(struct perform_vec *v, struct io *io,
		     struct iovec *stack, bool local_ok)
{
	struct io_part *p;
	int cnt = 0;

	*v = (struct perform_vec){ .io = io, .iov = stack };
	if (io->rq.dir == ELV_READ && perform_read_bufs(io, local_ok) != 0)
		return perform_vec_fail(v, ENOMEM);
	if (io->nr_parts > PERFORM_IOV_STACK) {
		v->iov = calloc(io->nr_parts, sizeof *v->iov);
		if (v->iov == NULL)
			return perform_vec_fail(v, ENOMEM);
	}
	for (p = io->parts; p != NULL; p = p->next)
		v->iov[cnt++] = (struct iovec){ .iov_base = p->buf,
						.iov_len = p->len };
	v->cnt = cnt;
	return 0;
}

/*
 * Go on after short transfers until done, end of file or error; then
 * spread the result over the parts.
 */
bool perform_vec_step(struct perform_vec *v, ssize_t n)
{
	struct io *io = v->io;

	if (n == -EINTR)
		return true;
	if (n < 0) {
		v->err = (int)-n;
		goto end;
	}
	if (n == 0) {
		if (io->rq.dir == ELV_WRITE)
			v->err = EIO;	/* no progress: do not spin */
		goto end;
	}
	v->done += (size_t)n;
	/* O_DIRECT cannot go on from the middle of a block. */
	if (io->dio_align != 0 && (v->done & (io->dio_align - 1)) != 0)
		goto end;
	if (v->done >= io->rq.bytes)
		goto end;
	/* Skip the iovecs done; trim the one cut in the middle. */
	while (v->first < v->cnt && (size_t)n >= v->iov[v->first].iov_len) {
		n -= (ssize_t)v->iov[v->first].iov_len;
		v->first++;
	}
	if (v->first < v->cnt) {
		struct iovec *cut = &v->iov[v->first];

		cut->iov_base = (char *)cut->iov_base + n;
		cut->iov_len -= (size_t)n;
	}
	return true;
end:
	if (v->cnt > PERFORM_IOV_STACK)
		free(v->iov);
	v->iov = NULL;
	io_spread(io, v->done, v->err);
	return false;
}

/* Perform io with preadv/pwritev over its parts' buffers. */
static void perform_vectored(struct io *io)
{
	struct iovec stack[PERFORM_IOV_STACK];
	struct perform_vec v;
	ssize_t n;

	if (perform_vec_init(&v, io, stack, true) != 0)
		return;
	do {
		struct iovec *iov = v.iov + v.first;
		off_t off = (off_t)(io->rq.offset + v.done);

		if (io->rq.dir == ELV_READ)
			n = preadv(io->fd, iov, v.cnt - v.first, off);
		else
			n = pwritev(io->fd, iov, v.cnt - v.first, off);
	} while (perform_vec_step(&v, n < 0 ? -errno : n));
}

bool perform_locks(const struct io *io)
{
	/*
	 * Writes to an inode that has a direct descriptor exclude the
	 * read-modify-writes of dio.c (dio_lock).  Other inodes, the common
	 * buffered case, pay one load.
	 */
	return io->rq.dir == ELV_WRITE && io->inode != NULL &&
	       __atomic_load_n(&io->inode->dio_used, __ATOMIC_ACQUIRE);
}

void perform_io(struct io *io)
{
	struct inode *inode = io->inode;
	bool lock;

	/* The backing disk's scheduler sees the request's class, as loop's. */
	ioprio_pass(io->rq.ioprio);
	if (io->dio_unaligned) {
		if (io->rq.dir == ELV_READ && perform_read_bufs(io, true) != 0)
			io_spread(io, 0, ENOMEM);
		else
			dio_perform(io);
		return;
	}
	lock = perform_locks(io);
	if (lock)
		pthread_rwlock_rdlock(&inode->dio_lock);
	perform_vectored(io);
	if (lock)
		pthread_rwlock_unlock(&inode->dio_lock);
}
