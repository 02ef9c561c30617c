/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Directory operations of the passthrough filesystem: creating, linking,
 * removing and renaming names, and reading directories.
 *
 * Every call is relative to the O_PATH fd of a parent inode, so nothing
 * here ever resolves a path through BACKING.  The name ".control" in the
 * root belongs to the control directory: it cannot be created, removed or
 * renamed, and a backing entry of that name is hidden from readdir.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include "daemon.h"

/* An open directory: readdir state kept between calls. */
struct fs_dir {
	LIST_ENTRY(fs_dir) link;	/* fs_dirs; fs_dirs_lock */
	DIR *dp;
	struct dirent *entry;	/* read but not yet returned, or NULL */
	off_t offset;		/* where dp stands, as the kernel counts */
};

/*
 * Every open directory, so that fs_dir_close_all can close those whose
 * releasedir never comes because the daemon stopped first.
 */
static LIST_HEAD(, fs_dir) fs_dirs = LIST_HEAD_INITIALIZER(fs_dirs);
static pthread_mutex_t fs_dirs_lock = PTHREAD_MUTEX_INITIALIZER;

/* Unlink, close and free d, at its releasedir or when the daemon stops. */
static void fs_dir_free(struct fs_dir *d)
{
	pthread_mutex_lock(&fs_dirs_lock);
	LIST_REMOVE(d, link);
	pthread_mutex_unlock(&fs_dirs_lock);
	closedir(d->dp);
	free(d);
}

static bool fs_dir_is_dot(const char *name)
{
	return name[0] == '.' &&
	       (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/* Reply to a creating operation with the new entry. */
static void fs_dir_reply_entry(fuse_req_t req, struct inode *dir,
			       const char *name)
{
	struct fuse_entry_param e;
	int err;

	err = fs_inode_entry(req, dir, name, &e);
	if (err)
		fuse_reply_err(req, -err);
	else if (fuse_reply_entry(req, &e) == -ENOENT)
		fs_inode_unref((struct inode *)(uintptr_t)e.ino, 1);
}

enum fs_dir_kind { FS_DIR_MKNOD, FS_DIR_MKDIR, FS_DIR_SYMLINK };

/* mknod, mkdir and symlink, done with the caller's credentials. */
static void fs_dir_make(fuse_req_t req, fuse_ino_t parent, const char *name,
			enum fs_dir_kind kind, mode_t mode, dev_t rdev,
			const char *link)
{
	struct inode *dir;
	struct cred cred;
	int fd, res, err;

	dir = fs_inode_writable(req, parent, &fd);
	if (dir == NULL)
		return;
	if (kind != FS_DIR_SYMLINK)
		mode = fs_inode_create_mode(req, fd, mode);
	err = cred_enter(req, &cred);
	if (err) {
		fs_fd_put(dir);
		fuse_reply_err(req, -err);
		return;
	}
	switch (kind) {
	case FS_DIR_MKDIR:
		res = mkdirat(fd, name, mode);
		break;
	case FS_DIR_SYMLINK:
		res = symlinkat(link, fd, name);
		break;
	default:
		res = mknodat(fd, name, mode, rdev);
		break;
	}
	err = res == -1 ? errno : 0;
	cred_leave(&cred);
	fs_fd_put(dir);
	if (err)
		fuse_reply_err(req, err);
	else
		fs_dir_reply_entry(req, dir, name);
}

void fs_dir_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		  mode_t mode, dev_t rdev)
{
	fs_dir_make(req, parent, name, FS_DIR_MKNOD, mode, rdev, NULL);
}

void fs_dir_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		  mode_t mode)
{
	fs_dir_make(req, parent, name, FS_DIR_MKDIR, mode, 0, NULL);
}

void fs_dir_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		    const char *name)
{
	fs_dir_make(req, parent, name, FS_DIR_SYMLINK, 0, 0, link);
}

void fs_dir_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent,
		 const char *name)
{
	char path[FS_PROC_PATH_MAX];
	struct inode *inode, *dir;
	int fd, dfd, err = 0;

	/*
	 * linkat(fd, "", AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; following
	 * the /proc magic link reaches the same inode (a symlink itself, not
	 * its target) without it.
	 */
	inode = fs_inode_writable(req, ino, &fd);
	if (inode == NULL)
		return;
	dir = fs_inode(req, parent);
	dfd = fs_fd_get(dir);
	if (dfd < 0)
		err = -dfd;
	else {
		fs_inode_proc_path(fd, path);
		if (linkat(AT_FDCWD, path, dfd, name, AT_SYMLINK_FOLLOW) == -1)
			err = errno;
		fs_fd_put(dir);
	}
	fs_fd_put(inode);
	if (err)
		fuse_reply_err(req, err);
	else
		fs_dir_reply_entry(req, dir, name);
}

static void fs_dir_remove(fuse_req_t req, fuse_ino_t parent, const char *name,
			  int flags)
{
	struct inode *dir;
	int fd, err;

	dir = fs_inode_writable(req, parent, &fd);
	if (dir == NULL)
		return;
	err = unlinkat(fd, name, flags) == -1 ? errno : 0;
	fs_fd_put(dir);
	fuse_reply_err(req, err);
}

void fs_dir_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fs_dir_remove(req, parent, name, 0);
}

void fs_dir_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fs_dir_remove(req, parent, name, AT_REMOVEDIR);
}

