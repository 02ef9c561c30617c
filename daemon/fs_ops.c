/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The FUSE low-level operations table of the passthrough filesystem, and
 * the connection set-up that goes with it.
 */
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
	 * file a user writes to.  Let the kernel clear it, as for a local
	 * file: it sends a setattr of the mode.  Also for open(O_TRUNC),
	 * which it then truncates through setattr too: with an atomic
	 * O_TRUNC it would drop that setattr, mode and all.
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

const struct fuse_lowlevel_ops fs_ops = {
	.init		= fs_ops_init,
	.destroy	= fs_ops_destroy,
	.lookup		= fs_inode_lookup,
	.forget		= fs_inode_forget,
	.forget_multi	= fs_inode_forget_multi,
	.getattr	= fs_attr_getattr,
	.setattr	= fs_attr_setattr,
	.readlink	= fs_attr_readlink,
	.statfs		= fs_attr_statfs,
	.mknod		= fs_dir_mknod,
	.mkdir		= fs_dir_mkdir,
	.symlink	= fs_dir_symlink,
	.link		= fs_dir_link,
	.unlink		= fs_dir_unlink,
	.rmdir		= fs_dir_rmdir,
	.rename		= fs_dir_rename,
	.opendir	= fs_dir_opendir,
	.readdir	= fs_dir_readdir,
	.readdirplus	= fs_dir_readdirplus,
	.releasedir	= fs_dir_releasedir,
	.fsyncdir	= fs_dir_fsyncdir,
	.open		= fs_file_open,
	.create		= fs_file_create,
	.read		= fs_file_read,
	.write_buf	= fs_file_write_buf,
	.flush		= fs_file_flush,
	.release	= fs_file_release,
	.fsync		= fs_file_fsync,
	.fallocate	= fs_file_fallocate,
	.lseek		= fs_file_lseek,
	.copy_file_range = fs_file_copy_file_range,
	.setxattr	= fs_xattr_set,
	.getxattr	= fs_xattr_get,
	.listxattr	= fs_xattr_list,
	.removexattr	= fs_xattr_remove,
};
