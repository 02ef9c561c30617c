/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The inode table of the passthrough filesystem.
 *
 * A fuse_ino_t handed to the kernel is the address of a struct inode that
 * reaches the backing inode through an O_PATH descriptor (held for a
 * bounded set of inodes, see fs_fd.c).  Working from O_PATH descriptors
 * (and *at() calls relative to them) keeps every operation inside BACKING
 * whatever the kernel's idea of a path is, and survives renames done
 * behind our back while the descriptor is held.  Each inode also keeps
 * its parent and name, to be reached again once its descriptor is closed
 * when file handles cannot be used.  An inode lives as long as the kernel
 * remembers it: lookups count up, forgets count down, and the last forget
 * frees it.  The table maps (dev, ino) to inodes so that one backing inode
 * (hard links, lookups by two names) has one fuse_ino_t.
 *
 * This file also builds a FUSE entry from a name, for the other fs_*.c
 * files.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "daemon.h"

/*
 * The table is a tsearch(3) tree keyed by (dev, ino); it needs no link
 * field in struct inode.  The root inode is not in it: it is never
 * forgotten and has its own fuse_ino_t (FUSE_ROOT_ID).
 */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static void *table;			/* protected by table_lock */
static bool root_fd_ours;		/* we opened fs->root_fd */

static int fs_inode_cmp(const void *a, const void *b)
{
	const struct inode *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return 0;
}

static fuse_ino_t fs_inode_id(const struct fs *fs, const struct inode *inode)
{
	return inode == &fs->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)inode;
}

/*
 * A control inode is a small number, not a pointer: fs_ops.c routes them
 * to control.c, and one that got here is a routing bug, stopped before it
 * is dereferenced.
 */
struct inode *fs_inode(fuse_req_t req, fuse_ino_t ino)
{
	if (control_is_ino(ino)) {
		log_err("fs: control inode %" PRIu64 " reached the inode "
			"table", (uint64_t)ino);
		abort();
	}
	if (ino == FUSE_ROOT_ID)
		return &fs_of(req)->root;
	return (struct inode *)(uintptr_t)ino;
}

/*
 * For an operation that changes the backing file system: ino's inode, its
 * descriptor in *fd (to put with fs_fd_put), or NULL once the error is
 * replied (EROFS on a read-only mount).
 */
struct inode *fs_inode_writable(fuse_req_t req, fuse_ino_t ino, int *fd)
{
	struct inode *inode;

	if (fs_of(req)->readonly) {
		fuse_reply_err(req, EROFS);
		return NULL;
	}
	inode = fs_inode(req, ino);
	*fd = fs_fd_get(inode);
	if (*fd < 0) {
		fuse_reply_err(req, -*fd);
		return NULL;
	}
	return inode;
}

/* 0, or ENOMEM with nothing to tear down. */
static int fs_inode_setup(struct inode *inode, int fd, const struct stat *st)
{
	inode->smap = sectormap_new(st->st_dev, st->st_ino);
	if (inode->smap == NULL)
		return ENOMEM;
	inode->fd = fd;
	inode->fd_users = 0;
	inode->lru.tqe_prev = NULL;
	inode->dev = st->st_dev;
	inode->ino = st->st_ino;
	inode->type = st->st_mode & S_IFMT;
	pthread_mutex_init(&inode->lock, NULL);
	pthread_cond_init(&inode->writes_done, NULL);
	inode->writes_pending[0] = inode->writes_pending[1] = 0;
	inode->write_epoch = 0;
	inode->write_failed = false;
	pthread_mutex_init(&inode->fsync_lock, NULL);
	inode->dio_used = 0;
	pthread_rwlock_init(&inode->dio_lock, NULL);
	inode->writers = 0;
	return 0;
}

static void fs_inode_teardown(struct inode *inode)
{
	fs_fd_forget(inode);
	free(inode->name);
	sectormap_free(inode->smap);
	pthread_mutex_destroy(&inode->lock);
	pthread_cond_destroy(&inode->writes_done);
	pthread_mutex_destroy(&inode->fsync_lock);
	pthread_rwlock_destroy(&inode->dio_lock);
}

