/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The virtual .control directory, the mount's /sys/block/DEV/queue/: its
 * files and how they read, write and copy are in fuse-iosched(8), CONTROL
 * FILES; the kernel's view of their sizes is in HACKING, Control files.
 *
 * Invariants:
 * - Its inodes are small fixed numbers, never struct inode pointers:
 *   fs_ops.c, the one place that tests control_is_ino(), hands every
 *   operation on them to this file or refuses it.  They are static:
 *   lookups take references the kernel later forgets, nothing to count.
 * - An open file has its own content buffer (a sysfs attribute's), except
 *   the trace, a stream of trace.c's with no buffer and no offset.
 * - An open tunable file holds the scheduler's and the tunable's names,
 *   not a pointer: each read and write looks the name up again in the
 *   active instance under the queue lock, so after a switch it fails
 *   with ENOENT instead of touching a field of the new scheduler.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

/* Like sysfs: at most a page written at once. */
#define CONTROL_BUF_SIZE 4096
/* Content: a page, but stats with its histograms needs a few. */
#define CONTROL_SHOW_SIZE 16384
/* And with STATS_GROUPS groups' histograms, their largest numbers. */
#define CONTROL_STATS_SIZE 65536

/*
 * The inode numbers FUSE sees.  FUSE_ROOT_ID is 1; struct inode pointers
 * are far above these.
 */
enum {
	CONTROL_INO_DIR = 2,
	CONTROL_INO_SCHEDULER,
	CONTROL_INO_NR_REQUESTS,
	CONTROL_INO_STATS,
	CONTROL_INO_IOSCHED,
	CONTROL_INO_BACKING_IO,
	CONTROL_INO_BACKING_DEVICE,
	CONTROL_INO_TRACE,
	CONTROL_INO_LOG,
	CONTROL_INO_PID,
	CONTROL_INO_END
};

/*
 * Tunable files: a block of CONTROL_TUNABLES_MAX inode numbers per
 * scheduler type, in the order this file first met the types, and within
 * it the tunable's index in the type's table.  Giving each scheduler its
 * own numbers means that an inode looked up under one scheduler cannot be
 * opened as a tunable of the next one.  The loader refuses a table longer
 * than IOSCHED_TUNABLES_MAX, so every tunable has a file.
 */
#define CONTROL_INO_TUNABLE 16
#define CONTROL_TUNABLES_MAX IOSCHED_TUNABLES_MAX
#define CONTROL_TYPES_MAX 64	/* as many as the registry holds */
#define CONTROL_INO_TUNABLE_END \
	(CONTROL_INO_TUNABLE + CONTROL_TYPES_MAX * CONTROL_TUNABLES_MAX)

_Static_assert(CONTROL_INO_END <= CONTROL_INO_TUNABLE,
	       "fixed control inodes overlap the tunable ones");

/*
 * The st_ino applications see.  A passthrough filesystem reports backing
 * inode numbers, which are small on most filesystems; these stay clear of
 * them in practice while still fitting in 32 bits for old stat(2) callers.
 */
#define CONTROL_ST_INO_BASE 0xfffff000U

_Static_assert(CONTROL_ST_INO_BASE + (uint64_t)CONTROL_INO_TUNABLE_END <=
	       UINT32_MAX, "control st_ino values do not fit in 32 bits");

struct control_file;

struct control_node {
	const char *name;	/* NULL for tunables: see control_file */
	fuse_ino_t ino;
	mode_t mode;
	/* Fill buf; length or -errno. */
	int (*show)(struct fs *fs, const struct control_file *f, char *buf,
		    size_t size);
	/* Apply a write; 0, or -errno and why in a few words (the value is
	 * logged beside it).  NULL: read-only. */
	int (*store)(struct fs *fs, const struct control_file *f,
		     const char *buf, size_t len, char *why, size_t size);
};

/* One open file: its content as generated at open or last rewind. */
struct control_file {
	LIST_ENTRY(control_file) link;	/* control_files; control_files_lock */
	const struct control_node *node;
	fuse_ino_t ino;
	bool append;		/* opened O_APPEND: the offset means nothing */
	pid_t pid;		/* the opener's thread: its getattr sees len */
	uid_t uid;		/* the opener's */
	/*
	 * A tunable file: whose tunable it is.  Immutable.  The name points
	 * into the type's table, which stays loaded until the daemon exits.
	 */
	const struct elevator_type *type;
	const char *tunable;
	pthread_mutex_t lock;	/* protects state, len and buf */
	enum {
		CONTROL_NEW,	/* nothing of buf shown: a read regenerates */
		CONTROL_SIZED,	/* its length shown: the opener's read keeps it */
		CONTROL_READ,	/* read: a read from 0 regenerates */
	} state;
	size_t len;
	size_t size;		/* of buf */
	char buf[];
};

/*
 * Every open file, so that control_close_all can free those whose release
 * never comes: when the daemon stops (a signal, or the connection torn
 * down with a release still queued in the kernel) files may still be open.
 */
static LIST_HEAD(, control_file) control_files =
	LIST_HEAD_INITIALIZER(control_files);
static pthread_mutex_t control_files_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Open files a user other than the mount's owner may hold at once: each
 * costs a buffer, and another user's opens must not grow the daemon
 * without bound (fuse-iosched(8), CONTROL FILES).
 */
#define CONTROL_OPEN_MAX 64

/*
 * The scheduler types that own a block of tunable inode numbers, by block.
 * Types are only added: a registered type stays until the daemon exits.
 * The lock is a leaf: nothing else is taken while it is held.
 */
static pthread_mutex_t control_types_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct elevator_type *control_types[CONTROL_TYPES_MAX];
					/* protected by control_types_lock */
static unsigned control_nr_types;	/* protected by control_types_lock */

/* Times of every control inode: when the daemon started, i.e. mounted. */
static struct timespec control_mount_time;

static void control_record_mount_time(void) __attribute__((constructor));

static void control_record_mount_time(void)
{
	clock_gettime(CLOCK_REALTIME, &control_mount_time);
}

/*
 * One rule for every value written: sysfs's for its scheduler attribute.
 * The value is what remains once white space (space, tab, newline,
 * vertical tab, form feed, carriage return) is stripped from both ends.
 */
static bool control_is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static void control_strip(const char **buf, size_t *len)
{
	while (*len > 0 && control_is_space(**buf))
		(*buf)++, (*len)--;
	while (*len > 0 && control_is_space((*buf)[*len - 1]))
		(*len)--;
}

static int control_scheduler_show(struct fs *fs,
				  const struct control_file *f,
				  char *buf, size_t size)
{
	return elv_show(fs->queue, buf, size);
}

static int control_scheduler_store(struct fs *fs,
				   const struct control_file *f,
				   const char *buf, size_t len, char *why,
				   size_t size)
{
	control_strip(&buf, &len);
	return elv_store(fs->queue, buf, len, why, size);
}

/*
 * Once stripped (control_strip), a decimal number: digits only (no sign,
 * no base prefix; leading zeros are fine, as for kstrtoul), at most 20 of
 * them and at most max, or -EINVAL.
 */
int control_parse_number(const char *buf, size_t len, uint64_t max,
			 uint64_t *value)
{
	uint64_t v = 0;
	size_t i;

	control_strip(&buf, &len);
	for (i = 0; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
		unsigned d = (unsigned)(buf[i] - '0');

		/* Also bounds the digits: leading zeros cannot run on. */
		if (i == 20 || d > max || v > (max - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (i == 0 || i < len)
		return -EINVAL;
	*value = v;
	return 0;
}

static int control_nr_requests_show(struct fs *fs,
				    const struct control_file *f,
				    char *buf, size_t size)
{
	int n;

	n = snprintf(buf, size, "%u\n", queue_nr_requests(fs->queue));
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return n;
}

static int control_nr_requests_store(struct fs *fs,
				     const struct control_file *f,
				     const char *buf, size_t len, char *why,
				     size_t size)
{
	uint64_t v;
	int error;

	error = control_parse_number(buf, len, NR_REQUESTS_MAX, &v);
	if (error == 0 && v < NR_REQUESTS_MIN)
		error = -EINVAL;
	if (error != 0) {
		snprintf(why, size, "not a number from %u to %u",
			 NR_REQUESTS_MIN, NR_REQUESTS_MAX);
		return error;
	}
	return queue_set_nr_requests(fs->queue, (unsigned)v);
}

static int control_stats_show(struct fs *fs,
			      const struct control_file *f,
			      char *buf, size_t size)
{
	struct stats st;
	int n, m;

	queue_get_stats(fs->queue, &st);
	memory_stats(&st.mem);
	n = stats_format(&st, buf, size);
	if (n < 0)
		return n;
	m = procwatch_show(buf + n, size - (size_t)n);
	return m < 0 ? m : n + m;
}

/* A read or write of one tunable, run under the queue lock. */
struct control_tunable_op {
	const struct control_file *f;
	bool set;
	int64_t value;
};

static int control_tunable_apply(struct elevator_queue *eq, void *arg)
{
	struct control_tunable_op *op = arg;

	/* Another scheduler now: its field of that name is not ours. */
	if (eq->type != op->f->type)
		return -ENOENT;
	if (op->set)
		return elv_tunable_set(eq, op->f->tunable, op->value);
	return elv_tunable_get(eq, op->f->tunable, &op->value);
}

/* The value, in the table's unit (ms for times, as sysfs shows them). */
static int control_tunable_show(struct fs *fs, const struct control_file *f,
				char *buf, size_t size)
{
	struct control_tunable_op op = { .f = f, .set = false };
	int error, n;

	error = queue_with_elevator(fs->queue, control_tunable_apply, &op);
	if (error != 0)
		return error;
	n = snprintf(buf, size, "%" PRId64 "\n", op.value);
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return n;
}

/*
 * Takes effect at once: schedulers read their tunables under the queue
 * lock each time they use them.  elv_tunable_set checks the table's range.
 */
static int control_tunable_store(struct fs *fs, const struct control_file *f,
				 const char *buf, size_t len, char *why,
				 size_t size)
{
	struct control_tunable_op op = { .f = f, .set = true };
	const struct elv_tunable *t = elv_tunable_find(f->type, f->tunable);
	uint64_t v;
	int error;

	error = control_parse_number(buf, len, INT64_MAX, &v);
	if (error != 0) {
		snprintf(why, size, "not a number");
		return error;
	}
	op.value = (int64_t)v;
	error = queue_with_elevator(fs->queue, control_tunable_apply, &op);
	if (error == -ENOENT)
		snprintf(why, size, "%s is no longer the scheduler",
			 f->type->name);
	else if (error != 0 && (op.value < t->min || op.value > t->max))
		snprintf(why, size, "out of range (%" PRId64 " to %" PRId64 ")",
			 t->min, t->max);
	else if (error != 0)
		snprintf(why, size, "refused by %s", f->type->name);
	if (error != 0)
		return error;
	log_info("scheduler %s: %s set to %" PRId64, f->type->name,
		 f->tunable, op.value);
	return 0;
}

/*
 * A tunable file whose scheduler was switched away fails every read, not
 * only those that regenerate the content, like a removed sysfs attribute.
 */
static int control_tunable_check(struct fs *fs, const struct control_file *f)
{
	struct control_tunable_op op = { .f = f, .set = false };

	return queue_with_elevator(fs->queue, control_tunable_apply, &op);
}

/* The mode, fixed at mount time. */
static int control_backing_io_show(struct fs *fs,
				   const struct control_file *f, char *buf,
				   size_t size)
{
	(void)f;
	return snprintf(buf, size, "%s\n", backing_io_name(fs->backing_io));
}

/* What lies beneath BACKING: is a kernel scheduler in the way too? */
static int control_backing_device_show(struct fs *fs,
				       const struct control_file *f,
				       char *buf, size_t size)
{
	(void)f;
	return backing_device_show(fs, buf, size);
}

/* The newest lines that fit, of the ring's LOG_RING_SIZE bytes. */
static int control_log_show(struct fs *fs, const struct control_file *f,
			    char *buf, size_t size)
{
	(void)fs;
	(void)f;
	return (int)log_ring_read(buf, size);
}

/* Which daemon serves this mount: kill -HUP "$(cat MNT/.control/pid)". */
static int control_pid_show(struct fs *fs, const struct control_file *f,
			    char *buf, size_t size)
{
	(void)fs;
	(void)f;
	return snprintf(buf, size, "%ld\n", (long)getpid());
}

static const struct control_node control_nodes[] = {
	{ CONTROL_NAME, CONTROL_INO_DIR, S_IFDIR | 0755, NULL, NULL },
	{ "scheduler", CONTROL_INO_SCHEDULER, S_IFREG | 0644,
	  control_scheduler_show, control_scheduler_store },
	{ "nr_requests", CONTROL_INO_NR_REQUESTS, S_IFREG | 0644,
	  control_nr_requests_show, control_nr_requests_store },
	{ "stats", CONTROL_INO_STATS, S_IFREG | 0444,
	  control_stats_show, NULL },
	{ "iosched", CONTROL_INO_IOSCHED, S_IFDIR | 0755, NULL, NULL },
	{ "backing_io", CONTROL_INO_BACKING_IO, S_IFREG | 0444,
	  control_backing_io_show, NULL },
	{ "backing_device", CONTROL_INO_BACKING_DEVICE, S_IFREG | 0444,
	  control_backing_device_show, NULL },
	{ "trace", CONTROL_INO_TRACE, S_IFREG | 0400, NULL, NULL },
	/* Others' file names and errors: the owner's (default_permissions). */
	{ "log", CONTROL_INO_LOG, S_IFREG | 0400, control_log_show, NULL },
	{ "pid", CONTROL_INO_PID, S_IFREG | 0444, control_pid_show, NULL },
};

/*
 * Every tunable file; the inode number says which (control_tunable).  A
 * read-only tunable's file has no store: opening it for writing fails
 * with EACCES, and its mode says so.
 */
static const struct control_node control_tunable_node = {
	NULL, CONTROL_INO_TUNABLE, S_IFREG | 0644,
	control_tunable_show, control_tunable_store
};
static const struct control_node control_tunable_ro_node = {
	NULL, CONTROL_INO_TUNABLE, S_IFREG | 0444,
	control_tunable_show, NULL
};

bool control_is_ino(fuse_ino_t ino)
{
	return (ino >= CONTROL_INO_DIR && ino < CONTROL_INO_END) ||
	       (ino >= CONTROL_INO_TUNABLE && ino < CONTROL_INO_TUNABLE_END);
}

static bool control_is_tunable(fuse_ino_t ino)
{
	return ino >= CONTROL_INO_TUNABLE && ino < CONTROL_INO_TUNABLE_END;
}

static const struct elv_tunable *control_tunable_owned(fuse_ino_t ino,
						     const struct elevator_type **owner);

static const struct control_node *control_node(fuse_ino_t ino)
{
	const struct elevator_type *owner;
	const struct elv_tunable *t;

	if (!control_is_tunable(ino))
		return &control_nodes[ino - CONTROL_INO_DIR];
	t = control_tunable_owned(ino, &owner);
	if (t != NULL && (t->flags & ELV_TUNABLE_READONLY))
		return &control_tunable_ro_node;
	return &control_tunable_node;
}

/* The inode number of type's tunable i, or 0 when there is none. */
static fuse_ino_t control_tunable_ino(const struct elevator_type *type,
				      size_t i)
{
	unsigned block;

	if (i >= CONTROL_TUNABLES_MAX)
		return 0;
	pthread_mutex_lock(&control_types_lock);
	for (block = 0; block < control_nr_types; block++)
		if (control_types[block] == type)
			break;
	if (block == control_nr_types) {
		if (block == CONTROL_TYPES_MAX) {
			pthread_mutex_unlock(&control_types_lock);
			return 0;
		}
		control_types[control_nr_types++] = type;
	}
	pthread_mutex_unlock(&control_types_lock);
	return CONTROL_INO_TUNABLE + block * CONTROL_TUNABLES_MAX + i;
}

/* Type's tunable i, if it is shown (NULL past the end). */
static const struct elv_tunable *
control_tunable_at(const struct elevator_type *type, size_t i)
{
	size_t n;

	if (type->tunables == NULL || i >= CONTROL_TUNABLES_MAX)
		return NULL;
	for (n = 0; n <= i; n++)
		if (type->tunables[n].name == NULL)
			return NULL;
	return &type->tunables[i];
}

/* The tunable a tunable inode stands for, and its scheduler, or NULL. */
static const struct elv_tunable *
control_tunable_owned(fuse_ino_t ino, const struct elevator_type **owner)
{
	unsigned block = (ino - CONTROL_INO_TUNABLE) / CONTROL_TUNABLES_MAX;
	size_t i = (ino - CONTROL_INO_TUNABLE) % CONTROL_TUNABLES_MAX;

	*owner = NULL;
	pthread_mutex_lock(&control_types_lock);
	if (block < control_nr_types)
		*owner = control_types[block];
	pthread_mutex_unlock(&control_types_lock);
	return *owner != NULL ? control_tunable_at(*owner, i) : NULL;
}

/*
 * The tunable a tunable inode stands for, if its scheduler is the active
 * one (type); NULL otherwise.
 */
static const struct elv_tunable *
control_tunable(fuse_ino_t ino, const struct elevator_type *type)
{
	const struct elevator_type *owner;
	const struct elv_tunable *t = control_tunable_owned(ino, &owner);

	return owner == type ? t : NULL;
}

static const struct control_node *control_find(const char *name)
{
	size_t i;

	/* Skip the directory itself: it is not inside .control. */
	for (i = 1; i < ARRAY_SIZE(control_nodes); i++) {
		if (strcmp(control_nodes[i].name, name) == 0)
			return &control_nodes[i];
	}
	return NULL;
}

/*
 * Only the user who mounted, or root, may change anything, or open the
 * trace: it shows every user's offsets and process names.
 */
static bool control_may_write(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct fs *fs = fs_of(req);

	return ctx->uid == 0 || ctx->uid == fs->owner_uid;
}

static int control_fill(struct fs *fs, struct control_file *f);

/*
 * The size of ino for the caller: the length of the content of its most
 * recent open of ino (generated now if not yet read: what its first read
 * returns), or CONTROL_BUF_SIZE when it has none open.
 */
static off_t control_size(fuse_req_t req, fuse_ino_t ino)
{
	pid_t pid = fuse_req_ctx(req)->pid;
	struct control_file *f;
	off_t size = CONTROL_BUF_SIZE;

	pthread_mutex_lock(&control_files_lock);
	LIST_FOREACH(f, &control_files, link) {
		if (f->pid != pid || f->ino != ino)
			continue;
		pthread_mutex_lock(&f->lock);
		/* A tunable switched away keeps its old content. */
		if (f->state == CONTROL_NEW && control_fill(fs_of(req), f) == 0)
			f->state = CONTROL_SIZED;
		size = (off_t)f->len;
		pthread_mutex_unlock(&f->lock);
		break;
	}
	pthread_mutex_unlock(&control_files_lock);
	return size;
}

static void control_fill_attr(struct fs *fs, fuse_ino_t ino, off_t size,
			      struct stat *st)
{
	const struct control_node *node = control_node(ino);

	memset(st, 0, sizeof *st);
	st->st_ino = CONTROL_ST_INO_BASE + ino;
	st->st_mode = node->mode;
	/* .control holds one directory, iosched: find(1) counts on it. */
	if (ino == CONTROL_INO_DIR)
		st->st_nlink = 3;
	else
		st->st_nlink = S_ISDIR(node->mode) ? 2 : 1;
	st->st_uid = fs->owner_uid;
	st->st_gid = fs->owner_gid;
	st->st_size = S_ISDIR(node->mode) ? CONTROL_BUF_SIZE : size;
	st->st_blocks = (st->st_size + 511) / 512;
	st->st_blksize = CONTROL_BUF_SIZE;
	st->st_atim = control_mount_time;
	st->st_mtim = control_mount_time;
	st->st_ctim = control_mount_time;
}

/*
 * Timeouts are zero so that a change (of the owner's view or of the
 * scheduler, hence of iosched/) is seen at once; these lookups are cheap.
 */
static void control_reply_entry(fuse_req_t req, fuse_ino_t ino)
{
	struct fuse_entry_param e;

	memset(&e, 0, sizeof e);
	e.ino = ino;
	e.attr_timeout = 0;
	e.entry_timeout = 0;
	control_fill_attr(fs_of(req), ino, CONTROL_BUF_SIZE, &e.attr);
	fuse_reply_entry(req, &e);
}

/* The inode of the active scheduler's tunable called name, or 0. */
static fuse_ino_t control_tunable_lookup(struct fs *fs, const char *name)
{
	const struct elevator_type *type = queue_elevator_type(fs->queue);
	const struct elv_tunable *t;
	size_t i;

	for (i = 0; (t = control_tunable_at(type, i)) != NULL; i++)
		if (strcmp(t->name, name) == 0)
			return control_tunable_ino(type, i);
	return 0;
}

bool control_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	const struct control_node *node;
	fuse_ino_t ino;

	if (parent == FUSE_ROOT_ID) {
		if (strcmp(name, CONTROL_NAME) != 0)
			return false;
		control_reply_entry(req, CONTROL_INO_DIR);
		return true;
	}
	if (!control_is_ino(parent))
		return false;
	if (parent == CONTROL_INO_IOSCHED) {
		ino = control_tunable_lookup(fs_of(req), name);
		if (ino == 0)
			fuse_reply_err(req, ENOENT);
		else
			control_reply_entry(req, ino);
		return true;
	}
	if (parent != CONTROL_INO_DIR) {
		fuse_reply_err(req, ENOTDIR);
		return true;
	}
	node = control_find(name);
	if (node == NULL)
		fuse_reply_err(req, ENOENT);
	else
		control_reply_entry(req, node->ino);
	return true;
}

/*
 * A tunable inode keeps its attributes after a switch: a descriptor open
 * on it can still be fstat'ed, while its reads and writes fail.  Only a
 * getattr (stat, fstat) fixes the size of the caller's open file: a
 * lookup or a truncate by the same process, for another open, must not.
 */
void control_getattr(fuse_req_t req, fuse_ino_t ino,
		     struct fuse_file_info *fi)
{
	struct stat st;

	control_fill_attr(fs_of(req), ino, control_size(req, ino), &st);
	fuse_reply_attr(req, &st, 0);
}

/*
 * Generate the content of f's file; 0 or -errno.  Called with f->lock
 * held, or before f is shared.
 */
static int control_fill(struct fs *fs, struct control_file *f)
{
	int n;

	n = f->node->show(fs, f, f->buf, f->size);
	if (n < 0)
		return n;
	f->len = (size_t)n < f->size ? (size_t)n : f->size;
	return 0;
}

/*
 * List an open file; one of a capped user only while that user holds
 * fewer than CONTROL_OPEN_MAX.  False if not listed.
 */
static bool control_listed(struct control_file *f, bool capped)
{
	struct control_file *g;
	int held = 0;

	pthread_mutex_lock(&control_files_lock);
	if (capped)
		LIST_FOREACH(g, &control_files, link)
			held += g->uid == f->uid;
	if (held < CONTROL_OPEN_MAX)
		LIST_INSERT_HEAD(&control_files, f, link);
	pthread_mutex_unlock(&control_files_lock);
	return held < CONTROL_OPEN_MAX;
}

/* Unlink and free an open file, at its release or when the daemon stops. */
static void control_file_free(struct control_file *f)
{
	pthread_mutex_lock(&control_files_lock);
	LIST_REMOVE(f, link);
	pthread_mutex_unlock(&control_files_lock);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

/*
 * Each open is a reader; the kernel must neither cache nor seek.  No
 * flush on close: a reader ended by the daemon stopping closes after the
 * session is gone, and close(2) must not fail then.  The mode (0400) has
 * the kernel refuse others first, but not a caller with CAP_DAC_OVERRIDE.
 */
static void control_open_trace(fuse_req_t req, struct fuse_file_info *fi)
{
	struct trace_reader *r;
	int err = control_may_write(req) ? trace_open(&r) : -EACCES;

	if (err != 0) {
		fuse_reply_err(req, -err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)r;
	fi->direct_io = 1;
	fi->nonseekable = 1;
	fi->keep_cache = 0;
	fi->noflush = 1;
	if (fuse_reply_open(req, fi) != 0)
		trace_release(r);
}

void control_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	const struct control_node *node = control_node(ino);
	struct control_file *f;
	int accmode = fi->flags & O_ACCMODE;
	size_t size;
	int error;

	if (S_ISDIR(node->mode)) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (accmode != O_RDONLY &&
	    (node->store == NULL || !control_may_write(req))) {
		fuse_reply_err(req, EACCES);
		return;
	}

	if (ino == CONTROL_INO_TRACE) {
		control_open_trace(req, fi);
		return;
	}
	/* The log holds the whole ring; a page or a few do for the others. */
	size = ino == CONTROL_INO_LOG ? LOG_RING_SIZE :
		ino == CONTROL_INO_STATS ? CONTROL_STATS_SIZE :
		CONTROL_SHOW_SIZE;
	f = calloc(1, sizeof *f + size);
	if (f == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	f->size = size;
	f->node = node;
	f->ino = ino;
	f->pid = fuse_req_ctx(req)->pid;
	f->uid = fuse_req_ctx(req)->uid;
	f->append = (fi->flags & O_APPEND) != 0;
	if (control_is_tunable(ino)) {
		const struct elv_tunable *t;

		f->type = queue_elevator_type(fs_of(req)->queue);
		t = control_tunable(ino, f->type);
		if (t == NULL) {
			/* Looked up under a scheduler since switched away. */
			free(f);
			fuse_reply_err(req, ENOENT);
			return;
		}
		f->tunable = t->name;
	}
	pthread_mutex_init(&f->lock, NULL);
	error = control_fill(fs_of(req), f);
	if (error != 0) {
		pthread_mutex_destroy(&f->lock);
		free(f);
		fuse_reply_err(req, -error);
		return;
	}

	fi->fh = (uint64_t)(uintptr_t)f;
	fi->direct_io = 1;
	fi->nonseekable = 0;
	fi->keep_cache = 0;
	if (!control_listed(f, !control_may_write(req))) {
		log_ratelimited(LOG_WARNING, ".control: uid %u has %d files "
				"open: EMFILE", (unsigned)f->uid,
				CONTROL_OPEN_MAX);
		pthread_mutex_destroy(&f->lock);
		free(f);
		fuse_reply_err(req, EMFILE);
		return;
	}
	if (fuse_reply_open(req, fi) != 0)
		control_file_free(f);	/* the opener went away: no release */
}

void control_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		  struct fuse_file_info *fi)
{
	struct control_file *f = (struct control_file *)(uintptr_t)fi->fh;
	char *copy = NULL;
	size_t n = 0;
	int error = 0;

	if (f == NULL || S_ISDIR(control_node(ino)->mode)) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (ino == CONTROL_INO_TRACE) {
		trace_read((struct trace_reader *)(uintptr_t)fi->fh, req, size);
		return;
	}
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}

	/* Copy out so that no lock is held while replying. */
	pthread_mutex_lock(&f->lock);
	/* Only the opener was shown the size (by a stat of its own). */
	if (off == 0 && (f->state != CONTROL_SIZED ||
			 f->pid != fuse_req_ctx(req)->pid))
		error = control_fill(fs_of(req), f);
	else if (f->tunable != NULL)
		error = control_tunable_check(fs_of(req), f);
	f->state = CONTROL_READ;
	if (error == 0 && (uint64_t)off < f->len) {
		n = f->len - (size_t)off;
		if (n > size)
			n = size;
		copy = malloc(n);
		if (copy == NULL)
			error = -ENOMEM;
		else
			memcpy(copy, f->buf + off, n);
	}
	pthread_mutex_unlock(&f->lock);

	if (error != 0)
		fuse_reply_err(req, -error);
	else
		fuse_reply_buf(req, copy, n);
	free(copy);
}

/*
 * A refused write is one line in the log: the file, what was written
 * (cut and escaped: it may be anything) and why.  Only the owner gets
 * this far, but a script may repeat a mistake at will.
 */
static void control_write_refused(const struct control_file *f,
				  const char *buf, size_t size, int error,
				  const char *why)
{
	char shown[LOG_VALUE_SIZE];

	/* echo's newline is not part of the value (of one held whole). */
	while (size > 0 && size <= CONTROL_BUF_SIZE && buf[size - 1] == '\n')
		size--;
	log_value(shown, sizeof shown, buf, size);
	log_ratelimited(LOG_WARNING, "%s/%s%s: refused \"%s\": %s",
			CONTROL_NAME, f->tunable != NULL ? "iosched/" : "",
			f->tunable != NULL ? f->tunable : f->node->name,
			shown, why[0] != '\0' ? why : strerror(-error));
}

/*
 * Writes to the control files are short commands: of a longer one, only
 * its start is copied, to be refused and logged.
 */
#define CONTROL_WRITE_MAX (64 * 1024)

/* A write of size bytes, of which buf holds at least the first
 * min(size, CONTROL_WRITE_MAX) (a longer one is refused, logged from its
 * start). */
static void control_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
			  size_t size, off_t off, struct fuse_file_info *fi)
{
	const struct control_node *node = control_node(ino);
	struct control_file *f = (struct control_file *)(uintptr_t)fi->fh;
	char why[128] = "";
	int error;

	if (f == NULL || node->store == NULL) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (!control_may_write(req)) {
		fuse_reply_err(req, EACCES);
		return;
	}
	/*
	 * One write is one value.  With O_APPEND the kernel places the write
	 * at the size it believes the file has; the offset means nothing.
	 */
	if (off != 0 && !f->append)
		snprintf(why, sizeof why, "written at offset %lld: a value is "
			 "written whole, at offset 0", (long long)off);
	else if (size > CONTROL_BUF_SIZE)
		snprintf(why, sizeof why, "%zu bytes: at most %d at once",
			 size, CONTROL_BUF_SIZE);
	if (why[0] != '\0') {
		control_write_refused(f, buf, size, -EINVAL, why);
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (size == 0) {
		fuse_reply_write(req, 0);
		return;
	}

	/* May block while the queue drains for a switch: we are a session
	 * thread, and other session threads keep serving. */
	error = node->store(fs_of(req), f, buf, size, why, sizeof why);
	/* What was read may be stale now. */
	pthread_mutex_lock(&f->lock);
	f->state = CONTROL_NEW;
	pthread_mutex_unlock(&f->lock);
	if (error < 0) {
		control_write_refused(f, buf, size, error, why);
		fuse_reply_err(req, -error);
	} else
		fuse_reply_write(req, size);
}

/* A write to a control file: gather it into memory for control_write. */
void control_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in,
		       off_t off, struct fuse_file_info *fi)
{
	size_t size = fuse_buf_size(in);
	size_t copy = size < CONTROL_WRITE_MAX ? size : CONTROL_WRITE_MAX;
	struct fuse_bufvec dst = FUSE_BUFVEC_INIT(copy);
	ssize_t res;
	char *buf;

	buf = malloc(copy + 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	dst.buf[0].mem = buf;
	res = fuse_buf_copy(&dst, in, 0);
	if (res < 0)
		fuse_reply_err(req, -res);
	else {
		buf[res] = '\0';	/* convenience for parsers */
		control_write(req, ino, buf,
			      (size_t)res == copy ? size : (size_t)res, off, fi);
	}
	free(buf);
}

/*
 * The kernel asks only for SEEK_DATA and SEEK_HOLE: the content is one
 * extent of data, with the hole at its end, as for a file of that size.
 */
void control_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		   struct fuse_file_info *fi)
{
	struct control_file *f = (struct control_file *)(uintptr_t)fi->fh;
	off_t len;

	if (f == NULL || ino == CONTROL_INO_TRACE ||
	    S_ISDIR(control_node(ino)->mode)) {
		fuse_reply_err(req, ESPIPE);
		return;
	}
	if (whence != SEEK_DATA && whence != SEEK_HOLE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	pthread_mutex_lock(&f->lock);
	len = (off_t)f->len;
	pthread_mutex_unlock(&f->lock);
	if (off < 0 || off >= len)
		fuse_reply_err(req, ENXIO);
	else
		fuse_reply_lseek(req, whence == SEEK_DATA ? off : len);
}

void control_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct control_file *f = (struct control_file *)(uintptr_t)fi->fh;

	if (f != NULL && ino == CONTROL_INO_TRACE) {
		trace_release((struct trace_reader *)(uintptr_t)fi->fh);
	} else if (f != NULL && !S_ISDIR(control_node(ino)->mode)) {
		control_file_free(f);
	}
	fuse_reply_err(req, 0);
}

void control_close_all(void)
{
	while (!LIST_EMPTY(&control_files))
		control_file_free(LIST_FIRST(&control_files));
}

void control_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != CONTROL_INO_DIR && ino != CONTROL_INO_IOSCHED) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	fi->fh = 0;
	fuse_reply_open(req, fi);
}

