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

/*
 * FS_OPS_ROUTE(n, op, is_control, control, fs, type1, name1, ...) defines
 * the router fs_ops_<op>(req, name1, ...), with n parameters after req (a
 * wrong n does not compile), as the kernel's SYSCALL_DEFINEn does:
 * control(req, name1, ...) answers when is_control holds, fs(req, name1,
 * ...) otherwise.  The operations table below holds the routers, so the
 * compiler checks each against libfuse's signature.  control is
 * control.c's handler of the same signature, or FS_OPS_EPERM and the like
 * below: the reply a control inode gets instead.
 */
#define FS_OPS_PARAM(t, a) , t a
#define FS_OPS_ARG(t, a) , a
#define FS_OPS_MAP1(m, t, a) m(t, a)
#define FS_OPS_MAP2(m, t, a, ...) m(t, a) FS_OPS_MAP1(m, __VA_ARGS__)
#define FS_OPS_MAP3(m, t, a, ...) m(t, a) FS_OPS_MAP2(m, __VA_ARGS__)
#define FS_OPS_MAP4(m, t, a, ...) m(t, a) FS_OPS_MAP3(m, __VA_ARGS__)
#define FS_OPS_MAP5(m, t, a, ...) m(t, a) FS_OPS_MAP4(m, __VA_ARGS__)
#define FS_OPS_ARGS(n, ...) req FS_OPS_MAP##n(FS_OPS_ARG, __VA_ARGS__)
/* Expands the arguments first, for a control that is a macro. */
#define FS_OPS_CALL(f, ...) f(__VA_ARGS__)
#define FS_OPS_ROUTE(n, op, is_control, control, fs, ...)		\
	static void fs_ops_##op(fuse_req_t req				\
				FS_OPS_MAP##n(FS_OPS_PARAM, __VA_ARGS__)) \
	{								\
		if (is_control)						\
			FS_OPS_CALL(control, FS_OPS_ARGS(n, __VA_ARGS__)); \
		else							\
			fs(FS_OPS_ARGS(n, __VA_ARGS__));		\
	}

/* Any change to .control, or to its name in the root. */
#define FS_OPS_EPERM(req, ...) fuse_reply_err(req, CONTROL_EPERM)
/* Nothing of a control file to sync, nor to flush: close(2) must not fail. */
#define FS_OPS_DONE(req, ...) fuse_reply_err(req, 0)
/* A control file has no extended attributes. */
#define FS_OPS_ENODATA(req, ...) fuse_reply_err(req, ENODATA)

FS_OPS_ROUTE(2, getattr, control_is_ino(ino), control_getattr,
	     fs_attr_getattr, fuse_ino_t, ino, struct fuse_file_info *, fi)
FS_OPS_ROUTE(4, setattr, control_is_ino(ino), control_setattr,
	     fs_attr_setattr, fuse_ino_t, ino, struct stat *, attr,
	     int, to_set, struct fuse_file_info *, fi)
FS_OPS_ROUTE(1, readlink, control_is_ino(ino), FS_OPS_EPERM,
	     fs_attr_readlink, fuse_ino_t, ino)
FS_OPS_ROUTE(4, mknod, fs_ops_is_control(parent, name), FS_OPS_EPERM,
	     fs_dir_mknod, fuse_ino_t, parent, const char *, name,
	     mode_t, mode, dev_t, rdev)
FS_OPS_ROUTE(3, mkdir, fs_ops_is_control(parent, name), FS_OPS_EPERM,
	     fs_dir_mkdir, fuse_ino_t, parent, const char *, name,
	     mode_t, mode)
FS_OPS_ROUTE(3, symlink, fs_ops_is_control(parent, name), FS_OPS_EPERM,
	     fs_dir_symlink, const char *, link, fuse_ino_t, parent,
	     const char *, name)
FS_OPS_ROUTE(3, link, control_is_ino(ino) || fs_ops_is_control(parent, name),
	     FS_OPS_EPERM, fs_dir_link, fuse_ino_t, ino, fuse_ino_t, parent,
	     const char *, name)
FS_OPS_ROUTE(2, unlink, fs_ops_is_control(parent, name), FS_OPS_EPERM,
	     fs_dir_unlink, fuse_ino_t, parent, const char *, name)
FS_OPS_ROUTE(2, rmdir, fs_ops_is_control(parent, name), FS_OPS_EPERM,
	     fs_dir_rmdir, fuse_ino_t, parent, const char *, name)
