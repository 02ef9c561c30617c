/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The read and write paths: turn a FUSE read or write into an io, queue
 * it, and, once it has been performed, answer every FUSE request that was
 * merged into it.
 *
 * An io's life: io_submit_* allocates it with one part (the FUSE request
 * and its buffer) and hands it to the queue, after which the session
 * thread forgets it: the queue may merge it into another io (its part
 * moves there and its shell is freed) or a worker, or the submitting
 * thread itself, may perform and free it at any moment.  io_end runs
 * exactly once per performed io, on the thread that performed it.
 *
 * A part's buffer is its own, except that a large synchronous write onto
 * an idle queue lends libfuse's buffer: the session thread then waits
 * until io_end has answered that part before it returns to libfuse.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "fuse-iosched.h"

/* Writes from this size up may lend their data (io_submit_write). */
#define IO_LEND_MIN (64 * 1024)

/*
 * A direct io's buffer comes from malloc, aligned by hand, not from
 * posix_memalign: glibc before 2.38 does not reuse freed aligned chunks
 * well when small allocations come between them (its bug 14581): each
 * large direct write grew the heap by about its size, and the daemon kept
 * hundreds of MB after a burst.  The start of the malloc'd block is kept
 * in the pointer-sized slot just below the aligned buffer.
 */
void *io_alloc_buf(const struct io *io, size_t len)
{
	size_t align = io->dio_align;
	uintptr_t at;
	char *base;

	/* malloc(0) may return NULL: every buffer has at least one byte. */
	if (align == 0)
		return malloc(len ? len : 1);
	/* Rounded up, so that the copy into a bounce buffer never reads
	 * past the end of it. */
	len = (len + align - 1) & ~(align - 1);
	/* The slot below the buffer must be aligned for a pointer too. */
	if (align < sizeof(void *))
		align = sizeof(void *);
	base = malloc(sizeof(void *) + align - 1 + (len ? len : align));
	if (base == NULL)
		return NULL;
	at = ((uintptr_t)base + sizeof(void *) + align - 1) &
	     ~(uintptr_t)(align - 1);
	((void **)at)[-1] = base;
	return (void *)at;
}

void io_free_buf(const struct io *io, void *buf)
{
	if (io->dio_align == 0 || buf == NULL)
		free(buf);
	else
		free(((void **)buf)[-1]);
}

struct io *io_new(enum elv_dir dir, uint64_t file, int fd,
		  unsigned dio_align, uint64_t off, size_t len)
{
	struct io *io;
	struct io_part *p;

	io = calloc(1, sizeof *io);
	p = calloc(1, sizeof *p);
	if (io == NULL || p == NULL)
		goto fail;
	io->fd = fd;
	io->dio_align = dio_align;
	io->dio_unaligned = dio_align != 0 && ((off | len) & (dio_align - 1));
	if (dir == ELV_READ && (p->buf = io_alloc_buf(io, len)) == NULL)
		goto fail;
	p->len = len;
	io->parts = io->parts_tail = p;
	io->nr_parts = 1;
	io->rq.dir = dir;
	io->rq.file = file;
	io->rq.offset = off;
	io->rq.bytes = len;
	io->rq.nr_sectors = (len + (1u << IOSCHED_SECTOR_SHIFT) - 1) >>
			    IOSCHED_SECTOR_SHIFT;
	if (io->rq.nr_sectors == 0)
		io->rq.nr_sectors = 1;
	return io;

fail:
	free(p);
	free(io);
	return NULL;
}

void io_free(struct io *io)
{
	struct io_part *p, *next;

	for (p = io->parts; p != NULL; p = next) {
		next = p->next;
		if (p->lender == NULL)
			io_free_buf(io, p->buf);
		free(p);
	}
	free(io);
}

/*
 * Synchronous means someone waits for it.  Someone always waits for a
 * read.  Without the writeback cache, write(2) waits for our reply too, so
 * every write from a process is synchronous; a scheduler that took them
 * for background writes would idle waiting for that process's next read
 * while its write sits in the queue.  With the writeback cache, only
 * writes the file asks to be durable are.  Writes from the kernel itself
 * (pid 0: writeback) never are.
 */
static bool io_is_sync(fuse_req_t req, enum elv_dir dir, int open_flags)
{
	if (dir == ELV_READ)
		return true;
	if (fuse_req_ctx(req)->pid == 0)
		return false;
	return !fs_of(req)->cfg->writeback_cache ||
	       (open_flags & (O_SYNC | O_DSYNC | O_DIRECT)) != 0;
}

void io_set_origin(struct io *io, fuse_req_t req, int open_flags)
{
	pid_t pid = fuse_req_ctx(req)->pid;

	io->rq.pid = pid;
	io->rq.ioprio = ioprio_of_pid(pid);
	if (trace_on())
		trace_note_pid(pid);
	io->rq.sync = io_is_sync(req, io->rq.dir, open_flags);
	/*
	 * Under writeback_cache, the kernel's writeback of an O_SYNC or
	 * O_DSYNC file, and fsync's, arrives with no open flags and pid 0:
	 * the daemon cannot tell it from background writeback.
	 */
	io->rq.sync_write = io->rq.dir == ELV_WRITE &&
			    (open_flags & (O_SYNC | O_DSYNC | O_DIRECT)) != 0;
}

