/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Direct I/O that does not meet the backing file's alignment.  FUSE lets
 * applications issue O_DIRECT reads and writes of any size at any offset;
 * an O_DIRECT backing descriptor takes only aligned ones.  Such an io goes
 * through an aligned bounce buffer covering the aligned range around it:
 * a read reads the whole range and copies out the part asked for; a write
 * first reads the partial blocks at either end, copies its data in and
 * writes the whole range back (read-modify-write).
 *
 * A read-modify-write must not overlap any other write of the same
 * blocks, or the older content it read would overwrite the newer one: it
 * holds the inode's dio_lock exclusively, and every other write to an
 * inode with a direct descriptor holds it shared (perform_io).
 * Reads take no lock: the range is written back in one call, so a read
 * sees each block before or after, as with any concurrent write.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"

/* Read [off, off + len) into buf, going on after short reads; bytes
 * read (less at end of file) or -errno. */
static ssize_t dio_pread(int fd, char *buf, size_t len, uint64_t off,
			 unsigned align)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		done += (size_t)n;
		/* End of file, or a tail O_DIRECT cannot resume. */
		if (n == 0 || (done & (align - 1)) != 0)
			break;
	}
	return (ssize_t)done;
}

static ssize_t dio_pwrite(int fd, const char *buf, size_t len, uint64_t off,
			  unsigned align)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pwrite(fd, buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;	/* no progress: do not spin */
		done += (size_t)n;
		if ((done & (align - 1)) != 0)
			break;
	}
	return (ssize_t)done;
}

/* Copy between the parts and the bounce buffer at buf (the io's offset). */
static void dio_copy(struct io *io, char *buf, bool to_parts, size_t max)
{
	for (struct io_part *p = io->parts; p != NULL && max > 0;
	     p = p->next) {
		size_t n = p->len < max ? p->len : max;

		if (to_parts)
			memcpy(p->buf, buf, n);
		else
			memcpy(buf, p->buf, n);
		buf += n;
		max -= n;
	}
}

/* Read the block at off into blk; what lies past end of file reads as 0. */
static int dio_read_block(struct io *io, char *blk, uint64_t off)
{
	ssize_t n = dio_pread(io->fd, blk, io->dio_align, off, io->dio_align);

	if (n < 0)
		return (int)-n;
	memset(blk + n, 0, io->dio_align - (size_t)n);
	return 0;
}

/* The read-modify-write of [start, end); bytes of the io written, or
 * -errno.  Called with the inode's dio_lock held exclusively. */
static ssize_t dio_rmw(struct io *io, char *buf, uint64_t start,
		       uint64_t end)
{
	uint64_t off = io->rq.offset, last = end - io->dio_align;
	struct stat st;
	ssize_t n;
	int err;

	if (fstat(io->fd, &st) != 0)
		return -errno;
	if (off != start && (err = dio_read_block(io, buf, start)) != 0)
		return -err;
	if (off + io->rq.bytes != end && (last != start || off == start) &&
	    (err = dio_read_block(io, buf + (last - start), last)) != 0)
		return -err;
	dio_copy(io, buf + (off - start), false, io->rq.bytes);
	n = dio_pwrite(io->fd, buf, end - start, start, io->dio_align);
	if (n < 0)
		return n;
	/*
	 * The last block was written whole: if it ran past the end of the
	 * file, cut the file back to where this write (or the file) ends.
	 * No other write can have moved the end meanwhile (the lock), and
	 * truncate waits for this write (fs_inode_wait_writes).
	 */
	if (end > (uint64_t)st.st_size && (uint64_t)n == end - start) {
		uint64_t size = off + io->rq.bytes;

		if (size < (uint64_t)st.st_size)
			size = (uint64_t)st.st_size;
		if (ftruncate(io->fd, (off_t)size) != 0)
			return -errno;
	}
	if ((uint64_t)n <= off - start)
		return 0;
	n -= (ssize_t)(off - start);
	return n < (ssize_t)io->rq.bytes ? n : (ssize_t)io->rq.bytes;
}

void dio_perform(struct io *io)
{
	uint64_t mask = io->dio_align - 1;
	uint64_t start = io->rq.offset & ~mask;
	uint64_t end = (io->rq.offset + io->rq.bytes + mask) & ~mask;
	uint64_t head = io->rq.offset - start;
	void *buf;
	ssize_t n;

	buf = io_alloc_buf(io, end - start);
	if (buf == NULL) {
		io_spread(io, 0, ENOMEM);
		return;
	}
	if (io->rq.dir == ELV_READ) {
		n = dio_pread(io->fd, buf, end - start, start, io->dio_align);
		if (n >= 0) {
			n = (uint64_t)n > head ? n - (ssize_t)head : 0;
			if (n > (ssize_t)io->rq.bytes)
				n = (ssize_t)io->rq.bytes;
			dio_copy(io, (char *)buf + head, true, (size_t)n);
		}
	} else {
		pthread_rwlock_wrlock(&io->inode->dio_lock);
		n = dio_rmw(io, buf, start, end);
		pthread_rwlock_unlock(&io->inode->dio_lock);
	}
	io_free_buf(io, buf);
	if (n < 0)
		io_spread(io, 0, (int)-n);
	else
		io_spread(io, (size_t)n, 0);
}
