/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * File operations of the passthrough filesystem: opening and creating,
 * handing reads and writes to the request queue, and the operations that
 * must be ordered after queued writes (flush, fsync, fallocate,
 * copy_file_range).
 *
 * Locks (flock and POSIX) are left to the kernel: we do not advertise
 * FUSE_CAP_FLOCK_LOCKS or FUSE_CAP_POSIX_LOCKS (see fs_ops.c), so the
 * kernel keeps them on the FUSE inode exactly as on a local filesystem,
 * with blocking waits, signals, deadlock detection and close semantics.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon.h"

/* Flags for the backing open: what the application asked, adjusted. */
static int fs_file_flags(fuse_req_t req, int flags)
{
	struct fs *fs = fs_of(req);

	/*
	 * O_DIRECT is backing_open's to set, once the file is open.  A
	 * direct descriptor must also read (the read-modify-write of
	 * partial blocks, dio.c) and write where it is told (O_APPEND would
	 * append the whole blocks written back).
	 */
	if (fs->backing_io == BACKING_IO_DIRECT ||
	    (fs->backing_io == BACKING_IO_AUTO && (flags & O_DIRECT))) {
		if ((flags & O_ACCMODE) == O_WRONLY)
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		flags &= ~O_APPEND;
	}
	flags &= ~(O_DIRECT | O_NOFOLLOW);
	if (fs->cfg->writeback_cache) {
		/* The kernel reads pages around partial writes through any
		 * open file, and appends at its own idea of the size. */
		if ((flags & O_ACCMODE) == O_WRONLY)
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		flags &= ~O_APPEND;
	}
	return flags | O_CLOEXEC;
}

static void fs_file_set_open(fuse_req_t req, struct inode *inode,
			     struct fuse_file_info *fi, int fd)
{
	unsigned align = backing_open(fs_of(req), fd, fi->flags);

	if (align != 0)
		__atomic_store_n(&inode->dio_used, 1, __ATOMIC_RELEASE);
	fi->fh = (uint64_t)(unsigned)fd | (uint64_t)align << 32;
	/*
	 * The mount's own page cache is the layer above the elevator, as
	 * the page cache stands above a block device: an O_DIRECT opener
	 * bypasses it through the kernel's own direct I/O path, other
	 * openers use it, and FUSE_CAP_AUTO_INVAL_DATA drops it when mtime
	 * or size change, so what we cached last time may be kept.
	 * backing_io decides only what happens below the elevator.
	 *
	 * Not direct_io (FOPEN_DIRECT_IO): that path skips the write-back
	 * of dirty pages that the kernel's O_DIRECT path does first, so
	 * under writeback_cache an O_DIRECT reader would miss what another
	 * descriptor had just written (fsx -d saw reads of 0 bytes).
	 */
	fi->keep_cache = 1;
}

void fs_file_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct inode *inode;
	int fd, flags;

	if (fs_of(req)->readonly &&
	    ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))) {
		fuse_reply_err(req, EROFS);
		return;
	}
	inode = fs_inode(req, ino);
	flags = fs_file_flags(req, fi->flags);
	fd = fs_inode_reopen(inode, flags);
	/* A write-only file the daemon may not read: writes that need a
	 * read-modify-write will fail with EBADF, the others work. */
	if (fd == -EACCES && (flags & O_ACCMODE) != (fi->flags & O_ACCMODE))
		fd = fs_inode_reopen(inode, (flags & ~O_ACCMODE) |
					    (fi->flags & O_ACCMODE));
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	/* No O_TRUNC here: the kernel truncates through setattr (fs_ops.c). */
	fs_file_set_open(req, inode, fi, fd);
	fs_inode_writers_add(fs_of(req), inode, fi->flags, 1, false);
	if (fuse_reply_open(req, fi) == -ENOENT) {
		fs_inode_writers_add(fs_of(req), inode, fi->flags, -1, false);
		close(fd);
	}
}

void fs_file_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		    mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	struct cred cred;
	struct inode *dir, *inode;
	int fd, dfd, err;

	dir = fs_inode_writable(req, parent, &dfd);
	if (dir == NULL)
		return;
	mode = fs_inode_create_mode(req, dfd, mode);
	err = cred_enter(req, &cred);
	if (err) {
		fs_fd_put(dir);
		fuse_reply_err(req, -err);
		return;
	}
	/* O_NOFOLLOW: a symlink put there behind the kernel's back must not
	 * make us create its target, which may lie outside BACKING. */
	fd = openat(dfd, name,
		    fs_file_flags(req, fi->flags) | O_CREAT | O_NOFOLLOW, mode);
	err = fd == -1 ? errno : 0;
	cred_leave(&cred);
	fs_fd_put(dir);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	err = fs_inode_entry(req, dir, name, &e);
	if (err) {
		close(fd);
		fuse_reply_err(req, -err);
		return;
	}
	inode = (struct inode *)(uintptr_t)e.ino;
	if (fi->flags & O_TRUNC)
		sectormap_invalidate(inode->smap, 0, 0);
	fs_file_set_open(req, inode, fi, fd);
	fs_inode_writers_add(fs_of(req), inode, fi->flags, 1, true);
	fs_inode_attr(inode, &e.attr);	/* now that it counts */
	if (fuse_reply_create(req, &e, fi) == -ENOENT) {
		fs_inode_writers_add(fs_of(req), inode, fi->flags, -1, false);
		close(fd);
		fs_inode_unref(inode, 1);
	}
}

void fs_file_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		  struct fuse_file_info *fi)
{
	request_read(req, fs_inode(req, ino), fi->fh, size, off, fi->flags);
}