/* The worker is done with io: answer each FUSE request, then free it. */
static void io_end(struct io *io)
{
	struct inode *inode = io->inode;
	uint64_t end = io->rq.offset;
	struct io_part *p;

	/*
	 * No sectormap_invalidate here: overwrites keep their blocks, and
	 * the map trusts "unmapped" only briefly, so new allocations show
	 * up by themselves.  Truncate, fallocate and copies invalidate.
	 */
	for (p = io->parts; p != NULL; p = p->next) {
		/* fsync waits for this before it may sync. */
		end += p->len;
		if (io->rq.dir == ELV_WRITE && p->result < 0 && p->whole)
			fs_inode_write_failed(fs_of(p->req), inode, io->fd,
					      end, (int)-p->result);
		if (io->rq.dir == ELV_WRITE)
			fs_inode_write_end(inode, p->write_epoch);
		if (p->result < 0)
			fuse_reply_err(p->req, (int)-p->result);
		else if (io->rq.dir == ELV_READ)
			fuse_reply_buf(p->req, p->buf, (size_t)p->result);
		else
			fuse_reply_write(p->req, (size_t)p->result);
		/* From here on the lent buffer is its owner's again. */
		if (p->lender != NULL)
			sem_post(p->lender);
	}
	io_free(io);
}

static struct io *io_prepare(fuse_req_t req, struct inode *inode,
			     uint64_t fh, enum elv_dir dir, size_t size,
			     off_t off, int open_flags)
{
	int fd = fs_file_fd(fh);
	struct io *io;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return NULL;
	}
	io = io_new(dir, (uint64_t)(uintptr_t)inode, fd,
		    fs_file_dio_align(fh), (uint64_t)off, size);
	if (io == NULL) {
		fuse_reply_err(req, ENOMEM);
		return NULL;
	}
	io->inode = inode;
	io->end = io_end;
	io->parts->req = req;
	io->rq.sector = sectormap_lookup(inode->smap, fd, (uint64_t)off,
					  size);
	io_set_origin(io, req, open_flags);
	return io;
}

void io_submit_read(fuse_req_t req, struct inode *inode, uint64_t fh,
		    size_t size, off_t off, int open_flags)
{
	struct io *io;

	if (size == 0) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	io = io_prepare(req, inode, fh, ELV_READ, size, off, open_flags);
	if (io != NULL)
		dispatch_submit(fs_of(req)->dispatch, io);
}

/* Give a write part a buffer of its own holding in's data. */
static int io_copy_in(struct io *io, struct io_part *p,
		      struct fuse_bufvec *in)
{
	struct fuse_bufvec dst = FUSE_BUFVEC_INIT(p->len);
	ssize_t n;

	dst.buf[0].mem = io_alloc_buf(io, p->len);
	if (dst.buf[0].mem == NULL)
		return ENOMEM;
	n = fuse_buf_copy(&dst, in, 0);
	if (n < 0 || (size_t)n != p->len) {
		io_free_buf(io, dst.buf[0].mem);
		return n < 0 ? (int)-n : EIO;
	}
	p->buf = dst.buf[0].mem;
	p->lender = NULL;	/* the lender may have its buffer back */
	return 0;
}

void io_submit_write(fuse_req_t req, struct inode *inode, uint64_t fh,
		     struct fuse_bufvec *in, off_t off, int open_flags)
{
	struct dispatch *d = fs_of(req)->dispatch;
	size_t size = fuse_buf_size(in);
	struct io_part *p;
	struct io *io;
	sem_t lender;
	bool lend;
	int err;

	if (size == 0) {
		fuse_reply_write(req, 0);
		return;
	}
	io = io_prepare(req, inode, fh, ELV_WRITE, size, off, open_flags);
	if (io == NULL)
		return;
	p = io->parts;
	p->write_epoch = fs_inode_write_begin(inode);
	/* Writeback: the kernel's own writes, and every write but a direct
	 * one under the writeback cache, come from the page cache. */
	p->whole = fuse_req_ctx(req)->pid == 0 ||
		   (fs_of(req)->cfg->writeback_cache &&
		    !(open_flags & O_DIRECT));
	/*
	 * in is libfuse's only until we return.  The writer of a large
	 * synchronous write waits for our reply anyway; when the queue is
	 * idle, so that this thread will not wait behind a backlog, it
	 * lends the data in place of a copy and waits with the writer.
	 * Small writes are cheap to copy.  A direct io needs an aligned
	 * buffer, which libfuse's (data after the request header) is not.
	 */
	lend = size >= IO_LEND_MIN && io->dio_align == 0 && in->count == 1 && in->idx == 0 &&
	       in->off == 0 && !(in->buf[0].flags & FUSE_BUF_IS_FD) &&
	       io->rq.sync && sem_init(&lender, 0, 0) == 0;
	if (lend) {
		p->buf = in->buf[0].mem;
		p->lender = &lender;
		if (dispatch_submit_lent(d, io)) {
			while (sem_wait(&lender) != 0)
				;	/* EINTR */
			goto out;
		}
	}
	err = io_copy_in(io, p, in);
	if (err) {
		fs_inode_write_end(inode, p->write_epoch);
		fuse_reply_err(req, err);
		io_free(io);
		goto out;
	}
	dispatch_submit(d, io);
out:
	if (lend)
		sem_destroy(&lender);
}
