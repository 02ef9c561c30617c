/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's interfaces (daemon/), grouped by the file that defines
 * them: the filesystem, the control files, the trace, the dispatch pool,
 * timers and metrics.  On top of libcore's (fuse-iosched.h).
 *
 * Errors: a FUSE operation (fs_*, control_* taking a fuse_req_t) answers
 * its request itself, with an errno or a reply, and returns nothing.  Any
 * other function returns 0 (or a descriptor, a count, a length) or a
 * negative errno; one that makes a pointer returns NULL (errno set).  As
 * in the core, one that tells the user why (metrics_listen) returns -1
 * with the message in the err buffer it is given.  (Inside a file, a
 * helper of FUSE operations may hand back the positive errno to answer
 * with, named err; it does not cross a file.)
 *
 * Lock order (take from left to right, never the other way):
 *   elevator switch mutex  ->  inode table mutex  ->  inode lock
 *   ->  queue lock  ->  libevent's internal base lock
 * and the disk model's head lock  ->  queue lock (diskmodel_next),
 * and queue lock  ->  cgroup lock (cgroup_path, cgroup_weight; a leaf),
 * and queue lock  ->  trace lock (trace_rq), libfuse's request lock
 * ->  trace lock (a FUSE interrupt of a parked trace read),
 * and the inode table mutex  ->  the fd lock (fs_fd.c; a leaf),
 * and control.c's files lock  ->  an open file's lock  ->  queue lock,
 * and the process watch's lock (procwatch.c) is a leaf, held alone,
 * and any lock  ->  the log lock (log.c; a leaf).
 * The queue lock is never held while calling into FUSE or doing I/O.
 * An inode's dio_lock is taken with no other lock held, around backing
 * I/O only (perform_io, dio.c).
 */
#ifndef FUSE_IOSCHED_DAEMON_H
#define FUSE_IOSCHED_DAEMON_H

/*
 * 3.12: the API whose fuse_session_loop_mt() takes the opaque loop
 * configuration made by fuse_loop_cfg_create().  Under an older version
 * the same call reads that object as the 3.2 struct and finds a
 * max_idle_threads of 0: a session thread created and destroyed for
 * every few requests.
 */
#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>
#include <stdatomic.h>
#include <sys/queue.h>
#include <sys/uio.h>

#include "fuse-iosched.h"

/* liblog.c: libfuse's and libevent's messages, through log.c */
/* Before mounting: libfuse's errors on stderr as one line, ours. */
void liblog_start(void);
/* Whether libfuse reported an error since liblog_start. */
bool liblog_fuse_failed(void);
void liblog_open(void);

/* timer.c: the libevent loop thread serving wake-ups */
struct timer;
typedef void (*timer_fn)(void *arg);
struct timer *timer_start(timer_fn fn, void *arg);
void timer_arm(struct timer *t, uint64_t at_ns);
void timer_stop(struct timer *t);
/* When signal signo arrives, work(arg) in a thread of its own, then
 * done(arg) on the loop thread; one run at a time.  0 or -errno. */
int timer_on_signal(struct timer *t, int signo, timer_fn work, timer_fn done,
		    void *arg);
/*
 * A second timer, for the daemon's own deferred work (request.c's trim):
 * timer_set_deferred, before the session starts, says what to run (0 or
 * -errno); timer_defer runs it once on the loop thread, ms from now,
 * replacing an earlier arming.
 */
int timer_set_deferred(struct timer *t, timer_fn fn, void *arg);
void timer_defer(struct timer *t, unsigned ms);
/* The loop's libevent base, for what serves on it (metrics.c). */
struct event_base *timer_base(struct timer *t);
/* Run fn(arg) in timer_stop, after the loop ended, before the base goes;
 * 0 or -ENOMEM. */
int timer_on_stop(struct timer *t, timer_fn fn, void *arg);

/*
 * A session thread's memo of the last pid a table of the request path
 * answered for (procwatch.c's watch, cgroup.c's groups), each kept
 * __thread beside the answer: a process's stream of requests, which one
 * thread mostly serves, then costs no lock.  The table bumps its
 * generation whenever an answer it gave may have gone stale; a memo
 * holds while the generation read before the lookup that filled it is
 * still the table's, so an answer that went stale during the lookup is
 * not kept.  pid must be above 0 (an empty memo has pid 0).
 */
