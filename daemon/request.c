/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The read and write paths: turn a FUSE read or write into an io, queue
 * it, and, once it has been performed, answer every FUSE request that was
 * merged into it.
 *
 * An io's life: request_read or request_write allocates it with one part
 * (the FUSE request and its buffer) and hands it to the queue, after
 * which the session thread forgets it: the queue may merge it into another io (its part
 * moves there and its shell is freed) or a worker, or the submitting
 * thread itself, may perform and free it at any moment.  request_end runs
 * exactly once per performed io, on the thread that performed it.
 *
 * A part's buffer is its own, except that a synchronous write onto
 * an idle queue lends the session thread's receive buffer: the thread then
 * waits until request_end has answered that part before it returns to
 * libfuse.  A large queued write keeps that buffer (part->own) instead of
 * a copy, when it is loop.c's.  A write that came through the ring
 * (fusering.c) is performed from its ring entry, which stays the
 * request's until the reply (part->borrowed).
 *
 * Memory (memory.c): a read's buffer exists only while it is performed
 * (perform.c); a write's copy or kept buffer waits for room under the
 * limit on queued copies.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/*
 * Synchronous means someone waits for it.  Someone always waits for a
 * read.  Without the writeback cache, write(2) waits for our reply too, so
 * every write from a process is synchronous; a scheduler that took them
 * for background writes would idle waiting for that process's next read
 * while its write sits in the queue.  With the writeback cache, only
 * writes the file asks to be durable are.  Writes from the kernel itself
 * (pid 0: writeback) never are.
 */
static bool request_is_sync(fuse_req_t req, enum elv_dir dir,
			    int open_flags)
{
	if (dir == ELV_READ)
		return true;
	if (fuse_req_ctx(req)->pid == 0)
		return false;
	return !fs_of(req)->cfg->writeback_cache ||
	       (open_flags & (O_SYNC | O_DSYNC | O_DIRECT)) != 0;
}

/* Fill pid, ioprio, cgroup and sync from the FUSE request and open
 * flags. */
static void request_set_origin(struct io *io, fuse_req_t req,
			       int open_flags)
{
	pid_t pid = fuse_req_ctx(req)->pid;

	io->rq.pid = pid;
	io->rq.ioprio = ioprio_of_pid(pid);
	procwatch_note(pid);
	/* Writeback (pid 0) is the root group's (cgroup.c). */
	io->rq.cgroup = cgroup_of_pid(pid);
	if (trace_on())
		trace_note_pid(pid);
	io->rq.sync = request_is_sync(req, io->rq.dir, open_flags);
	/*
	 * Under writeback_cache, the kernel's writeback of an O_SYNC or
	 * O_DSYNC file, and fsync's, arrives with no open flags and pid 0:
	 * the daemon cannot tell it from background writeback.
	 */
	io->rq.sync_write = io->rq.dir == ELV_WRITE &&
			    (open_flags & (O_SYNC | O_DSYNC | O_DIRECT)) != 0;
}

/* The worker is done with io: answer each FUSE request, then free it. */
static void request_end(struct io *io)
{
	struct inode *inode = io->inode;
	uint64_t end = io->rq.offset;
	size_t copies = 0;
	unsigned owned = 0;
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
		/* The performing thread's buffer is this thread's (perform.c). */
		if (io->rq.dir == ELV_READ && perform_is_local(p->buf))
			p->buf = NULL;
		/* From here on the lent buffer is its owner's again. */
		if (p->lender != NULL) {
			sem_post(p->lender);
			continue;
		}
		if (p->borrowed)
			continue;
		owned++;
		if (io->rq.dir == ELV_WRITE)
			copies += memory_charge(p);
	}
	io_free(io);
	if (copies != 0)
		memory_copy_release(copies);
	if (owned != 0)
		memory_buffers_freed(owned);
}

static struct io *request_prepare(fuse_req_t req, struct inode *inode,
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
	io->end = request_end;
	io->parts->req = req;
	io->rq.sector = sectormap_lookup(inode->smap, fd, (uint64_t)off,
					  size);
	request_set_origin(io, req, open_flags);
	return io;
}

void request_read(fuse_req_t req, struct inode *inode, uint64_t fh,
		  size_t size, off_t off, int open_flags)
{
	struct io *io;

	if (size == 0) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	io = request_prepare(req, inode, fh, ELV_READ, size, off,
			     open_flags);
	if (io == NULL)
		return;
	memory_buffers_used(1);
	dispatch_submit(fs_of(req)->dispatch, io);
}

