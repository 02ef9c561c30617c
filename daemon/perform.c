/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Performing an io: one vectored syscall on the backing fd for all its
 * parts (or dio.c's bounce buffer for an unaligned direct one), with the
 * caller's I/O priority, and the result spread over the parts.  Whoever
 * performs (a worker, or the submitting thread) holds no lock; a write
 * takes its inode's dio_lock here, shared (dio.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "daemon.h"

/* Most ios have few parts; a merged one has at most IOV_MAX (queue.c). */
#define PERFORM_IOV_STACK 64

/* Perform io with preadv/pwritev over its parts' buffers. */
static void perform_vectored(struct io *io)
{
	struct iovec stack_iov[PERFORM_IOV_STACK], *iov = stack_iov;
	struct io_part *p;
	size_t done = 0, total = io->rq.bytes;
	int cnt = 0, first = 0, err = 0;
	ssize_t n;

	if (io->nr_parts > PERFORM_IOV_STACK) {
		iov = calloc(io->nr_parts, sizeof *iov);
		if (iov == NULL) {
			io_spread(io, 0, ENOMEM);
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
	io_spread(io, done, err);
}

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
static int perform_read_bufs(struct io *io)
{
	char *local;

	if (io->rq.bytes <= PERFORM_LOCAL_MAX &&
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

void perform_io(struct io *io)
{
	struct inode *inode = io->inode;
	bool lock;

	/* The backing disk's scheduler sees the request's class, as loop's. */
	ioprio_pass(io->rq.ioprio);
	if (io->rq.dir == ELV_READ && perform_read_bufs(io) != 0) {
		io_spread(io, 0, ENOMEM);
		return;
	}
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
	perform_vectored(io);
	if (lock)
		pthread_rwlock_unlock(&inode->dio_lock);
}