struct pidmemo {
	pid_t pid;
	unsigned gen;
};

/* Before the lookup: the generation to check and to keep with its answer. */
static inline unsigned pidmemo_gen(atomic_uint *gen)
{
	return atomic_load_explicit(gen, memory_order_acquire);
}

static inline bool pidmemo_hit(const struct pidmemo *m, pid_t pid,
			       unsigned gen)
{
	return m->pid == pid && m->gen == gen;
}

static inline void pidmemo_set(struct pidmemo *m, pid_t pid, unsigned gen)
{
	m->pid = pid;
	m->gen = gen;
}

/* An answer the table gave may be stale: every thread's memo drops. */
static inline void pidmemo_bump(atomic_uint *gen)
{
	atomic_fetch_add_explicit(gen, 1, memory_order_release);
}

/* procwatch.c: thread exits, told to the queue's scheduler */
struct queue;
#define PROCWATCH_MAX 1024	/* threads watched at most */
/*
 * Threads watched at once under the descriptor limit nofile: an eighth
 * of it, at least 16, at most PROCWATCH_MAX; fs_fd.c leaves them room.
 */
static inline unsigned procwatch_limit(unsigned long long nofile)
{
	unsigned long long n = nofile / 8;

	return n < 16 ? 16 : n > PROCWATCH_MAX ? PROCWATCH_MAX : (unsigned)n;
}
/* Watch the threads behind requests on t's loop; 0 or -ENOMEM. */
int procwatch_start(struct timer *t, struct queue *q);
/* The read and write paths: pid sent a request (0: the kernel). */
void procwatch_note(pid_t pid);
/* .control/stats's "procwatch" line into buf; its length or -ENOSPC. */
int procwatch_show(char *buf, size_t size);

/* metrics.c: the Prometheus endpoint, on the timer's loop */
struct queue;
/* Bind and listen, before mounting: the socket, or -1 and err set. */
int metrics_listen(const char *addr, char *err, size_t size);
/*
 * Serve /metrics on fd (taken over, closed on failure), labelled with the
 * mount's paths; 0 or -errno.
 */
int metrics_start(struct timer *t, int fd, struct queue *q,
		  const char *mountpoint, const char *backing);

/* sectormap.c: file offset -> device sector */
struct sectormap;
struct sectormap *sectormap_new(dev_t dev, ino_t ino);
void sectormap_free(struct sectormap *m);
/* The sector of byte off of the file open as fd, for len bytes; never fails. */
uint64_t sectormap_lookup(struct sectormap *m, int fd, uint64_t off,
			  uint64_t len);
/* What the estimates of unplaced data know of the backing device. */
struct sectormap_layout {
	uint64_t device_bytes;	/* estimates stay below; 0: unknown */
	/* An ext2/3/4 superblock's, for the allocator's goal; 0: unknown */
	uint32_t block_size;
	uint32_t first_data_block;
	uint32_t blocks_per_group;
	uint32_t inodes_per_group;
	uint32_t flex_size;	/* block groups per flex group, 1 without */
};
/* Set before the first lookup; not for a filesystem without FIEMAP. */
void sectormap_set_layout(const struct sectormap_layout *l);
/* The layout of [off, off + len) may have changed; len 0 means "to end". */
void sectormap_invalidate(struct sectormap *m, uint64_t off, uint64_t len);

/* backing.c: direct I/O of a backing descriptor, the device */
struct fs;
/*
 * Make the backing descriptor fd, just opened for open_flags, direct if
 * the mode says so.  Returns the alignment its I/O needs, or 0 if it stays
 * buffered (the mode, or a backing fs without O_DIRECT: logged once per
 * mount, never an error).
 */
unsigned backing_open(struct fs *fs, int fd, int open_flags);
/* .control/backing_device's content; length or -errno. */
int backing_device_show(struct fs *fs, char *buf, size_t size);
/* Fill in what is known of the device beneath root_fd (l zeroed first). */
void backing_device_layout(int root_fd, struct sectormap_layout *l);