/*
 * Writes from this size up take the session thread's receive buffer
 * (loop.c) rather than a copy: it counts against the bound whole (1 MiB
 * and a little), so a smaller write would hold the bound's room for far
 * less data, and its copy is cheap.
 */
#define REQUEST_ADOPT_MIN (256u << 10)

/* Give a write part the buffer its data arrived in, if that is the
 * session thread's own, aligned enough for io; false if it is not. */
static bool request_adopt(struct io *io, struct io_part *p, void *data)
{
	size_t charge = loop_block_size();

	if (p->len < REQUEST_ADOPT_MIN || !loop_adoptable(data) ||
	    (io->dio_align != 0 &&
	     ((uintptr_t)data & (io->dio_align - 1)) != 0))
		return false;
	memory_copy_reserve(charge);
	p->own = loop_adopt();
	if (p->own == NULL) {
		memory_copy_release(charge);
		return false;
	}
	p->buf = data;
	p->lender = NULL;
	memory_adopted();
	memory_buffers_used(1);
	return true;
}

/* Give a write part a buffer of its own holding in's data (at data, when
 * in memory in one piece). */
static int request_copy_in(struct io *io, struct io_part *p,
			   struct fuse_bufvec *in, void *data)
{
	struct fuse_bufvec dst = FUSE_BUFVEC_INIT(p->len);
	ssize_t n;

	if (data != NULL && request_adopt(io, p, data))
		return 0;
	memory_copy_reserve(p->len);
	dst.buf[0].mem = io_alloc_buf(io, p->len);
	if (dst.buf[0].mem == NULL) {
		memory_copy_release(p->len);
		return ENOMEM;
	}
	n = fuse_buf_copy(&dst, in, 0);
	if (n < 0 || (size_t)n != p->len) {
		io_free_buf(io, dst.buf[0].mem);
		memory_copy_release(p->len);
		return n < 0 ? (int)-n : EIO;
	}
	p->buf = dst.buf[0].mem;
	p->lender = NULL;	/* the lender may have its buffer back */
	memory_buffers_used(1);
	return 0;
}

void request_write(fuse_req_t req, struct inode *inode, uint64_t fh,
		   struct fuse_bufvec *in, off_t off, int open_flags)
{
	struct dispatch *d = fs_of(req)->dispatch;
	size_t size = fuse_buf_size(in);
	struct io_part *p;
	struct io *io;
	sem_t lender;
	void *data;
	bool lend;
	int err;

	if (size == 0) {
		fuse_reply_write(req, 0);
		return;
	}
	io = request_prepare(req, inode, fh, ELV_WRITE, size, off,
			     open_flags);
	if (io == NULL)
		return;
	p = io->parts;
	p->write_epoch = fs_inode_write_begin(inode);
	/* Writeback: the kernel's own writes, and every write but a direct
	 * one under the writeback cache, come from the page cache. */
	p->whole = fuse_req_ctx(req)->pid == 0 ||
		   (fs_of(req)->cfg->writeback_cache &&
		    !(open_flags & O_DIRECT));
	/* The data in one piece of memory, as our loops receive it. */
	data = in->count == 1 && in->idx == 0 && in->off == 0 &&
	       !(in->buf[0].flags & FUSE_BUF_IS_FD) ? in->buf[0].mem : NULL;
	/* From the ring, the data stays in its entry until our reply. */
	if (data != NULL && fusering_stable(data)) {
		p->buf = data;
		p->borrowed = true;
		dispatch_submit(d, io);
		return;
	}
	/*
	 * in is the session thread's only until we return.  The writer of a
	 * synchronous write waits for our reply anyway; when the queue is
	 * idle, so that this thread will not wait behind a backlog, it
	 * lends the data in place of a copy and waits with the writer.
	 * Small writes too: their copy, malloc and free were a twentieth
	 * of a SQLite transaction's instructions, and the elevator usually
	 * dispatches them at once, so the wait costs nothing.  A direct io
	 * needs an aligned buffer: our receive buffers (loop.c) put a
	 * write's data on a page boundary, libfuse's own do not.
	 */
	lend = data != NULL &&
	       (io->dio_align == 0 ||
		((uintptr_t)data & (io->dio_align - 1)) == 0) &&
	       io->rq.sync && sem_init(&lender, 0, 0) == 0;
	if (lend) {
		p->buf = data;
		p->lender = &lender;
		if (dispatch_submit_lent(d, io)) {
			while (sem_wait(&lender) != 0)
				;	/* EINTR */
			goto out;
		}
	}
	err = request_copy_in(io, p, in, data);
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
