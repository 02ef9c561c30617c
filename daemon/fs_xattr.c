/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Extended attributes of the passthrough filesystem.
 *
 * The *xattr calls have no AT_EMPTY_PATH form and refuse O_PATH fds, so
 * they go through /proc/self/fd/N, which names the inode itself without a
 * path lookup in BACKING.  That does not work for symlinks (the l*xattr
 * calls would act on the /proc link), and there is no race-free way to
 * reach a symlink's own attributes: it has none we show, and none can be
 * set.
 *
 * The control files have no attributes: reads answer "none" so that
 * ls(1) and getfattr(1) stay quiet; changes get CONTROL_EPERM.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/xattr.h>

#include "daemon.h"

/* Reply to a get or list call that produced res bytes into buf. */
static void fs_xattr_reply(fuse_req_t req, ssize_t res, const char *buf,
			   size_t size)
{
	if (res == -1)
		fuse_reply_err(req, errno);
	else if (size == 0)
		fuse_reply_xattr(req, res);
	else
		fuse_reply_buf(req, buf, res);
}

/*
 * Put the /proc/self/fd path of ino's backing inode in path, its
 * descriptor pinned in *pinned until fs_xattr_done, and return 0; or, for
 * an inode with no attributes, the error a change of them gets:
 * CONTROL_EPERM for a control file, EPERM for a symlink; or the error
 * reaching it.
 */
static int fs_xattr_path(fuse_req_t req, fuse_ino_t ino, char *path,
			 struct inode **pinned)
{
	struct inode *inode;
	int fd;

	*pinned = NULL;
	if (control_is_ino(ino))
		return CONTROL_EPERM;
	inode = fs_inode(req, ino);
	if (S_ISLNK(inode->type))
		return EPERM;
	fd = fs_fd_get(inode);
	if (fd < 0)
		return -fd;
	fs_inode_proc_path(fd, path);
	*pinned = inode;
	return 0;
}

static void fs_xattr_done(struct inode *pinned)
{
	int errsv = errno;

	if (pinned != NULL)
		fs_fd_put(pinned);
	errno = errsv;
}

void fs_xattr_set(fuse_req_t req, fuse_ino_t ino, const char *name,
		  const char *value, size_t size, int flags)
{
	char path[FS_PROC_PATH_MAX];
	struct inode *pinned;
	int err = fs_xattr_path(req, ino, path, &pinned);

	if (err == 0 && fs_of(req)->readonly)
		err = EROFS;
	else if (err == 0 && setxattr(path, name, value, size, flags) == -1)
		err = errno;
	fs_xattr_done(pinned);
	fuse_reply_err(req, err);
}

void fs_xattr_get(fuse_req_t req, fuse_ino_t ino, const char *name,
		  size_t size)
{
	char path[FS_PROC_PATH_MAX];
	struct inode *pinned;
	char *buf = NULL;
	ssize_t res;

	if (fs_xattr_path(req, ino, path, &pinned) != 0) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	if (size && !(buf = malloc(size))) {
		fs_xattr_done(pinned);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	res = getxattr(path, name, buf, size);
	fs_xattr_done(pinned);
	fs_xattr_reply(req, res, buf, size);
	free(buf);
}

void fs_xattr_list(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char path[FS_PROC_PATH_MAX];
	struct inode *pinned;
	char *buf = NULL;
	ssize_t res;

	if (fs_xattr_path(req, ino, path, &pinned) != 0) {
		fs_xattr_reply(req, 0, NULL, size);
		return;
	}
	if (size && !(buf = malloc(size))) {
		fs_xattr_done(pinned);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	res = listxattr(path, buf, size);
	fs_xattr_done(pinned);
	fs_xattr_reply(req, res, buf, size);
	free(buf);
}

void fs_xattr_remove(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	char path[FS_PROC_PATH_MAX];
	struct inode *pinned;
	int err = fs_xattr_path(req, ino, path, &pinned);

	if (err == 0 && fs_of(req)->readonly)
		err = EROFS;
	else if (err == 0 && removexattr(path, name) == -1)
		err = errno;
	fs_xattr_done(pinned);
	fuse_reply_err(req, err);
}