/* The whole disk beneath root_fd (a partition's disk), where the
 * kernel keeps control groups' limits; 0 when not on a block device. */
dev_t backing_disk(int root_fd);

/*
 * cgroup.c: the caller's control group, its limits and its weight.  At
 * most CGROUP_MAX groups (the root among them) are known at a time.
 */
#define CGROUP_MAX 1024
/* Before the threads start: groups on or off, the sections, the disk. */
void cgroup_init(const struct config *cfg, dev_t disk);
void cgroup_exit(void);
/* The configuration's group sections, again (SIGHUP). */
void cgroup_config(const struct config *cfg);
/* The group of pid's requests: 0 (the root) for pid 0, a process gone,
 * or groups=off. */
uint64_t cgroup_of_pid(pid_t pid);
/* pid has exited: forget its group. */
void cgroup_forget_pid(pid_t pid);
/* queue_params' cgroup_path and cgroup_weight (arg unused). */
int cgroup_path(void *arg, uint64_t id, char *buf, size_t len);
uint32_t cgroup_weight(void *arg, uint64_t id);
/* throttle.c's limits function (arg unused). */
int cgroup_limits(void *arg, uint64_t id, struct throttle_limits *lim);

/* fs_inode.c: the inode table; a fuse_ino_t is a struct inode pointer */
struct inode {
	/* O_PATH descriptor of the backing inode, held for a bounded set of
	 * inodes (fs_fd.c); use it only between fs_fd_get and fs_fd_put. */
	int fd;			/* fd lock: -1 while closed */
	unsigned fd_users;	/* fd lock: uses in progress pin fd */
	/* fd lock: on fs_fd.c's LRU while its fd may be closed; tqe_prev
	 * NULL while not */
	TAILQ_ENTRY(inode) lru;
	struct file_handle *handle;	/* immutable; NULL: reach by name */
	struct inode *parent;	/* table mutex; NULL for the root */
	char *name;		/* table mutex: its name in parent */
	dev_t dev;		/* immutable */
	ino_t ino;		/* immutable */
	mode_t type;		/* S_IFMT bits, immutable */
	uint64_t nlookup;	/* table mutex: the kernel's lookups, and one
				 * per inode that has this one as parent */
	struct sectormap *smap;	/* its own lock */

	pthread_mutex_t lock;	/* protects the write accounting below */
	pthread_cond_t writes_done;
	unsigned writes_pending[2];	/* per epoch; see fs_inode_wait_writes */
	unsigned write_epoch;
	pthread_mutex_t fsync_lock;	/* serializes write waits */
	bool write_failed;	/* inode lock: a writeback write failed; its
				 * pages are dropped at fsync or flush */
	/*
	 * Once a direct descriptor of the inode has been opened (dio_used,
	 * set once, read without a lock), every write to it holds dio_lock:
	 * shared, or exclusive for a read-modify-write of a partial block
	 * (dio.c), so that no write lands between its read and its write.
	 */
	int dio_used;
	pthread_rwlock_t dio_lock;
	int writers;		/* atomic: open files with write access */
};

/* struct fs is the FUSE userdata; fuse_req_userdata(req) returns it. */
struct fs {
	struct config *cfg;
	int root_fd;		/* O_PATH fd of BACKING */
	struct inode root;	/* FUSE_ROOT_ID */
	uid_t owner_uid;	/* who mounted: may write .control */
	gid_t owner_gid;
	bool as_root;		/* act with callers' credentials on create */
	gid_t egid;		/* ours, fixed: a caller with it needs no switch */
	bool dont_mask;		/* the kernel leaves the umask to us */
	/* FUSE_HANDLE_KILLPRIV_V2 negotiated (killpriv.c): set by the
	 * thread that answers INIT, read by the others. */
	atomic_bool killpriv_v2;
	struct queue *queue;
	struct dispatch *dispatch;
	struct timer *timer;
	struct fuse_session *se;
	double timeout;		/* attribute and entry cache seconds */
	enum backing_io backing_io;	/* from cfg, immutable */
	int dio_refused;	/* O_DIRECT refusal logged; atomic */
	/*
	 * -o ro, immutable.  The kernel mount stays read-write so that
	 * .control can be written; every change to the mirrored tree is
	 * refused here, with EROFS, before it reaches BACKING.
	 */
	bool readonly;
};

