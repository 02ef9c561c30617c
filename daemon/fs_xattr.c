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
 *
 * What the backing fs would refuse the caller, the mount refuses too.  The
 * kernel checks values itself (trusted.* needs CAP_SYS_ADMIN, POSIX ACLs
 * their owner), but the list of names is ours: trusted.* names are left
 * out for callers without CAP_SYS_ADMIN, as ext4 and tmpfs do.  POSIX
 * ACLs are set with the caller's credentials, so that the backing fs
 * clears the setgid bit of a caller outside the file's group, as it
 * would.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <linux/limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
 * an inode with no attributes (a symlink), the error a change of them
 * gets, EPERM; or the error reaching it.
 */
static int fs_xattr_path(fuse_req_t req, fuse_ino_t ino, char *path,
			 struct inode **pinned)
{
	struct inode *inode;
	int fd;

	*pinned = NULL;
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

static bool fs_xattr_is_acl(const char *name)
{
	return strcmp(name, "system.posix_acl_access") == 0 ||
	       strcmp(name, "system.posix_acl_default") == 0;
}

/*
 * Set (value non-NULL) or remove name.  A POSIX ACL is changed with the
 * caller's credentials (the kernel has checked that the caller owns the
 * inode); /proc/self/fd stays ours to follow as the caller.
 */
static int fs_xattr_change(fuse_req_t req, fuse_ino_t ino, const char *name,
			   const char *value, size_t size, int flags)
{
	char path[FS_PROC_PATH_MAX];
	struct cred cred = { .switched = false };
	struct inode *pinned;
	int err, res;

	err = fs_xattr_path(req, ino, path, &pinned);
	if (err == 0 && fs_of(req)->readonly)
		err = EROFS;
	else if (err == 0 && fs_xattr_is_acl(name))
		err = -cred_enter(req, &cred);
	if (err == 0) {
		res = value ? setxattr(path, name, value, size, flags)
			    : removexattr(path, name);
		err = res == -1 ? errno : 0;
	}
	cred_leave(&cred);
	fs_xattr_done(pinned);
	return err;
}

void fs_xattr_set(fuse_req_t req, fuse_ino_t ino, const char *name,
		  const char *value, size_t size, int flags)
{
	fuse_reply_err(req, fs_xattr_change(req, ino, name, value, size,
					    flags));
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

/* Drop the trusted.* names from the list buf of len bytes, for a caller
 * who may not see them; the new length. */
static ssize_t fs_xattr_hide_trusted(fuse_req_t req, char *buf, ssize_t len)
{
	static const char prefix[] = "trusted.";
	char *name, *out = buf, *end = buf + len;
	bool hide = false, asked = false;
	size_t n;

	for (name = buf; name < end; name += n) {
		n = strnlen(name, end - name) + 1;
		if (strncmp(name, prefix, sizeof(prefix) - 1) == 0) {
			if (!asked) {
				hide = !cred_caller_capable(req,
							   CAP_SYS_ADMIN);
				asked = true;
			}
			if (hide)
				continue;
		}
		memmove(out, name, n);
		out += n;
	}
	return out - buf;
}

void fs_xattr_list(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	char path[FS_PROC_PATH_MAX];
	struct inode *pinned;
	char *buf;
	ssize_t res;

	if (fs_xattr_path(req, ino, path, &pinned) != 0) {
		fs_xattr_reply(req, 0, NULL, size);
		return;
	}
	/* The whole list, whatever size the caller has: its length is
	 * known only once the names it may not see are out. */
	buf = malloc(XATTR_LIST_MAX);
	if (buf == NULL) {
		fs_xattr_done(pinned);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	res = listxattr(path, buf, XATTR_LIST_MAX);
	fs_xattr_done(pinned);
	if (res > 0)
		res = fs_xattr_hide_trusted(req, buf, res);
	if (res > 0 && size != 0 && (size_t)res > size) {
		errno = ERANGE;
		res = -1;
	}
	fs_xattr_reply(req, res, buf, size);
	free(buf);
}

void fs_xattr_remove(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	fuse_reply_err(req, fs_xattr_change(req, ino, name, NULL, 0, 0));
}