void fs_file_write_buf(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_bufvec *in, off_t off,
		       struct fuse_file_info *fi)
{
	int err = killpriv_write(req, ino, fs_file_fd(fi->fh), off,
				 fuse_buf_size(in), fi);

	if (err)
		fuse_reply_err(req, -err);
	else
		request_write(req, fs_inode(req, ino), fi->fh, in, off,
			      fi->flags);
}

void fs_file_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int fd;

	/* A writeback error is the kernel's to report, once to each
	 * descriptor (fs_inode_write_failed). */
	fs_inode_wait_writes_drop(fs_of(req), fs_inode(req, ino));
	/*
	 * Closing a duplicate reports the backing fs's close errors (NFS
	 * write-back, quotas) without giving up our descriptor.  Without a
	 * descriptor to spare there is nothing to report: close(2) must not
	 * fail with EMFILE, so the flush succeeds.
	 */
	fd = dup(fs_file_fd(fi->fh));
	if (fd == -1)
		fuse_reply_err(req, errno == EMFILE || errno == ENFILE ? 0 : errno);
	else if (close(fd) == -1)
		fuse_reply_err(req, errno);
	else
		fuse_reply_err(req, 0);
}

void fs_file_release(fuse_req_t req, fuse_ino_t ino,
		     struct fuse_file_info *fi)
{
	struct inode *inode;

	inode = fs_inode(req, ino);
	/* No queued write may outlive the descriptor it writes through. */
	fs_inode_wait_writes(inode);
	close(fs_file_fd(fi->fh));
	fs_inode_writers_add(fs_of(req), inode, fi->flags, -1, false);
	fuse_reply_err(req, 0);
}

void fs_file_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		   struct fuse_file_info *fi)
{
	struct inode *inode;
	int res;

	inode = fs_inode(req, ino);
	fs_inode_wait_writes_drop(fs_of(req), inode);
	res = datasync ? fdatasync(fs_file_fd(fi->fh))
		       : fsync(fs_file_fd(fi->fh));
	if (res == -1) {
		fuse_reply_err(req, errno);
		return;
	}
	/* Delayed allocation has just placed the data: look it up anew. */
	sectormap_invalidate(inode->smap, 0, 0);
	fuse_reply_err(req, 0);
}

void fs_file_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off,
		       off_t len, struct fuse_file_info *fi)
{
	struct inode *inode;
	int res;

	inode = fs_inode(req, ino);
	/* Queued writes to the range land before it is punched. */
	fs_inode_wait_writes(inode);
	res = killpriv_fd(req, ino, fs_file_fd(fi->fh), true);
	if (res < 0) {
		fuse_reply_err(req, -res);
		return;
	}
	res = fallocate(fs_file_fd(fi->fh), mode, off, len);
	if (res == -1) {
		fuse_reply_err(req, errno);
		return;
	}
	/* Collapsing or inserting a range moves everything after it. */
	if (mode & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE))
		sectormap_invalidate(inode->smap, off, 0);
	else
		sectormap_invalidate(inode->smap, off, len);
	fuse_reply_err(req, 0);
}

void fs_file_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		   struct fuse_file_info *fi)
{
	int fd = fs_file_fd(fi->fh);
	struct inode *inode;
	struct stat st;
	off_t res;

	/*
	 * The kernel asks only for SEEK_DATA and SEEK_HOLE, and does not
	 * write its dirty pages back first.  Under writeback_cache its size
	 * may even be beyond the backing file's: only the kernel can answer,
	 * and ENOSYS makes it do so for this mount from now on
	 * (generic_file_llseek: all data up to its own size).
	 */
	if (fs_of(req)->cfg->writeback_cache) {
		fuse_reply_err(req, ENOSYS);
		return;
	}
	inode = fs_inode(req, ino);
	/* Holes are only where they are once queued writes have landed. */
	fs_inode_wait_writes(inode);
	if (!fs_inode_may_be_dirty(inode))
		res = lseek(fd, off, whence);
	else if (fstat(fd, &st) == -1)
		res = -1;
	else if (off < 0 || off >= st.st_size) {
		/* Dirty pages of a shared mapping, maybe: all data, and the
		 * sizes agree without writeback_cache. */
		errno = ENXIO;
		res = -1;
	} else
		res = whence == SEEK_DATA ? off : st.st_size;
	if (res == -1)
		fuse_reply_err(req, errno);
	else
		fuse_reply_lseek(req, res);
}

void fs_file_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			     struct fuse_file_info *fi_in, fuse_ino_t ino_out,
			     off_t off_out, struct fuse_file_info *fi_out,
			     size_t len, int flags)
{
	struct inode *in, *out;
	off_t start = off_out;
	ssize_t res;

	in = fs_inode(req, ino_in);
	out = fs_inode(req, ino_out);
	fs_inode_wait_writes(in);
	if (out != in)
		fs_inode_wait_writes(out);
	res = killpriv_fd(req, ino_out, fs_file_fd(fi_out->fh), true);
	if (res < 0) {
		fuse_reply_err(req, (int)-res);
		return;
	}
	res = copy_file_range(fs_file_fd(fi_in->fh), &off_in,
			      fs_file_fd(fi_out->fh), &off_out, len, flags);
	if (res == -1) {
		/*
		 * Direct descriptors refuse unaligned ranges.  EOPNOTSUPP
		 * makes the kernel copy through our read and write, which
		 * align them (dio.c).
		 */
		if (errno == EINVAL && (fs_file_dio_align(fi_in->fh) ||
					fs_file_dio_align(fi_out->fh)))
			errno = EOPNOTSUPP;
		fuse_reply_err(req, errno);
		return;
	}
	/* Reflinks and the like may have changed the extents. */
	sectormap_invalidate(out->smap, start, res);
	fuse_reply_write(req, res);
}