static inline struct fs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

struct inode *fs_inode(fuse_req_t req, fuse_ino_t ino);
struct inode *fs_inode_writable(fuse_req_t req, fuse_ino_t ino, int *fd);
int fs_inode_table_init(struct fs *fs);
void fs_inode_table_destroy(struct fs *fs);
/* A write to inode was queued (returns the epoch to pass back) / done. */
unsigned fs_inode_write_begin(struct inode *inode);
void fs_inode_write_end(struct inode *inode, unsigned epoch);
/* Wait until every write begun before this call has ended. */
void fs_inode_wait_writes(struct inode *inode);
/* A writeback write of the backing fd up to byte end failed with err
 * (the kernel reports it): keep the size the kernel counts. */
void fs_inode_write_failed(struct fs *fs, struct inode *inode, int fd,
			   uint64_t end, int err);
/* fs_inode_wait_writes, then drop the kernel's pages if a writeback
 * failed since the last call. */
void fs_inode_wait_writes_drop(struct fs *fs, struct inode *inode);
/* A file of inode opened with open_flags was opened (n 1) or released
 * (n -1): count it if it may write.  attr_follows: the caller's reply
 * carries the inode's attributes, made after this call (a create's). */
void fs_inode_writers_add(struct fs *fs, struct inode *inode, int open_flags,
			  int n, bool attr_follows);
/* May the kernel's page cache hold data of inode that BACKING lacks? */
bool fs_inode_may_be_dirty(struct inode *inode);
/* Make st, the backing file's, what the mount shows for inode. */
void fs_inode_attr(struct inode *inode, struct stat *st);

/* fs_fd.c: inode descriptors, at most a number the limit allows */
/* Raise RLIMIT_NOFILE and size the set; after fs->root_fd is open. */
void fs_fd_init(struct fs *fs);
/* Log the limits and how inodes are reached again. */
void fs_fd_report(void);
void fs_fd_exit(void);
/* inode's descriptor, pinned until fs_fd_put; or -errno (ESTALE: gone). */
int fs_fd_get(struct inode *inode);
/* inode's descriptor, pinned, if it has one open; else -1 (never opens). */
int fs_fd_get_open(struct inode *inode);
/* Give inode (not the root) fd, reopened and checked to be its backing
 * inode; the descriptor it has, pinned (fd, or another thread's). */
int fs_fd_install(struct inode *inode, int fd);
void fs_fd_put(struct inode *inode);
/* A new inode's first descriptor; call under the inode table mutex. */
void fs_fd_adopt(struct inode *inode, int fd);
/* A file handle of fd's inode, or NULL when it cannot be reopened so. */
struct file_handle *fs_fd_handle(int fd);
/* The inode is being freed: close and drop what fs_fd.c holds. */
void fs_fd_forget(struct inode *inode);

/* cred.c: the calling thread acts with a FUSE caller's credentials */
struct cred {			/* a thread's credentials, saved to restore */
	bool switched;
	int nr_groups;		/* the thread's own supplementary groups */
	gid_t *groups;
};
/* With the daemon as root, take req's caller's fsuid, fsgid and groups
 * (saving the thread's own in saved); else nothing.  0 or -errno. */
int cred_enter(fuse_req_t req, struct cred *saved);
/* Give the thread back what cred_enter saved; errno is kept. */
void cred_leave(struct cred *saved);
/* Has req's caller the capability cap (CAP_*)?  Reads /proc. */
bool cred_caller_capable(fuse_req_t req, int cap);

/* killpriv.c: setuid and setgid bits, cleared by the daemon (v2) */
/* Read and write the session's /dev/fuse through killpriv.c's io, which
 * asks for FUSE_HANDLE_KILLPRIV_V2 at INIT; after fuse_session_mount.
 * 0 or -errno. */
