/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The FUSE low-level operations table of the passthrough filesystem, the
 * connection set-up that goes with it, and the one place that sends the
 * operations on .control's inodes to control.c.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon.h"


static void fs_ops_want(struct fuse_conn_info *conn, unsigned cap)
{
	if (conn->capable & cap)
		conn->want |= cap;
}

static void fs_ops_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fs *fs = userdata;
	unsigned bg = fs->cfg->max_background;

	/*
	 * The kernel applies the caller's umask to the modes it sends, or
	 * leaves it to us (FUSE_CAP_DONT_MASK below); ours must not mask
	 * them again.
	 */
	umask(0);

	/* Concurrent reads, and several O_DIRECT requests per caller with
	 * AIO: the elevator needs a queue to sort. */
	fs_ops_want(conn, FUSE_CAP_ASYNC_READ);
	fs_ops_want(conn, FUSE_CAP_ASYNC_DIO);
	/* Drop cached pages when the backing file changed (keep_cache). */
	fs_ops_want(conn, FUSE_CAP_AUTO_INVAL_DATA);
	/* Requests are read into our buffers (loop.c): a spliced one's data
	 * would come through a pipe, copied. */
	conn->want &= ~FUSE_CAP_SPLICE_READ;
	if (fs->cfg->writeback_cache)
		fs_ops_want(conn, FUSE_CAP_WRITEBACK_CACHE);
	else
		conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	/*
	 * Locks stay in the kernel, on the FUSE inode: flock and fcntl locks
	 * between processes on the mount behave as on a local filesystem
	 * (blocking, signals, deadlock detection, release on close) without
	 * parking a FUSE thread per waiter.  They do not conflict with locks
	 * taken on BACKING directly.
	 */
	conn->want &= ~(FUSE_CAP_FLOCK_LOCKS | FUSE_CAP_POSIX_LOCKS);
	/*
	 * We write as root: the backing fs would keep the setuid bit of a
	 * file a user writes to.  The kernel flags such writes, truncates
	 * and chowns (FUSE_HANDLE_KILLPRIV_V2, asked for by killpriv.c,
	 * which clears the bits), or clears them itself with a setattr of
	 * the mode.  open(O_TRUNC) truncates through setattr too, which
	 * carries the flag: an atomic O_TRUNC would carry it where libfuse
	 * 3.14 drops it.  (v1, HANDLE_KILLPRIV, flags nothing.)
	 */
	conn->want &= ~(FUSE_CAP_HANDLE_KILLPRIV | FUSE_CAP_ATOMIC_O_TRUNC);
	/*
	 * POSIX ACLs: the kernel checks them as it checks the mode bits
	 * (default_permissions), from the system.posix_acl_* attributes we
	 * pass through, and the backing fs keeps mode and ACL in step.  The
	 * umask then is ours to apply, only where no default ACL decides
	 * (fs_inode_create_mode).
	 */
	fs_ops_want(conn, FUSE_CAP_POSIX_ACL);
	if (conn->want & FUSE_CAP_POSIX_ACL)
		fs_ops_want(conn, FUSE_CAP_DONT_MASK);
	fs->dont_mask = conn->want & FUSE_CAP_DONT_MASK;

	/*
	 * Reads are bounded by the same page count as writes, and by
	 * -o max_read when given: libfuse ends the session unless init asks
	 * for exactly the mount option's value (0 without one).
	 */
	conn->max_write = IOSCHED_MAX_SECTORS << IOSCHED_SECTOR_SHIFT;
	conn->max_read = fs->cfg->max_read;
	if (bg) {
		conn->max_background = bg;
		conn->congestion_threshold = bg * 3 / 4 ? bg * 3 / 4 : 1;
	}
	log_debug("fuse: want 0x%x of 0x%x, max_background %u", conn->want,
		  conn->capable, conn->max_background);
}

static void fs_ops_destroy(void *userdata)
{
	log_debug("fuse: session destroyed");
}

/*
 * Routing: control inodes (control.c) are small numbers, not struct inode
 * pointers, and no fs_* handler may see one (fs_inode() refuses them).
 * Every operation that names an inode, or ".control" in the root, comes
 * through here first: control.c answers it, or it gets the errno it has
 * on a sysfs-like file (CONTROL_EPERM for changes, before -o ro's EROFS).
 */
static bool fs_ops_is_control(fuse_ino_t parent, const char *name)
{
	return control_is_ino(parent) ||
	       (parent == FUSE_ROOT_ID && strcmp(name, CONTROL_NAME) == 0);
}

static void fs_ops_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (!fs_ops_is_control(parent, name))
		fs_inode_lookup(req, parent, name);
	else if (!control_lookup(req, parent, name))
		fuse_reply_err(req, ENOENT);
}