/*
 * Entry i of directory ino (".", "..", then the files): its name, its
 * attributes and, for real entries, its inode.  False past the end.  The
 * entries of iosched/ are those of type, the scheduler active when the
 * readdir began.
 */
static bool control_dirent(struct fs *fs, fuse_ino_t ino,
			   const struct elevator_type *type, size_t i,
			   const char **name, struct fuse_entry_param *e)
{
	memset(e, 0, sizeof *e);
	if (i == 0) {
		*name = ".";
		control_fill_attr(fs, ino, CONTROL_BUF_SIZE, &e->attr);
	} else if (i == 1 && ino == CONTROL_INO_IOSCHED) {
		*name = "..";
		control_fill_attr(fs, CONTROL_INO_DIR, CONTROL_BUF_SIZE,
				  &e->attr);
	} else if (i == 1) {
		struct stat rst;

		/* The root: its backing inode number. */
		*name = "..";
		if (fstat(fs->root_fd, &rst) == 0)
			e->attr.st_ino = rst.st_ino;
		e->attr.st_mode = S_IFDIR;
	} else if (ino == CONTROL_INO_IOSCHED) {
		const struct elv_tunable *t = control_tunable_at(type, i - 2);

		if (t == NULL)
			return false;
		e->ino = control_tunable_ino(type, i - 2);
		if (e->ino == 0)
			return false;
		*name = t->name;
		control_fill_attr(fs, e->ino, CONTROL_BUF_SIZE, &e->attr);
	} else {
		/* control_nodes[0] is .control itself. */
		if (i - 1 >= ARRAY_SIZE(control_nodes))
			return false;
		*name = control_nodes[i - 1].name;
		/*
		 * The kernel does not take a reference for "." and "..", so
		 * only real entries carry an inode.
		 */
		e->ino = control_nodes[i - 1].ino;
		control_fill_attr(fs, e->ino, CONTROL_BUF_SIZE, &e->attr);
	}
	return true;
}