int killpriv_setup(struct fuse_session *se);
/* A request of n bytes at buf, read by the calling thread, which will
 * process it (the write's FUSE_WRITE_KILL_SUIDGID; INIT's offers). */
void killpriv_note(const void *buf, size_t n);
/* The mode st (the backing file's) keeps after a change by req's caller
 * that drops privileges: without setuid, and setgid as the VFS drops it.
 * ask: find out whether the caller has CAP_FSETID (then nothing drops);
 * else the kernel said it has not. */
mode_t killpriv_mode(fuse_req_t req, const struct stat *st, bool ask);
/* With v2 negotiated, drop the bits of ino's open file fd as
 * killpriv_mode says.  0 or -errno. */
int killpriv_fd(fuse_req_t req, fuse_ino_t ino, int fd, bool ask);
/* The same for the write request (off, size, fi) being handled: as the
 * kernel's FUSE_WRITE_KILL_SUIDGID says, or by asking. */
int killpriv_write(fuse_req_t req, fuse_ino_t ino, int fd, off_t off,
		   size_t size, const struct fuse_file_info *fi);

/* fs_*.c: shared by the filesystem files */
#define FS_PROC_PATH_MAX 32	/* "/proc/self/fd/" and an int */
/* fs_inode.c */
int fs_inode_entry(fuse_req_t req, struct inode *parent, const char *name,
		   struct fuse_entry_param *e);
void fs_inode_unref(struct inode *inode, uint64_t n);
/* "/proc/self/fd/N" of a descriptor from fs_fd_get. */
void fs_inode_proc_path(int fd, char *buf);
/* Open inode's backing inode with flags; fd or -errno. */
int fs_inode_reopen(struct inode *inode, int flags);
/* Open inode through its nearest ancestor with a descriptor and the
 * names below it; fd or -errno. */
int fs_inode_reopen_by_name(struct inode *inode);
/* parent/name was renamed to newparent/newname: follow it. */
void fs_inode_renamed(struct inode *newparent, int newparent_fd,
		      const char *newname);
/* The mode to create a child of the directory open as dfd (O_PATH) with,
 * from the mode the kernel sent. */
mode_t fs_inode_create_mode(fuse_req_t req, int dfd, mode_t mode);
void fs_inode_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void fs_inode_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void fs_inode_forget_multi(fuse_req_t req, size_t count,
			   struct fuse_forget_data *forgets);
/* fs_dir.c */
void fs_dir_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		  mode_t mode, dev_t rdev);
void fs_dir_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		  mode_t mode);
void fs_dir_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		    const char *name);
void fs_dir_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent,
		 const char *name);
void fs_dir_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void fs_dir_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void fs_dir_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		   fuse_ino_t newparent, const char *newname,
		   unsigned int flags);
void fs_dir_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_dir_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void fs_dir_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			off_t off, struct fuse_file_info *fi);
void fs_dir_releasedir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi);
/* After the session has ended: close the directories still open. */
void fs_dir_close_all(void);
void fs_dir_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi);
/*
 * fs_file.c.  A file's fi->fh holds its backing descriptor in the low 32
 * bits and, above them, the alignment its direct I/O needs (0: buffered):
 * the read and write paths learn both without a lookup or a syscall.
 */
static inline int fs_file_fd(uint64_t fh)
{
	return (int)(uint32_t)fh;
}
static inline unsigned fs_file_dio_align(uint64_t fh)
{
	return (unsigned)(fh >> 32);
}
void fs_file_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_file_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		    mode_t mode, struct fuse_file_info *fi);
void fs_file_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		  struct fuse_file_info *fi);
void fs_file_write_buf(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_bufvec *in, off_t off,
		       struct fuse_file_info *fi);
void fs_file_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_file_release(fuse_req_t req, fuse_ino_t ino,
		     struct fuse_file_info *fi);
void fs_file_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		   struct fuse_file_info *fi);
void fs_file_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off,
		       off_t len, struct fuse_file_info *fi);
void fs_file_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		   struct fuse_file_info *fi);
void fs_file_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			     struct fuse_file_info *fi_in, fuse_ino_t ino_out,
			     off_t off_out, struct fuse_file_info *fi_out,
			     size_t len, int flags);
