/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * faultfs: a passthrough FUSE file system that fails chosen reads and
 * writes, for the reliability tests.  The tests mount it on a directory
 * and use it as fuse-iosched's BACKING, so that the daemon meets the
 * errors a real disk or a full file system gives.
 *
 *   faultfs [-f] [-o rules=FILE] SOURCE MOUNTPOINT
 *
 * FILE holds one rule a line, read again whenever it changes:
 *
 *   read|write|truncate  eio|enospc|short  PATTERN  [after=BYTES]
 *
 * An operation on a file whose name matches PATTERN (fnmatch(3), on the
 * last path component) that reaches byte BYTES of the file (default 0)
 * moves the bytes before BYTES and then stops: with the error for eio and
 * enospc, with a short count for short (a call that starts at or after
 * BYTES moves nothing and returns 0).  A truncate to a size past BYTES
 * fails with the error (short: it succeeds).  The first rule that matches
 * wins.
 */
#define FUSE_USE_VERSION 31

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <fuse.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#define FAULTFS_RULES_MAX 16

enum faultfs_action { FAULT_EIO, FAULT_ENOSPC, FAULT_SHORT };
enum faultfs_op { FAULT_READ, FAULT_WRITE, FAULT_TRUNCATE };

struct faultfs_rule {
	enum faultfs_op op;
	enum faultfs_action action;
	char pattern[256];
	off_t after;
};

static struct {
	char *source;
	char *rules_file;
	int src_fd;		/* SOURCE, for the *at calls */
	pthread_mutex_t lock;	/* protects the rules below */
	struct faultfs_rule rules[FAULTFS_RULES_MAX];
	int nr_rules;
	struct timespec rules_mtime;
} faultfs = { .src_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

/* Paths from FUSE start with '/': relative to SOURCE without it. */
static const char *rel(const char *path)
{
	return path[1] == '\0' ? "." : path + 1;
}

static int faultfs_parse_rule(const char *line, struct faultfs_rule *r)
{
	char op[16], action[16];
	long long after = 0;
	int n;

	n = sscanf(line, "%15s %15s %255s after=%lld", op, action, r->pattern,
		   &after);
	if (n < 3)
		return -1;
	if (strcmp(op, "read") == 0)
		r->op = FAULT_READ;
	else if (strcmp(op, "write") == 0)
		r->op = FAULT_WRITE;
	else if (strcmp(op, "truncate") == 0)
		r->op = FAULT_TRUNCATE;
	else
		return -1;
	if (strcmp(action, "eio") == 0)
		r->action = FAULT_EIO;
	else if (strcmp(action, "enospc") == 0)
		r->action = FAULT_ENOSPC;
	else if (strcmp(action, "short") == 0)
		r->action = FAULT_SHORT;
	else
		return -1;
	r->after = after;
	return 0;
}

/* Re-read the rules when the file changed; caller holds the lock. */
static void faultfs_load_rules(void)
{
	struct stat st;
	char line[512];
	FILE *fp;

	if (faultfs.rules_file == NULL || stat(faultfs.rules_file, &st) == -1) {
		faultfs.nr_rules = 0;
		return;
	}
	if (st.st_mtim.tv_sec == faultfs.rules_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == faultfs.rules_mtime.tv_nsec)
		return;
	faultfs.rules_mtime = st.st_mtim;
	faultfs.nr_rules = 0;
	fp = fopen(faultfs.rules_file, "r");
	if (fp == NULL)
		return;
	while (fgets(line, sizeof line, fp) != NULL &&
	       faultfs.nr_rules < FAULTFS_RULES_MAX) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (faultfs_parse_rule(line,
				       &faultfs.rules[faultfs.nr_rules]) == 0)
			faultfs.nr_rules++;
		else
			fprintf(stderr, "faultfs: bad rule: %s", line);
	}
	fclose(fp);
}

/* The rule for this operation, copied into *out: true if one matches. */
static bool faultfs_match(const char *path, enum faultfs_op op,
			  struct faultfs_rule *out)
{
	const char *name = strrchr(path, '/');
	bool found = false;

