/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Attributes of the passthrough filesystem: getattr, setattr, readlink
 * and statfs, all on the O_PATH fd of the inode (or on the open file when
 * the kernel names one), never through a path inside BACKING.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "daemon.h"

static int fs_attr_stat(struct inode *inode, struct stat *st)
{
	int fd = fs_fd_get(inode), err = 0;

	if (fd < 0)
		return -fd;
	if (fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW))
		err = errno;
	else
		fs_inode_attr(inode, st);
	fs_fd_put(inode);
	return err;
}

void fs_attr_getattr(fuse_req_t req, fuse_ino_t ino,
		     struct fuse_file_info *fi)
{
	struct stat st;
	int err;

	err = fs_attr_stat(fs_inode(req, ino), &st);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, fs_of(req)->timeout);
}

static struct timespec fs_attr_time(int to_set, int set, int now,
				    const struct timespec *t)
{
	struct timespec ts = { 0, UTIME_OMIT };

	if (to_set & now)
		ts.tv_nsec = UTIME_NOW;
	else if (to_set & set)
		ts = *t;
	return ts;
}

/* Apply the changes in to_set to the inode open as pfd (O_PATH) and fd
 * (open file, or -1); 0 or an errno. */
static int fs_attr_change(struct inode *inode, int pfd, int fd,
			  const struct stat *attr, int to_set)
{
	char path[FS_PROC_PATH_MAX];
	int res;

	fs_inode_proc_path(pfd, path);
	if (to_set & FUSE_SET_ATTR_MODE) {
		/* Through /proc a symlink gets EOPNOTSUPP, as lchmod does. */
		res = fd >= 0 ? fchmod(fd, attr->st_mode)
			      : chmod(path, attr->st_mode);
		if (res == -1)
			return errno;
	}
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = to_set & FUSE_SET_ATTR_UID ? attr->st_uid
						       : (uid_t)-1;
		gid_t gid = to_set & FUSE_SET_ATTR_GID ? attr->st_gid
						       : (gid_t)-1;

		if (fchownat(pfd, "", uid, gid,
			     AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == -1)
			return errno;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		/* Queued writes land first, as they would on a disk. */
		fs_inode_wait_writes(inode);
		res = fd >= 0 ? ftruncate(fd, attr->st_size)
			      : truncate(path, attr->st_size);
		/* Blocks went away or holes appeared: forget the layout. */
		sectormap_invalidate(inode->smap, 0, 0);
		if (res == -1)
			return errno;
	}
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
		struct timespec tv[2];

		tv[0] = fs_attr_time(to_set, FUSE_SET_ATTR_ATIME,
				     FUSE_SET_ATTR_ATIME_NOW, &attr->st_atim);
		tv[1] = fs_attr_time(to_set, FUSE_SET_ATTR_MTIME,
				     FUSE_SET_ATTR_MTIME_NOW, &attr->st_mtim);
		/* AT_EMPTY_PATH works on O_PATH fds, symlinks included. */
		res = fd >= 0 ? futimens(fd, tv)
			      : utimensat(pfd, "", tv, AT_EMPTY_PATH);
		if (res == -1)
			return errno;
	}
	return 0;
}

void fs_attr_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		     int to_set, struct fuse_file_info *fi)
{
	struct inode *inode;
	struct stat st;
	int pfd, err;

	inode = fs_inode_writable(req, ino, &pfd);
	if (inode == NULL)
		return;
	/*
	 * With FUSE_HANDLE_KILLPRIV_V2 (killpriv.c) the kernel flags a
	 * truncate by a caller without CAP_FSETID, and every chown: the
	 * bits go first, as the backing fs drops them for that caller.
	 */
	if (atomic_load_explicit(&fs_of(req)->killpriv_v2,
				 memory_order_relaxed) &&
	    (to_set & FUSE_SET_ATTR_KILL_SUID) &&
	    !(to_set & FUSE_SET_ATTR_MODE) &&
	    fstatat(pfd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) == 0) {
		attr->st_mode = killpriv_mode(req, &st, to_set &
					      (FUSE_SET_ATTR_UID |
					       FUSE_SET_ATTR_GID));
		if (attr->st_mode != st.st_mode)
			to_set |= FUSE_SET_ATTR_MODE;
	}
	err = fs_attr_change(inode, pfd, fi ? fs_file_fd(fi->fh) : -1, attr,
			     to_set);
	fs_fd_put(inode);
	if (!err)
		err = fs_attr_stat(inode, &st);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, fs_of(req)->timeout);
}

void fs_attr_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PATH_MAX + 1];
	struct inode *inode;
	ssize_t res;
	int fd;

	inode = fs_inode(req, ino);
	fd = fs_fd_get(inode);
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	res = readlinkat(fd, "", buf, sizeof(buf));
	if (res == -1)
		res = -errno;
	fs_fd_put(inode);
	if (res < 0)
		fuse_reply_err(req, (int)-res);
	else if (res == sizeof(buf))
		fuse_reply_err(req, ENAMETOOLONG);
	else {
		buf[res] = '\0';
		fuse_reply_readlink(req, buf);
	}
}

void fs_attr_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;
	struct inode *inode;
	int fd, err = 0;

	inode = fs_inode(req, ino);
	fd = fs_fd_get(inode);
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	if (fstatvfs(fd, &sv) == -1)
		err = errno;
	fs_fd_put(inode);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_statfs(req, &sv);
}