/* fs_attr.c */
void fs_attr_getattr(fuse_req_t req, fuse_ino_t ino,
		     struct fuse_file_info *fi);
void fs_attr_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		     int to_set, struct fuse_file_info *fi);
void fs_attr_readlink(fuse_req_t req, fuse_ino_t ino);
void fs_attr_statfs(fuse_req_t req, fuse_ino_t ino);
/* fs_xattr.c */
void fs_xattr_set(fuse_req_t req, fuse_ino_t ino, const char *name,
		  const char *value, size_t size, int flags);
void fs_xattr_get(fuse_req_t req, fuse_ino_t ino, const char *name,
		  size_t size);
void fs_xattr_list(fuse_req_t req, fuse_ino_t ino, size_t size);
void fs_xattr_remove(fuse_req_t req, fuse_ino_t ino, const char *name);

/* fs_ops.c: the lowlevel operations table */
extern const struct fuse_lowlevel_ops fs_ops;

/* control.c: the virtual .control directory */
#define CONTROL_NAME ".control"
bool control_is_ino(fuse_ino_t ino);
/* Handles lookup of ".control" in the root and of any name inside it. */
bool control_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
/* Every op below replies itself. */
void control_getattr(fuse_req_t req, fuse_ino_t ino,
		     struct fuse_file_info *fi);
void control_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void control_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		  struct fuse_file_info *fi);
/* A write; one over 64 KiB is refused, logged from its start. */
void control_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in,
		       off_t off, struct fuse_file_info *fi);
void control_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		   struct fuse_file_info *fi);
void control_release(fuse_req_t req, fuse_ino_t ino,
		     struct fuse_file_info *fi);
void control_opendir(fuse_req_t req, fuse_ino_t ino,
		     struct fuse_file_info *fi);
void control_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi);
void control_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			 off_t off, struct fuse_file_info *fi);
void control_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		     int to_set, struct fuse_file_info *fi);
/* After the session has ended: free the files whose release never came. */
void control_close_all(void);
/* Any other operation on a control inode gets this errno. */
#define CONTROL_EPERM EPERM
/*
 * The number parser of nr_requests and iosched/ writes: white space
 * around it stripped, decimal digits, at most max; 0 or -EINVAL.
 * Exported for the fuzzer (fuzz/fuzz_number.c).
 */
int control_parse_number(const char *buf, size_t len, uint64_t max,
			 uint64_t *value);

/* request.c: the read and write paths, from FUSE requests to ios */
/* The read/write paths of the filesystem.  Both reply themselves. */
void request_read(fuse_req_t req, struct inode *inode, uint64_t fh,
		  size_t size, off_t off, int open_flags);
void request_write(fuse_req_t req, struct inode *inode, uint64_t fh,
		   struct fuse_bufvec *in, off_t off, int open_flags);

/* loop.c: the FUSE session loop, on receive buffers of ours */
/* Serve se until it ends (unmount, a signal); 0, or -errno, or what
 * libfuse's own loop returns where it serves (-o clone_fd). */
int loop_run(struct fuse_session *se, const struct fuse_cmdline_opts *opts);
/* Whether a write's data at data lies in the calling session thread's
 * receive buffer (at a page boundary). */
bool loop_adoptable(const void *data);
/* The bytes of a receive buffer's block. */
size_t loop_block_size(void);
/* After loop_adoptable: the block, which the caller now owns and frees
 * with free(); the thread receives into a new one.  NULL: no memory for
 * the new one, the block stays the thread's. */
void *loop_adopt(void);
/* Start a thread that serves the session: the signals that end it are
 * blocked there; 0 or -errno. */
int loop_thread_create(pthread_t *id, void *(*fn)(void *), void *arg,
		       const char *name);

/* fusering.c: FUSE over io_uring (-o fuse_uring) */
/* Whether this build can serve FUSE over io_uring; 0, or -1 and err says
 * why not. */