/* Entry i has the directory offset i + 1, so any offset resumes there. */
static void control_list(fuse_req_t req, fuse_ino_t ino, size_t size,
			 off_t off, bool plus)
{
	struct fs *fs = fs_of(req);
	const struct elevator_type *type = NULL;
	char *buf;
	size_t used = 0;
	off_t i;

	if (ino != CONTROL_INO_DIR && ino != CONTROL_INO_IOSCHED) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	buf = malloc(size);
	if (buf == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (ino == CONTROL_INO_IOSCHED)
		type = queue_elevator_type(fs->queue);

	for (i = off; ; i++) {
		struct fuse_entry_param e;
		const char *name;
		size_t n;

		if (!control_dirent(fs, ino, type, (size_t)i, &name, &e))
			break;
		if (plus) {
			n = fuse_add_direntry_plus(req, buf + used,
						   size - used, name, &e,
						   i + 1);
		} else {
			n = fuse_add_direntry(req, buf + used, size - used,
					      name, &e.attr, i + 1);
		}
		if (n > size - used)
			break;
		used += n;
	}

	fuse_reply_buf(req, buf, used);
	free(buf);
}

void control_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	control_list(req, ino, size, off, false);
}

void control_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			 off_t off, struct fuse_file_info *fi)
{
	control_list(req, ino, size, off, true);
}