static void fs_inode_free(void *p)
{
	fs_inode_teardown(p);
	free(p);
}

int fs_inode_table_init(struct fs *fs)
{
	struct stat st;
	int fd;

	/* main.c may have opened BACKING already; fd 0 is stdin, not it. */
	if (fs->root_fd > 0)
		fd = fs->root_fd;
	else {
		fd = open(fs->cfg->backing, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd == -1) {
			log_err("%s: %s", fs->cfg->backing, strerror(errno));
			return -1;
		}
		root_fd_ours = true;
	}
	if (fstat(fd, &st) == -1) {
		log_err("%s: %s", fs->cfg->backing, strerror(errno));
		if (root_fd_ours)
			close(fd);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_err("%s: not a directory", fs->cfg->backing);
		if (root_fd_ours)
			close(fd);
		return -1;
	}
	if (fs_inode_setup(&fs->root, fd, &st) != 0) {
		log_err("%s: out of memory", fs->cfg->backing);
		if (root_fd_ours)
			close(fd);
		return -1;
	}
	fs->root_fd = fd;
	fs->root.nlookup = 2;	/* the kernel never forgets the root */
	fs_fd_init(fs);
	return 0;
}

void fs_inode_table_destroy(struct fs *fs)
{
	/* After unmount the kernel sends no more forgets: free the rest. */
	pthread_mutex_lock(&table_lock);
	tdestroy(table, fs_inode_free);
	table = NULL;
	pthread_mutex_unlock(&table_lock);
	fs_fd_exit();

	sectormap_free(fs->root.smap);
	fs->root.smap = NULL;
	pthread_mutex_destroy(&fs->root.lock);
	pthread_cond_destroy(&fs->root.writes_done);
	pthread_mutex_destroy(&fs->root.fsync_lock);
	pthread_rwlock_destroy(&fs->root.dio_lock);
	if (root_fd_ours) {
		close(fs->root_fd);
		fs->root_fd = -1;
		root_fd_ours = false;
	}
}

/*
 * Look name up in parent and count one more kernel reference to the
 * result.  Fills e for fuse_reply_entry/create/add_direntry_plus.
 * Returns 0 or -errno.  Symlinks are never followed.
 */
int fs_inode_entry(fuse_req_t req, struct inode *parent, const char *name,
		   struct fuse_entry_param *e)
{
	struct fs *fs = fs_of(req);
	struct inode key, *inode, **slot;
	int fd, pfd, err;

	memset(e, 0, sizeof(*e));
	pfd = fs_fd_get(parent);
	if (pfd < 0)
		return pfd;
	fd = openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	err = errno;
	fs_fd_put(parent);
	if (fd == -1)
		return -err;
	if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) {
		err = errno;
		close(fd);
		return -err;
	}

	key.dev = e->attr.st_dev;
	key.ino = e->attr.st_ino;
	pthread_mutex_lock(&table_lock);
	slot = tfind(&key, &table, fs_inode_cmp);
	if (slot) {
		inode = *slot;
		inode->nlookup++;
		pthread_mutex_unlock(&table_lock);
		close(fd);	/* the inode has its own, or reopens it */
	} else {
		inode = calloc(1, sizeof(*inode));
		if (inode) {
			inode->name = strdup(name);
			if (inode->name &&
			    fs_inode_setup(inode, -1, &e->attr) != 0) {
				free(inode->name);
				inode->name = NULL;
			}
		}
		if (!inode || !inode->name ||
		    !tsearch(inode, &table, fs_inode_cmp)) {
			pthread_mutex_unlock(&table_lock);
			if (inode && inode->name)
				fs_inode_free(inode);
			else
				free(inode);
			close(fd);
			return -ENOMEM;
		}
		inode->handle = fs_fd_handle(fd);
		inode->parent = parent;
		parent->nlookup++;	/* the root's count never matters */
		inode->nlookup = 1;
		fs_fd_adopt(inode, fd);
		pthread_mutex_unlock(&table_lock);
	}

	fs_inode_attr(inode, &e->attr);
	e->ino = (uintptr_t)inode;
	e->generation = 1;
	e->attr_timeout = fs->timeout;
	e->entry_timeout = fs->timeout;
	return 0;
}