int fusering_probe(char *err, size_t size);
/* Entries per queue from the mount's settings, before it starts; 0: off. */
void fusering_configure(unsigned depth);
bool fusering_wanted(void);
/* Once the kernel took our INIT reply (killpriv.c): register the entries
 * of every CPU's queue on /dev/fuse fd, each with payload bytes, and
 * start their threads; 0 or -errno (then /dev/fuse carries everything). */
int fusering_start(struct fuse_session *se, int fd, size_t payload);
/* The session io's writev: true if the reply was a ring request's and
 * went to its entry. */
bool fusering_reply(const struct iovec *iov, int count);
/* On a ring thread: whether data lies in the request's own entry, where
 * it stays until the request is answered. */
bool fusering_stable(const void *data);
/* Whether the calling thread is a ring thread with more requests waiting
 * (it must not wait for backing I/O then). */
bool fusering_busy(void);
/* The session ended: the ring threads take no more requests. */
void fusering_quiesce(void);
/* Every request answered: close the rings. */
void fusering_stop(void);

/* memory.c: the data buffers' bound, and memory given back once idle */
/* Bytes of queued write copies above which a writer waits. */
#define MEMORY_COPY_MAX (32u << 20)
/* One arena; trims on fs's timer (before the session starts); 0 or
 * -errno. */
int memory_start(struct fs *fs);
/* Wait until len more bytes of copies fit (or none are held), count
 * them; memory_copy_release once they are freed. */
void memory_copy_reserve(size_t len);
void memory_copy_release(size_t len);
/* What a write part of ours counts against the bound: its length, or the
 * whole receive buffer it took (loop_adopt). */
size_t memory_charge(const struct io_part *p);
/* A write was queued in the buffer it arrived in (the stats' adopted). */
void memory_adopted(void);
/*
 * A throttled group's parked writes do not count against the bound, or
 * a group limited to a trickle would make every other group's writers
 * wait (the throttle promises it slows nobody else); their number is
 * bounded by the kernel's outstanding FUSE requests.  The bytes of io's
 * copies, to take out when it is parked (memory_copy_park) and put back,
 * without waiting, when it is released (memory_copy_unpark).
 */
size_t memory_copies_of(const struct io *io);
void memory_copy_park(size_t len);
void memory_copy_unpark(size_t len);
/* n parts got buffers of ours / had them freed (the trim's idleness). */
void memory_buffers_used(unsigned n);
void memory_buffers_freed(unsigned n);
/* The counters, for .control/stats. */
void memory_stats(struct stats_memory *m);

/*
 * dio.c: performing a direct io.  Results go to each part, as
 * perform_io's do.
 */
void dio_perform(struct io *io);
/* trace.c: request events streamed to readers of .control/trace */
/* Open readers; the hot path's only cost when there are none. */
extern atomic_uint trace_nr_readers;
static inline bool trace_on(void)
{
	return atomic_load_explicit(&trace_nr_readers,
				    memory_order_relaxed) != 0;
}
/* The queue's hook (queue_params.trace): an event ('Q', 'M', 'F', 'D',
 * 'C') of rq, recorded for every reader. */
void trace_rq(void *arg, char action, const struct elv_request *rq,
	      uint64_t now_ns, uint64_t wait_ns, uint64_t service_ns, int error);
/* Remember pid's process name while it still exists. */
void trace_note_pid(pid_t pid);
struct trace_reader;
/* A new reader, seeing events from now on; the first starts the trace
 * thread.  0, or -errno (ENOMEM, or the thread's, ESHUTDOWN if stopped). */
int trace_open(struct trace_reader **rp);
/* Answers req now or, with nothing to read yet, later. */
void trace_read(struct trace_reader *r, fuse_req_t req, size_t size);
void trace_release(struct trace_reader *r);
/*
 * The mount's settings for a reader's header, as "name value" pairs
 * (trace_start); length, or -errno.
 */
typedef int (*trace_settings_fn)(void *arg, char *buf, size_t size);
/* Times count from start_ns; watch mountpoint (NULL: none); settings
 * (NULL: none) fills the header's second line when a reader opens. */
void trace_start(const char *mountpoint, uint64_t start_ns,
		 trace_settings_fn settings, void *arg);
/* End of file for every reader, now and later. */
void trace_stop(void);