FS_OPS_ROUTE(5, rename, fs_ops_is_control(parent, name) ||
	     fs_ops_is_control(newparent, newname), FS_OPS_EPERM,
	     fs_dir_rename, fuse_ino_t, parent, const char *, name,
	     fuse_ino_t, newparent, const char *, newname,
	     unsigned int, flags)
FS_OPS_ROUTE(2, opendir, control_is_ino(ino), control_opendir,
	     fs_dir_opendir, fuse_ino_t, ino, struct fuse_file_info *, fi)
FS_OPS_ROUTE(4, readdir, control_is_ino(ino), control_readdir,
	     fs_dir_readdir, fuse_ino_t, ino, size_t, size, off_t, off,
	     struct fuse_file_info *, fi)
FS_OPS_ROUTE(4, readdirplus, control_is_ino(ino), control_readdirplus,
	     fs_dir_readdirplus, fuse_ino_t, ino, size_t, size, off_t, off,
	     struct fuse_file_info *, fi)
/* control.c frees whatever its opendir or open set up. */
FS_OPS_ROUTE(2, releasedir, control_is_ino(ino), control_release,
	     fs_dir_releasedir, fuse_ino_t, ino, struct fuse_file_info *, fi)
FS_OPS_ROUTE(3, fsyncdir, control_is_ino(ino), FS_OPS_DONE,
	     fs_dir_fsyncdir, fuse_ino_t, ino, int, datasync,
	     struct fuse_file_info *, fi)
FS_OPS_ROUTE(2, open, control_is_ino(ino), control_open,
	     fs_file_open, fuse_ino_t, ino, struct fuse_file_info *, fi)
FS_OPS_ROUTE(4, create, fs_ops_is_control(parent, name), FS_OPS_EPERM,
	     fs_file_create, fuse_ino_t, parent, const char *, name,
	     mode_t, mode, struct fuse_file_info *, fi)
FS_OPS_ROUTE(4, read, control_is_ino(ino), control_read,
	     fs_file_read, fuse_ino_t, ino, size_t, size, off_t, off,
	     struct fuse_file_info *, fi)
FS_OPS_ROUTE(4, write_buf, control_is_ino(ino), control_write_buf,
	     fs_file_write_buf, fuse_ino_t, ino, struct fuse_bufvec *, in,
	     off_t, off, struct fuse_file_info *, fi)
FS_OPS_ROUTE(2, flush, control_is_ino(ino), FS_OPS_DONE,
	     fs_file_flush, fuse_ino_t, ino, struct fuse_file_info *, fi)
FS_OPS_ROUTE(2, release, control_is_ino(ino), control_release,
	     fs_file_release, fuse_ino_t, ino, struct fuse_file_info *, fi)
FS_OPS_ROUTE(3, fsync, control_is_ino(ino), FS_OPS_DONE,
	     fs_file_fsync, fuse_ino_t, ino, int, datasync,
	     struct fuse_file_info *, fi)
FS_OPS_ROUTE(5, fallocate, control_is_ino(ino), FS_OPS_EPERM,
	     fs_file_fallocate, fuse_ino_t, ino, int, mode, off_t, off,
	     off_t, len, struct fuse_file_info *, fi)
FS_OPS_ROUTE(4, lseek, control_is_ino(ino), control_lseek,
	     fs_file_lseek, fuse_ino_t, ino, off_t, off, int, whence,
	     struct fuse_file_info *, fi)
FS_OPS_ROUTE(5, setxattr, control_is_ino(ino), FS_OPS_EPERM,
	     fs_xattr_set, fuse_ino_t, ino, const char *, name,
	     const char *, value, size_t, size, int, flags)
FS_OPS_ROUTE(3, getxattr, control_is_ino(ino), FS_OPS_ENODATA,
	     fs_xattr_get, fuse_ino_t, ino, const char *, name,
	     size_t, size)
FS_OPS_ROUTE(2, removexattr, control_is_ino(ino), FS_OPS_EPERM,
	     fs_xattr_remove, fuse_ino_t, ino, const char *, name)

/* df(1) on anything under .control reports the backing fs. */
static void fs_ops_statfs(fuse_req_t req, fuse_ino_t ino)
{
	fs_attr_statfs(req, control_is_ino(ino) ? FUSE_ROOT_ID : ino);
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

static void fs_ops_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	if (!control_is_ino(ino))
		fs_xattr_list(req, ino, size);
	else if (size == 0)
		fuse_reply_xattr(req, 0);
	else
		fuse_reply_buf(req, NULL, 0);
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