/* Control inodes are static: their forgets are dropped, in place. */
static void fs_ops_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	if (control_is_ino(ino))
		fuse_reply_none(req);
	else
		fs_inode_forget(req, ino, nlookup);
}

static void fs_ops_forget_multi(fuse_req_t req, size_t count,
				struct fuse_forget_data *forgets)
{
	size_t i, n = 0;

	for (i = 0; i < count; i++)
		if (!control_is_ino(forgets[i].ino))
			forgets[n++] = forgets[i];
	fs_inode_forget_multi(req, n, forgets);
}

static void fs_ops_getattr(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		control_getattr(req, ino);
	else
		fs_attr_getattr(req, ino, fi);
}

static void fs_ops_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			   int to_set, struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		control_setattr(req, ino, attr, to_set, fi);
	else
		fs_attr_setattr(req, ino, attr, to_set, fi);
}

static void fs_ops_readlink(fuse_req_t req, fuse_ino_t ino)
{
	if (control_is_ino(ino))
		fuse_reply_err(req, CONTROL_EPERM);
	else
		fs_attr_readlink(req, ino);
}

/* df(1) on anything under .control reports the backing fs. */
static void fs_ops_statfs(fuse_req_t req, fuse_ino_t ino)
{
	fs_attr_statfs(req, control_is_ino(ino) ? FUSE_ROOT_ID : ino);
}

static void fs_ops_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode, dev_t rdev)
{
	if (fs_ops_is_control(parent, name))
		fuse_reply_err(req, CONTROL_EPERM);
	else
		fs_dir_mknod(req, parent, name, mode, rdev);
}

static void fs_ops_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode)
{
	if (fs_ops_is_control(parent, name))
		fuse_reply_err(req, CONTROL_EPERM);
	else
		fs_dir_mkdir(req, parent, name, mode);
}

static void fs_ops_symlink(fuse_req_t req, const char *link,
			   fuse_ino_t parent, const char *name)
{
	if (fs_ops_is_control(parent, name))
		fuse_reply_err(req, CONTROL_EPERM);
	else
		fs_dir_symlink(req, link, parent, name);
}

static void fs_ops_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent,
			const char *name)
{
	if (control_is_ino(ino) || fs_ops_is_control(parent, name))
		fuse_reply_err(req, CONTROL_EPERM);
	else
		fs_dir_link(req, ino, parent, name);
}

static void fs_ops_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (fs_ops_is_control(parent, name))
		fuse_reply_err(req, CONTROL_EPERM);
	else
		fs_dir_unlink(req, parent, name);
}

static void fs_ops_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (fs_ops_is_control(parent, name))
		fuse_reply_err(req, CONTROL_EPERM);
	else
		fs_dir_rmdir(req, parent, name);
}

static void fs_ops_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
			  fuse_ino_t newparent, const char *newname,
			  unsigned int flags)
{
	if (fs_ops_is_control(parent, name) ||
	    fs_ops_is_control(newparent, newname))
		fuse_reply_err(req, CONTROL_EPERM);
	else
		fs_dir_rename(req, parent, name, newparent, newname, flags);
}

static void fs_ops_opendir(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		control_opendir(req, ino, fi);
	else
		fs_dir_opendir(req, ino, fi);
}

static void fs_ops_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		control_readdir(req, ino, size, off, fi, false);
	else
		fs_dir_readdir(req, ino, size, off, fi);
}

static void fs_ops_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			       off_t off, struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		control_readdir(req, ino, size, off, fi, true);
	else
		fs_dir_readdirplus(req, ino, size, off, fi);
}

/* control.c frees whatever its opendir or open set up. */
static void fs_ops_releasedir(fuse_req_t req, fuse_ino_t ino,
			      struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		control_release(req, ino, fi);
	else
		fs_dir_releasedir(req, ino, fi);
}

/* Nothing of a control file to sync, nor to flush: close(2) must not fail. */
static void fs_ops_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			    struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		fuse_reply_err(req, 0);
	else
		fs_dir_fsyncdir(req, ino, datasync, fi);
}

static void fs_ops_open(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		control_open(req, ino, fi);
	else
		fs_file_open(req, ino, fi);
}

static void fs_ops_create(fuse_req_t req, fuse_ino_t parent, const char *name,
			  mode_t mode, struct fuse_file_info *fi)
{
	if (fs_ops_is_control(parent, name))
		fuse_reply_err(req, CONTROL_EPERM);
	else
		fs_file_create(req, parent, name, mode, fi);
}

static void fs_ops_read(fuse_req_t req, fuse_ino_t ino, size_t size,
			off_t off, struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		control_read(req, ino, size, off, fi);
	else
		fs_file_read(req, ino, size, off, fi);
}