/* Drop n references to inode; the last one frees it, and drops the one it
 * held on its parent. */
void fs_inode_unref(struct inode *inode, uint64_t n)
{
	struct inode *parent;

	for (;;) {
		parent = NULL;
		pthread_mutex_lock(&table_lock);
		if (inode->parent == NULL) {	/* the root stays */
			pthread_mutex_unlock(&table_lock);
			return;
		}
		if (n > inode->nlookup) {
			log_warn("forget of %" PRIu64 " references, inode has %"
				 PRIu64, n, inode->nlookup);
			n = inode->nlookup;
		}
		inode->nlookup -= n;
		if (inode->nlookup == 0) {
			tdelete(inode, &table, fs_inode_cmp);
			parent = inode->parent;
		}
		pthread_mutex_unlock(&table_lock);
		if (parent == NULL)
			return;
		fs_inode_free(inode);
		inode = parent;
		n = 1;
	}
}

/*
 * Reach inode through the nearest ancestor that still has a descriptor,
 * then down by the names each inode on the way was last known by, for
 * when its own descriptor was closed and no file handle serves.  Done in
 * a loop, not by reopening the parent first: a tree can be deeper than
 * any stack (one frame per level once crashed the daemon at 130,000
 * levels).  The ancestors on the way are held by a reference meanwhile,
 * since a rename may change their parents; each step must reach the
 * inode it names (ESTALE otherwise, as fs_fd_reopen checks the last) and
 * keeps its descriptor, so that the next reopen below starts there.
 */
int fs_inode_reopen_by_name(struct inode *inode)
{
	struct inode **chain = NULL, **grown, *top = NULL, *a;
	size_t n = 0, size = 0, i;
	char name[NAME_MAX + 1];
	struct stat st;
	int fd = -ESTALE, next;

	pthread_mutex_lock(&table_lock);
	for (a = inode->parent; a != NULL; a = a->parent) {
		fd = fs_fd_get_open(a);
		if (fd >= 0) {
			top = a;
			top->nlookup++;
			break;
		}
		fd = -ESTALE;	/* until an ancestor with one is found */
		if (n == size) {
			size = size != 0 ? 2 * size : 16;
			grown = realloc(chain, size * sizeof *chain);
			if (grown == NULL) {
				fd = -ENOMEM;
				break;
			}
			chain = grown;
		}
		chain[n++] = a;
		a->nlookup++;
	}
	pthread_mutex_unlock(&table_lock);

	/* chain[n - 1] is top's child, chain[0] inode's parent; a is the
	 * inode whose descriptor fd is, pinned. */
	for (a = top, i = n; fd >= 0 && i-- > 0; a = chain[i]) {
		pthread_mutex_lock(&table_lock);
		snprintf(name, sizeof name, "%s", chain[i]->name);
		pthread_mutex_unlock(&table_lock);
		next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
			      O_CLOEXEC);
		if (next == -1) {
			next = errno == ENOENT ? -ESTALE : -errno;
		} else if (fstat(next, &st) == -1 ||
			   st.st_dev != chain[i]->dev ||
			   st.st_ino != chain[i]->ino) {
			close(next);
			next = -ESTALE;
		} else {
			next = fs_fd_install(chain[i], next);
		}
		fs_fd_put(a);
		fd = next;
	}
	if (fd >= 0) {
		pthread_mutex_lock(&table_lock);
		snprintf(name, sizeof name, "%s", inode->name);
		pthread_mutex_unlock(&table_lock);
		next = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		fd = next >= 0 ? next : -errno;
		fs_fd_put(a);
	}
	if (top != NULL)
		fs_inode_unref(top, 1);
	for (i = 0; i < n; i++)
		fs_inode_unref(chain[i], 1);
	free(chain);
	return fd;
}