	name = name != NULL ? name + 1 : path;
	pthread_mutex_lock(&faultfs.lock);
	faultfs_load_rules();
	for (int i = 0; i < faultfs.nr_rules && !found; i++) {
		if (faultfs.rules[i].op == op &&
		    fnmatch(faultfs.rules[i].pattern, name, 0) == 0) {
			*out = faultfs.rules[i];
			found = true;
		}
	}
	pthread_mutex_unlock(&faultfs.lock);
	return found;
}

/*
 * How much of [off, off + size) may move, or -errno: the part before the
 * rule's boundary; past it, the rule's error (or 0 for short).
 */
static ssize_t faultfs_allowed(const char *path, bool write, size_t size,
			       off_t off, int *err)
{
	struct faultfs_rule r;

	*err = 0;
	if (!faultfs_match(path, write ? FAULT_WRITE : FAULT_READ, &r) ||
	    off + (off_t)size <= r.after)
		return (ssize_t)size;
	if (r.action == FAULT_EIO)
		*err = EIO;
	else if (r.action == FAULT_ENOSPC)
		*err = ENOSPC;
	return off >= r.after ? 0 : (ssize_t)(r.after - off);
}

static int faultfs_getattr(const char *path, struct stat *st,
			   struct fuse_file_info *fi)
{
	int res;

	if (fi != NULL)
		res = fstat(fi->fh, st);
	else
		res = fstatat(faultfs.src_fd, rel(path), st, AT_SYMLINK_NOFOLLOW);
	return res == -1 ? -errno : 0;
}

static int faultfs_readdir(const char *path, void *buf, fuse_fill_dir_t fill,
			   off_t off, struct fuse_file_info *fi,
			   enum fuse_readdir_flags flags)
{
	struct dirent *de;
	DIR *dir;
	int fd;

	(void)off, (void)fi, (void)flags;
	fd = openat(faultfs.src_fd, rel(path), O_RDONLY | O_DIRECTORY);
	if (fd == -1)
		return -errno;
	dir = fdopendir(fd);
	if (dir == NULL) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(dir)) != NULL)
		if (fill(buf, de->d_name, NULL, 0, 0))
			break;
	closedir(dir);
	return 0;
}

static int faultfs_open(const char *path, struct fuse_file_info *fi)
{
	int fd = openat(faultfs.src_fd, rel(path), fi->flags);

	if (fd == -1)
		return -errno;
	fi->fh = fd;
	return 0;
}

static int faultfs_create(const char *path, mode_t mode,
			  struct fuse_file_info *fi)
{
	int fd = openat(faultfs.src_fd, rel(path), fi->flags | O_CREAT, mode);

	if (fd == -1)
		return -errno;
	fi->fh = fd;
	return 0;
}

static int faultfs_read(const char *path, char *buf, size_t size, off_t off,
			struct fuse_file_info *fi)
{
	ssize_t n, allowed;
	int err;

	allowed = faultfs_allowed(path, false, size, off, &err);
	if (allowed == 0 && err)
		return -err;
	n = pread(fi->fh, buf, (size_t)allowed, off);
	return n == -1 ? -errno : (int)n;
}

static int faultfs_write(const char *path, const char *buf, size_t size,
			 off_t off, struct fuse_file_info *fi)
{
	ssize_t n, allowed;
	int err;

	allowed = faultfs_allowed(path, true, size, off, &err);
	if (allowed == 0)
		return err ? -err : 0;
	n = pwrite(fi->fh, buf, (size_t)allowed, off);
	return n == -1 ? -errno : (int)n;
}

static int faultfs_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	close(fi->fh);
	return 0;
}

static int faultfs_fsync(const char *path, int datasync,
			 struct fuse_file_info *fi)
{
	(void)path;
	return (datasync ? fdatasync(fi->fh) : fsync(fi->fh)) == -1 ? -errno : 0;
}

static int faultfs_truncate(const char *path, off_t size,
			    struct fuse_file_info *fi)
{
	struct faultfs_rule r;
	int res;

	if (faultfs_match(path, FAULT_TRUNCATE, &r) && size > r.after &&
	    r.action != FAULT_SHORT)
		return r.action == FAULT_EIO ? -EIO : -ENOSPC;
	if (fi != NULL)
		res = ftruncate(fi->fh, size);
	else {
		int fd = openat(faultfs.src_fd, rel(path), O_WRONLY);

		if (fd == -1)
			return -errno;
		res = ftruncate(fd, size);
		close(fd);
	}
	return res == -1 ? -errno : 0;
}