static void fs_ops_write_buf(fuse_req_t req, fuse_ino_t ino,
			     struct fuse_bufvec *in, off_t off,
			     struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		control_write_buf(req, ino, in, off, fi);
	else
		fs_file_write_buf(req, ino, in, off, fi);
}

static void fs_ops_flush(fuse_req_t req, fuse_ino_t ino,
			 struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		fuse_reply_err(req, 0);
	else
		fs_file_flush(req, ino, fi);
}

static void fs_ops_release(fuse_req_t req, fuse_ino_t ino,
			   struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		control_release(req, ino, fi);
	else
		fs_file_release(req, ino, fi);
}

static void fs_ops_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
			 struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		fuse_reply_err(req, 0);
	else
		fs_file_fsync(req, ino, datasync, fi);
}

static void fs_ops_fallocate(fuse_req_t req, fuse_ino_t ino, int mode,
			     off_t off, off_t len, struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		fuse_reply_err(req, CONTROL_EPERM);
	else
		fs_file_fallocate(req, ino, mode, off, len, fi);
}

static void fs_ops_lseek(fuse_req_t req, fuse_ino_t ino, off_t off,
			 int whence, struct fuse_file_info *fi)
{
	if (control_is_ino(ino))
		control_lseek(req, ino, off, whence, fi);
	else
		fs_file_lseek(req, ino, off, whence, fi);
}

/* Copying a control file is no error: cp(1) reads it instead. */
static void fs_ops_copy_file_range(fuse_req_t req, fuse_ino_t ino_in,
				   off_t off_in, struct fuse_file_info *fi_in,
				   fuse_ino_t ino_out, off_t off_out,
				   struct fuse_file_info *fi_out, size_t len,
				   int flags)
{
	if (control_is_ino(ino_in) || control_is_ino(ino_out))
		fuse_reply_err(req, EOPNOTSUPP);
	else
		fs_file_copy_file_range(req, ino_in, off_in, fi_in, ino_out,
					off_out, fi_out, len, flags);
}

static void fs_ops_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			    const char *value, size_t size, int flags)
{
	if (control_is_ino(ino))
		fuse_reply_err(req, CONTROL_EPERM);
	else
		fs_xattr_set(req, ino, name, value, size, flags);
}

/* A control file has no extended attributes. */
static void fs_ops_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			    size_t size)
{
	if (control_is_ino(ino))
		fuse_reply_err(req, ENODATA);
	else
		fs_xattr_get(req, ino, name, size);
}

static void fs_ops_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	if (!control_is_ino(ino))
		fs_xattr_list(req, ino, size);
	else if (size == 0)
		fuse_reply_xattr(req, 0);
	else
		fuse_reply_buf(req, NULL, 0);
}

static void fs_ops_removexattr(fuse_req_t req, fuse_ino_t ino,
			       const char *name)
{
	if (control_is_ino(ino))
		fuse_reply_err(req, CONTROL_EPERM);
	else
		fs_xattr_remove(req, ino, name);
}

const struct fuse_lowlevel_ops fs_ops = {
	.init		= fs_ops_init,
	.destroy	= fs_ops_destroy,
	.lookup		= fs_ops_lookup,
	.forget		= fs_ops_forget,
	.forget_multi	= fs_ops_forget_multi,
	.getattr	= fs_ops_getattr,
	.setattr	= fs_ops_setattr,
	.readlink	= fs_ops_readlink,
	.statfs		= fs_ops_statfs,
	.mknod		= fs_ops_mknod,
	.mkdir		= fs_ops_mkdir,
	.symlink	= fs_ops_symlink,
	.link		= fs_ops_link,
	.unlink		= fs_ops_unlink,
	.rmdir		= fs_ops_rmdir,
	.rename		= fs_ops_rename,
	.opendir	= fs_ops_opendir,
	.readdir	= fs_ops_readdir,
	.readdirplus	= fs_ops_readdirplus,
	.releasedir	= fs_ops_releasedir,
	.fsyncdir	= fs_ops_fsyncdir,
	.open		= fs_ops_open,
	.create		= fs_ops_create,
	.read		= fs_ops_read,
	.write_buf	= fs_ops_write_buf,
	.flush		= fs_ops_flush,
	.release	= fs_ops_release,
	.fsync		= fs_ops_fsync,
	.fallocate	= fs_ops_fallocate,
	.lseek		= fs_ops_lseek,
	.copy_file_range = fs_ops_copy_file_range,
	.setxattr	= fs_ops_setxattr,
	.getxattr	= fs_ops_getxattr,
	.listxattr	= fs_ops_listxattr,
	.removexattr	= fs_ops_removexattr,
};