void fs_inode_renamed(struct inode *newparent, int newparent_fd,
		      const char *newname)
{
	struct inode key, **slot, *inode, *old = NULL;
	struct stat st;
	char *name;

	if (fstatat(newparent_fd, newname, &st, AT_SYMLINK_NOFOLLOW) == -1)
		return;
	name = strdup(newname);
	if (name == NULL)
		return;		/* the old name serves while it exists */
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	pthread_mutex_lock(&table_lock);
	slot = tfind(&key, &table, fs_inode_cmp);
	inode = slot != NULL ? *slot : NULL;
	if (inode != NULL && inode->parent != NULL) {
		old = inode->parent;
		newparent->nlookup++;
		inode->parent = newparent;
		free(inode->name);
		inode->name = name;
		name = NULL;
	}
	pthread_mutex_unlock(&table_lock);
	free(name);
	if (old != NULL)
		fs_inode_unref(old, 1);
}

void fs_inode_proc_path(int fd, char *buf)
{
	/*
	 * Not snprintf: this runs before every write (the kernel asks for
	 * security.capability first), and the format was a tenth of the
	 * instructions a small write costs the daemon.  fd is not negative.
	 */
	static const char prefix[] = "/proc/self/fd/";
	unsigned v = (unsigned)fd, n = 0;
	char digits[10];

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	memcpy(buf, prefix, sizeof(prefix) - 1);
	buf += sizeof(prefix) - 1;
	while (n > 0)
		*buf++ = digits[--n];
	*buf = '\0';
}

/*
 * Open the backing inode for I/O.  An O_PATH fd cannot be read or
 * written, and reopening it through /proc/self/fd reaches the very inode
 * it names without any path lookup inside BACKING.
 */
int fs_inode_reopen(struct inode *inode, int flags)
{
	char path[FS_PROC_PATH_MAX];
	int pfd, fd, err;

	pfd = fs_fd_get(inode);
	if (pfd < 0)
		return pfd;
	fs_inode_proc_path(pfd, path);
	fd = open(path, (flags & ~O_NOFOLLOW) | O_CLOEXEC);
	err = errno;
	fs_fd_put(inode);
	return fd == -1 ? -err : fd;
}

/*
 * With POSIX ACLs the kernel sends the mode unmasked, and the caller's
 * umask beside it (FUSE_CAP_DONT_MASK, fs_ops.c): as on a local
 * filesystem, the umask applies only where the directory has no default
 * ACL, which otherwise decides alone (the backing fs applies it, under
 * our own umask of 0).
 */
mode_t fs_inode_create_mode(fuse_req_t req, int dfd, mode_t mode)
{
	char path[FS_PROC_PATH_MAX];

	if (!fs_of(req)->dont_mask)
		return mode;
	fs_inode_proc_path(dfd, path);
	if (getxattr(path, "system.posix_acl_default", NULL, 0) > 0)
		return mode;
	return mode & ~fuse_req_ctx(req)->umask;
}

/*
 * Write accounting for fsync and flush ordering.  Writes count in the
 * current epoch; a waiter flips the epoch, so later writes count in the
 * other one and cannot starve it, and waits for the old epoch to drain.
 * fsync_lock serializes waiters, so the epoch a waiter flips to has been
 * drained by the waiter before it.
 */
unsigned fs_inode_write_begin(struct inode *inode)
{
	unsigned epoch;

	pthread_mutex_lock(&inode->lock);
	epoch = inode->write_epoch;
	inode->writes_pending[epoch]++;
	pthread_mutex_unlock(&inode->lock);
	return epoch;
}