void fs_dir_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		   fuse_ino_t newparent, const char *newname,
		   unsigned int flags)
{
	struct inode *from, *to;
	int fd, newfd, res, err = 0;

	from = fs_inode_writable(req, parent, &fd);
	if (from == NULL)
		return;
	to = fs_inode(req, newparent);
	newfd = fs_fd_get(to);
	if (newfd < 0) {
		fs_fd_put(from);
		fuse_reply_err(req, -newfd);
		return;
	}
	/* RENAME_NOREPLACE and RENAME_EXCHANGE reach the backing fs as is. */
	if (flags)
		res = renameat2(fd, name, newfd, newname, flags);
	else
		res = renameat(fd, name, newfd, newname);
	if (res == -1)
		err = errno;
	else {
		/* An inode reached again by name must be looked for there. */
		fs_inode_renamed(to, newfd, newname);
		if (flags & RENAME_EXCHANGE)
			fs_inode_renamed(from, fd, name);
	}
	fs_fd_put(to);
	fs_fd_put(from);
	fuse_reply_err(req, err);
}

/* ------------------------------------------------------------------ */
/* reading directories                                                  */

void fs_dir_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_dir *d;
	int fd;

	d = calloc(1, sizeof(*d));
	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fd = fs_inode_reopen(fs_inode(req, ino), O_RDONLY | O_DIRECTORY);
	if (fd < 0 || !(d->dp = fdopendir(fd))) {
		int err = fd < 0 ? -fd : errno;

		if (fd >= 0)
			close(fd);
		free(d);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uintptr_t)d;
	pthread_mutex_lock(&fs_dirs_lock);
	LIST_INSERT_HEAD(&fs_dirs, d, link);
	pthread_mutex_unlock(&fs_dirs_lock);
	if (fuse_reply_open(req, fi) == -ENOENT)
		fs_dir_free(d);
}

/* Inodes counted by a readdirplus reply, to uncount if it fails. */
struct fs_dir_refs {
	struct inode **v;
	size_t n, cap;
};

static int fs_dir_refs_add(struct fs_dir_refs *r, struct inode *inode)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct inode **v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = inode;
	return 0;
}

/* Add the entry d->entry to buf; returns its size, or 0 on error (*err). */
static size_t fs_dir_add(fuse_req_t req, struct inode *dir, struct fs_dir *d,
			 bool plus, char *buf, size_t rem,
			 struct fs_dir_refs *refs, int *err)
{
	const char *name = d->entry->d_name;
	off_t next = d->entry->d_off;
	struct fuse_entry_param e;
	struct inode *inode;
	size_t size;

	memset(&e, 0, sizeof(e));
	e.attr.st_ino = d->entry->d_ino;
	e.attr.st_mode = DTTOIF(d->entry->d_type);
	if (!plus)
		return fuse_add_direntry(req, buf, rem, name, &e.attr, next);

	/* "." and ".." carry no entry: the kernel counts no lookup. */
	if (!fs_dir_is_dot(name)) {
		*err = -fs_inode_entry(req, dir, name, &e);
		if (*err)
			return 0;
	}
	size = fuse_add_direntry_plus(req, buf, rem, name, &e, next);
	if (!e.ino)
		return size;
	inode = (struct inode *)(uintptr_t)e.ino;
	if (size > rem) {
		/* Did not fit: the kernel will not see this lookup. */
		fs_inode_unref(inode, 1);
		return size;
	}
	*err = fs_dir_refs_add(refs, inode);
	if (*err) {
		fs_inode_unref(inode, 1);
		return 0;
	}
	return size;
}

static void fs_dir_read(fuse_req_t req, fuse_ino_t ino, size_t size,
			off_t off, struct fuse_file_info *fi, bool plus)
{
	struct fs_dir *d = (struct fs_dir *)(uintptr_t)fi->fh;
	struct inode *dir = fs_inode(req, ino);
	struct fs_dir_refs refs = { NULL, 0, 0 };
	size_t pos = 0, n;
	char *buf;
	int err = 0;

	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (off != d->offset) {
		seekdir(d->dp, off);
		d->entry = NULL;
		d->offset = off;
	}
	for (;;) {
		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				err = errno;
				break;
			}
		}
		/* The control directory shadows a backing ".control". */
		if (ino == FUSE_ROOT_ID &&
		    strcmp(d->entry->d_name, CONTROL_NAME) == 0) {
			d->offset = d->entry->d_off;
			d->entry = NULL;
			continue;
		}
		n = fs_dir_add(req, dir, d, plus, buf + pos, size - pos,
			       &refs, &err);
		if (err == ENOENT) {
			/* Removed since readdir saw it: skip it. */
			err = 0;
			d->offset = d->entry->d_off;
			d->entry = NULL;
			continue;
		}
		if (err || n > size - pos)
			break;
		pos += n;
		d->offset = d->entry->d_off;
		d->entry = NULL;
	}

	/* An error after some entries: return those, the next call errs. */
	if (err && pos == 0)
		fuse_reply_err(req, err);
	else if (fuse_reply_buf(req, buf, pos) == -ENOENT)
		for (n = 0; n < refs.n; n++)
			fs_inode_unref(refs.v[n], 1);
	free(refs.v);
	free(buf);
}

void fs_dir_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	fs_dir_read(req, ino, size, off, fi, false);
}

void fs_dir_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			off_t off, struct fuse_file_info *fi)
{
	fs_dir_read(req, ino, size, off, fi, true);
}

void fs_dir_releasedir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct fs_dir *d = (struct fs_dir *)(uintptr_t)fi->fh;

	fs_dir_free(d);
	fuse_reply_err(req, 0);
}

void fs_dir_close_all(void)
{
	while (!LIST_EMPTY(&fs_dirs))
		fs_dir_free(LIST_FIRST(&fs_dirs));
}

void fs_dir_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	struct fs_dir *d = (struct fs_dir *)(uintptr_t)fi->fh;
	int fd, res;

	fd = dirfd(d->dp);
	res = datasync ? fdatasync(fd) : fsync(fd);
	fuse_reply_err(req, res == -1 ? errno : 0);
}