/* ioprio.c: the I/O priority of a process, as ionice(1) sets it */
int ioprio_of_pid(pid_t pid);
/*
 * Give the calling thread the I/O priority prio (IOSCHED_IOPRIO) for its
 * backing syscalls; ioprio_pass_end() gives it back its own.  No system
 * call when it has that priority already.
 */
void ioprio_pass(int prio);
void ioprio_pass_end(void);
/* prio as the backing file may have it: once the real-time class has
 * been refused, best-effort at the same level. */
int ioprio_allowed(int prio);
/* The kernel refused prio with EPERM: true (logged once, and
 * ioprio_allowed now lowers it) if that was its real-time class. */
bool ioprio_refused(int prio);

/* perform.c: an io's syscall */
/* Perform io and set each part's result; no FUSE. */
void perform_io(struct io *io);
/* Most ios have few parts; a merged one has at most IOV_MAX (queue.c). */
#define PERFORM_IOV_STACK 64
/* One io's vectored transfer, syscall by syscall. */
struct perform_vec {
	struct io *io;
	struct iovec *iov;	/* the parts' buffers; from first on to do */
	int cnt, first;
	size_t done;		/* bytes moved so far */
	int err;
};
/*
 * Set v up for io (a read gets its buffers now; local_ok: the calling
 * thread's own buffer, for a read answered on this thread), iov from
 * stack (PERFORM_IOV_STACK entries) when the parts fit.  0, or -errno
 * with the error already spread over the parts.
 */
int perform_vec_init(struct perform_vec *v, struct io *io,
		     struct iovec *stack, bool local_ok);
/* Feed one syscall's result (bytes, or -errno): true when another must
 * move v->iov + v->first at io offset + v->done; false when the result
 * is spread over the parts (io_spread) and the io is done. */
bool perform_vec_step(struct perform_vec *v, ssize_t n);
/* Whether a write of io must exclude dio.c's read-modify-writes. */
bool perform_locks(const struct io *io);
/* buf is the calling thread's own read buffer, which perform_io used
 * for a small read: not to be freed (request_end, on that thread). */
bool perform_is_local(const void *buf);

/* dispatch.c: the worker pool that performs I/O */
/* dm: NULL, or a disk model the pool takes over (and frees); groups:
 * throttle requests by their control group's limits (cgroup.c); engine:
 * threads workers, or uring.c's ring of that depth. */
struct dispatch *dispatch_start(struct queue *q, unsigned threads,
				struct diskmodel *dm, bool groups,
				enum engine engine);
/* The debug line of a dispatched io. */
void dispatch_log(const struct io *io);
/* io was performed: tell the queue, answer its requests, free it. */
void dispatch_done(struct queue *q, struct io *io);
/* Before queue_stop: submit every throttled request now, and end the
 * thread that releases them. */
void dispatch_drain(struct dispatch *d);
/* Call after queue_stop: joins the workers. */
void dispatch_stop(struct dispatch *d);
/* Queue io (or park it, throttled, until its group's budget allows it);
 * the calling thread performs what the elevator sends at once. */
void dispatch_submit(struct dispatch *d, struct io *io);
/*
 * The same for an io whose data is lent by the calling thread, which will
 * wait for it: only onto an idle queue without a disk model, so that the
 * wait is one service (or a scheduler's idle window), never a backlog.
 * false: nothing done.
 */
bool dispatch_submit_lent(struct dispatch *d, struct io *io);

/* uring.c: the io_uring engine (engine=uring) */
struct uring;
/* Whether a ring of depth can be set up here: 0, or -1 and why in err
 * (no liburing in this build, io_uring_setup refused). */
int uring_probe(unsigned depth, char *err, size_t size);
/* Start the ring thread, which dispatches from q at most depth ios at
 * a time, each serving on dm (NULL: none; not taken over) as a worker
 * would; NULL (logged) on failure.  uring_stop joins it once queue_stop
 * has been called and everything is done. */
struct uring *uring_start(struct queue *q, unsigned depth,
			  struct diskmodel *dm);
void uring_stop(struct uring *u);

#endif /* FUSE_IOSCHED_DAEMON_H */