void fs_inode_write_end(struct inode *inode, unsigned epoch)
{
	pthread_mutex_lock(&inode->lock);
	if (--inode->writes_pending[epoch] == 0)
		pthread_cond_broadcast(&inode->writes_done);
	pthread_mutex_unlock(&inode->lock);
}

/*
 * Open files that may write, per inode: only through one can the kernel's
 * page cache hold data that BACKING does not have yet.  Without
 * writeback_cache only a shared writable mapping dirties pages, and it
 * keeps its file open until munmap, which writes them back first
 * (fuse_vma_close); with it, write(2) does too, and close writes back
 * (fuse_flush) before the release that uncounts the file.
 */
void fs_inode_writers_add(struct fs *fs, struct inode *inode, int open_flags,
			  int n, bool attr_follows)
{
	int res;

	if ((open_flags & O_ACCMODE) == O_RDONLY)
		return;
	if (__atomic_fetch_add(&inode->writers, n, __ATOMIC_ACQ_REL) != 0 ||
	    n < 0)
		return;
	/*
	 * The first one: what the kernel has cached of the attributes was
	 * not counted so (fs_inode_attr), and writes do not make it ask
	 * again.  A reply to a getattr already under way is dropped: this
	 * invalidation is newer.  Unless the kernel has nothing cached: a
	 * create's reply carries the attributes, counted so, and when that
	 * reply is the kernel's only reference to the inode (a new file;
	 * not another name of one it knows) every later reply counts the
	 * writer too.  The kernel would refuse the invalidation anyway
	 * (ENOENT: it does not know the inode before the reply).
	 */
	if (attr_follows) {
		uint64_t refs;

		pthread_mutex_lock(&table_lock);
		refs = inode->nlookup;
		pthread_mutex_unlock(&table_lock);
		if (refs == 1)
			return;
	}
	res = fuse_lowlevel_notify_inval_inode(fs->se, fs_inode_id(fs, inode),
					       -1, 0);
	if (res < 0 && res != -ENOENT)
		log_debug("inode %llu: attribute invalidation: %s",
			  (unsigned long long)inode->ino, strerror(-res));
}

bool fs_inode_may_be_dirty(struct inode *inode)
{
	return __atomic_load_n(&inode->writers, __ATOMIC_ACQUIRE) > 0;
}

/*
 * A file that may have dirty pages counts as allocated all along, so that
 * st_blocks never makes that data look like a hole: tar --sparse stores a
 * file with st_blocks 0 as all hole, and cp and tar look for holes with
 * SEEK_DATA once st_blocks is below the size (see fs_file_lseek).  One
 * block more than the size: under writeback_cache the kernel's size may
 * be beyond the backing file's, which may still be 0.
 */
void fs_inode_attr(struct inode *inode, struct stat *st)
{
	blkcnt_t blocks;

	if (!S_ISREG(st->st_mode) || !fs_inode_may_be_dirty(inode))
		return;
	blocks = st->st_size / 512 + 1;
	if (st->st_blocks < blocks)
		st->st_blocks = blocks;
}

/*
 * A write the kernel made from its page cache failed, and the kernel has
 * been answered with the error (io_spread).  Reporting it is the
 * kernel's business: it keeps the error per open file (mapping_set_error
 * when its write is answered, the errseq of the FUSE inode's mapping), so
 * the next fsync(2) of each descriptor open at the time fails with it
 * once, and close(2) does if no fsync did.  We must not report it again:
 * the kernel answers that fsync itself, without asking us, and a later
 * FUSE_FSYNC failing with the kept error would fail a descriptor a second
 * time, or fail one opened after the error was reported.
 *
 * What is left to us is the size.  Under the writeback cache the kernel
 * trusts its own file size and never takes ours, so a file cut short by
 * the error would stay longer on the mount than in BACKING.  The backing
 * file is extended to the end of the failed write instead (a hole, which
 * costs no space): the two agree, and the lost range reads as zeros once
 * the kernel's pages are dropped, at the next fsync or flush that reaches
 * us (fs_inode_wait_writes_drop).  The attributes are invalidated now, so
 * that times and blocks are fetched again; only the attributes (offset
 * -1), since dropping pages here would wait for the writeback being
 * answered.
 */