/*
 * Only the truncate of an open with O_TRUNC is accepted (as with sysfs,
 * `echo x > file` truncates first); the VFS may add time updates to it.
 * Everything else would change what cannot change.
 */
void control_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		     int to_set, struct fuse_file_info *fi)
{
	const struct control_node *node = control_node(ino);
	const int times = FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME |
			  FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW |
			  FUSE_SET_ATTR_CTIME;
	const int harmless = times | FUSE_SET_ATTR_FORCE |
			     FUSE_SET_ATTR_KILL_SUID |
			     FUSE_SET_ATTR_KILL_SGID |
			     FUSE_SET_ATTR_KILL_PRIV | FUSE_SET_ATTR_FILE |
			     FUSE_SET_ATTR_OPEN;
	struct stat st;

	if (!(to_set & FUSE_SET_ATTR_SIZE) || (to_set & ~harmless &
					       ~FUSE_SET_ATTR_SIZE)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (node->store == NULL) {
		fuse_reply_err(req, S_ISDIR(node->mode) ? EISDIR : EPERM);
		return;
	}
	if (!control_may_write(req)) {
		fuse_reply_err(req, EACCES);
		return;
	}
	if (attr->st_size != 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	control_fill_attr(fs_of(req), ino, CONTROL_BUF_SIZE, &st);
	fuse_reply_attr(req, &st, 0);
}