static int faultfs_mkdir(const char *path, mode_t mode)
{
	return mkdirat(faultfs.src_fd, rel(path), mode) == -1 ? -errno : 0;
}

static int faultfs_unlink(const char *path)
{
	return unlinkat(faultfs.src_fd, rel(path), 0) == -1 ? -errno : 0;
}

static int faultfs_rmdir(const char *path)
{
	return unlinkat(faultfs.src_fd, rel(path), AT_REMOVEDIR) == -1 ?
	       -errno : 0;
}

static int faultfs_rename(const char *from, const char *to, unsigned flags)
{
	if (flags != 0)
		return -EINVAL;
	return renameat(faultfs.src_fd, rel(from), faultfs.src_fd, rel(to)) ==
	       -1 ? -errno : 0;
}

static int faultfs_chmod(const char *path, mode_t mode,
			 struct fuse_file_info *fi)
{
	(void)fi;
	return fchmodat(faultfs.src_fd, rel(path), mode, 0) == -1 ? -errno : 0;
}

static int faultfs_chown(const char *path, uid_t uid, gid_t gid,
			 struct fuse_file_info *fi)
{
	(void)fi;
	return fchownat(faultfs.src_fd, rel(path), uid, gid,
			AT_SYMLINK_NOFOLLOW) == -1 ? -errno : 0;
}

static int faultfs_utimens(const char *path, const struct timespec tv[2],
			   struct fuse_file_info *fi)
{
	(void)fi;
	return utimensat(faultfs.src_fd, rel(path), tv, AT_SYMLINK_NOFOLLOW) ==
	       -1 ? -errno : 0;
}

static int faultfs_statfs(const char *path, struct statvfs *st)
{
	(void)path;
	return fstatvfs(faultfs.src_fd, st) == -1 ? -errno : 0;
}

static void *faultfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 1;	/* fuse-iosched keys its inodes on st_ino */
	cfg->entry_timeout = cfg->attr_timeout = 0;
	return NULL;
}

static const struct fuse_operations faultfs_ops = {
	.init = faultfs_init,
	.getattr = faultfs_getattr,
	.readdir = faultfs_readdir,
	.open = faultfs_open,
	.create = faultfs_create,
	.read = faultfs_read,
	.write = faultfs_write,
	.release = faultfs_release,
	.fsync = faultfs_fsync,
	.truncate = faultfs_truncate,
	.mkdir = faultfs_mkdir,
	.unlink = faultfs_unlink,
	.rmdir = faultfs_rmdir,
	.rename = faultfs_rename,
	.chmod = faultfs_chmod,
	.chown = faultfs_chown,
	.utimens = faultfs_utimens,
	.statfs = faultfs_statfs,
};

static const struct fuse_opt faultfs_opts[] = {
	{ "rules=%s", offsetof(__typeof__(faultfs), rules_file), 0 },
	FUSE_OPT_END
};

/* The first argument that is not an option is SOURCE; keep the rest. */
static int faultfs_opt_proc(void *data, const char *arg, int key,
			    struct fuse_args *args)
{
	(void)data, (void)args;
	if (key == FUSE_OPT_KEY_NONOPT && faultfs.source == NULL) {
		faultfs.source = strdup(arg);
		return 0;
	}
	return 1;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	int ret;

	if (fuse_opt_parse(&args, &faultfs, faultfs_opts,
			   faultfs_opt_proc) == -1)
		return 1;
	if (faultfs.source == NULL) {
		fprintf(stderr, "usage: faultfs [-f] [-o rules=FILE] SOURCE MOUNTPOINT\n");
		return 1;
	}
	faultfs.src_fd = open(faultfs.source, O_RDONLY | O_DIRECTORY);
	if (faultfs.src_fd == -1) {
		perror(faultfs.source);
		return 1;
	}
	umask(0);	/* modes come from the caller as they are */
	ret = fuse_main(args.argc, args.argv, &faultfs_ops, NULL);
	fuse_opt_free_args(&args);
	return ret;
}