void fs_inode_write_failed(struct fs *fs, struct inode *inode, int fd,
			   uint64_t end, int err)
{
	struct stat st;
	bool first;
	int res;

	/*
	 * Under the inode lock: two workers failing at once must not
	 * interleave their fstat and ftruncate, or the one with the older
	 * size would shrink the file the other had just extended.
	 */
	pthread_mutex_lock(&inode->lock);
	first = !inode->write_failed;
	inode->write_failed = true;
	if (fstat(fd, &st) == 0 && (uint64_t)st.st_size < end &&
	    ftruncate(fd, (off_t)end) == -1)
		log_ratelimited(LOG_WARNING,
				"inode %llu: cannot keep size %llu: %s",
				(unsigned long long)inode->ino,
				(unsigned long long)end, strerror(errno));
	pthread_mutex_unlock(&inode->lock);
	/*
	 * Once until the pages are dropped, not once per failed write; and
	 * a disk that fails every file's writes is a few lines, not one per
	 * file.
	 */
	if (first)
		log_ratelimited(LOG_WARNING,
				"writeback to inode %llu failed: %s",
				(unsigned long long)inode->ino, strerror(err));
	res = fuse_lowlevel_notify_inval_inode(fs->se, fs_inode_id(fs, inode),
					       -1, 0);
	if (res < 0 && res != -ENOENT)
		log_debug("inode %llu: attribute invalidation: %s",
			  (unsigned long long)inode->ino, strerror(-res));
}

/*
 * After a failed writeback the kernel's cached pages of the file still
 * hold what never reached BACKING; drop them, so that reads show what the
 * file holds.  The file's earlier writes, that writeback among them, have
 * ended by now.
 */
void fs_inode_wait_writes_drop(struct fs *fs, struct inode *inode)
{
	bool failed;
	int res;

	fs_inode_wait_writes(inode);
	pthread_mutex_lock(&inode->lock);
	failed = inode->write_failed;
	inode->write_failed = false;
	pthread_mutex_unlock(&inode->lock);
	if (!failed)
		return;
	res = fuse_lowlevel_notify_inval_inode(fs->se, fs_inode_id(fs, inode),
					       0, 0);
	if (res < 0 && res != -ENOENT)
		log_debug("inode %llu: page invalidation: %s",
			  (unsigned long long)inode->ino, strerror(-res));
}

void fs_inode_wait_writes(struct inode *inode)
{
	unsigned old;

	pthread_mutex_lock(&inode->fsync_lock);
	pthread_mutex_lock(&inode->lock);
	old = inode->write_epoch;
	inode->write_epoch = old ^ 1;
	while (inode->writes_pending[old] != 0)
		pthread_cond_wait(&inode->writes_done, &inode->lock);
	pthread_mutex_unlock(&inode->lock);
	pthread_mutex_unlock(&inode->fsync_lock);
}

/* ------------------------------------------------------------------ */
/* lookup and forget                                                    */

void fs_inode_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int err;

	err = fs_inode_entry(req, fs_inode(req, parent), name, &e);
	if (err) {
		fuse_reply_err(req, -err);
		return;
	}
	/* An interrupted lookup never reached the kernel: undo the count. */
	if (fuse_reply_entry(req, &e) == -ENOENT)
		fs_inode_unref((struct inode *)(uintptr_t)e.ino, 1);
}

static void fs_inode_forget_one(fuse_req_t req, fuse_ino_t ino, uint64_t n)
{
	if (ino == FUSE_ROOT_ID)
		return;
	fs_inode_unref(fs_inode(req, ino), n);
}

void fs_inode_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	fs_inode_forget_one(req, ino, nlookup);
	fuse_reply_none(req);
}

void fs_inode_forget_multi(fuse_req_t req, size_t count,
			   struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		fs_inode_forget_one(req, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}
