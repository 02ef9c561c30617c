/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-iosched internal interfaces, grouped by the file that defines them.
 *
 * Lock order (take from left to right, never the other way):
 *   elevator switch mutex  ->  inode table mutex  ->  inode lock
 *   ->  queue lock  ->  libevent's internal base lock
 * and the disk model's head lock  ->  queue lock (diskmodel_next),
 * and queue lock  ->  trace lock (trace_emit), libfuse's request lock
 * ->  trace lock (a FUSE interrupt of a parked trace read),
 * and the inode table mutex  ->  the fd lock (fs_fd.c; a leaf).
 * The queue lock is never held while calling into FUSE or doing I/O.
 * An inode's dio_lock is taken with no other lock held, around backing
 * I/O only (dispatch_perform, dio.c).
 */
#ifndef FUSE_IOSCHED_H
#define FUSE_IOSCHED_H

/*
 * 3.12: the API whose fuse_session_loop_mt() takes the opaque loop
 * configuration made by fuse_loop_cfg_create().  Under an older version
 * the same call reads that object as the 3.2 struct and finds a
 * max_idle_threads of 0: a session thread created and destroyed for
 * every few requests.
 */
#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <syslog.h>

#include "fuse-iosched/elevator.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* log.c */
void log_open(bool to_syslog, int max_level);
void log_set_level(int max_level);
/* "error", "warning", "info", "debug"...: a syslog level, or -1. */
int log_level_parse(const char *name);
/* The name of a syslog level (LOG_EMERG to LOG_DEBUG), or NULL. */
const char *log_level_name(int level);
/* Any int is a level: below LOG_EMERG counts as it, above as LOG_DEBUG. */
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_vmsg(int level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* config.c: built-in defaults < the configuration file < -o options */
#define CONFIG_FILE SYSCONF_DIR "/fuse-iosched.conf"
#define CONFIG_ERR_MAX 512
struct queue;
/* A tunable value from a scheduler section of the file. */
struct config_tunable {
	struct config_tunable *next;
	const struct elevator_type *type;
	const struct elv_tunable *t;
	int64_t value;
};
struct config {
	char *backing;		/* BACKING, as given */
	char *mountpoint;	/* MOUNTPOINT, as given */
	char *scheduler;	/* scheduler at mount time */
	char *module_dir;	/* where NAME.so schedulers live */
	unsigned threads;	/* dispatch workers */
	unsigned nr_requests;	/* queue depth limit */
	unsigned max_background; /* FUSE background requests */
	bool writeback_cache;	/* FUSE writeback cache: batching vs pid */
	char *disk_model;	/* "none" or "hdd" (diskmodel.c) */
	char *metrics;		/* "off" or the address of /metrics */
	unsigned seek_ms;	/* hdd: average seek */
	unsigned rpm;		/* hdd: spindle speed */
	unsigned mb_per_s;	/* hdd: transfer rate, 10^6 bytes/s */
	unsigned ssd_channels;	/* ssd: channels serving in parallel */
	unsigned ssd_read_us;	/* ssd: a read's access time */
	unsigned ssd_mb_per_s;	/* ssd: each channel's transfer rate */
	unsigned ssd_buffer_mib; /* ssd: the write buffer */
	unsigned ssd_drain_mb_per_s; /* ssd: the buffer's drain rate */
	char *backing_io;	/* "auto", "direct" or "buffered" (backing.c) */
	char *log;		/* log level name */
	bool foreground;
	bool debug;

	char *config_file;	/* -o config=PATH; NULL: CONFIG_FILE if any */
	char *config_read;	/* the file actually read, or NULL */
	unsigned given;		/* settings -o gave (bit per setting) */
	unsigned named;		/* settings -o or the file gave */
	char **opts;		/* our -o options, replayed on reload */
	unsigned nr_opts;
	struct config_tunable *tunables;	/* the file's sections */
	int module_dir_line;	/* where the file set module_dir */
};
/* Built-in defaults; -ENOMEM. */
int config_init(struct config *cfg);
/* Whether -o gave the setting called name. */
bool config_given(const struct config *cfg, const char *name);
/* Whether -o or the file gave it (else it is the built-in default). */
bool config_named(const struct config *cfg, const char *name);
/* The syslog level to log at: log, or debug under -d. */
int config_log_level(const struct config *cfg);
/* The -o lines of --help, from the settings table. */
void config_usage(FILE *fp);
/* One -o option: 0 ours and valid, 1 not ours, -1 invalid (err set). */
int config_option(struct config *cfg, const char *opt, char *err,
		  size_t size);
/* Before loading modules: pick the file and read its module_dir. */
int config_load_early(struct config *cfg, char *err, size_t size);
/* With the modules registered: read the whole file, -o on top. */
int config_load(struct config *cfg, char *err, size_t size);
/* Reload: a fresh config from cur's -o options and the file re-read. */
int config_reload(const struct config *cur, struct config *next, char *err,
		  size_t size);
/* The file's tunable value for t, or the built-in default. */
int64_t config_tunable_value(const struct config *cfg,
			     const struct elevator_type *type,
			     const struct elv_tunable *t);
/* SIGHUP: apply to q what next changes from cur (or log that it waits
 * for the next mount); what was applied moves into cur. */
void config_reload_apply(struct config *cur, struct config *next,
			 struct queue *q);
/* Make the file's tunables the defaults of new instances. */
int config_apply_tunables(const struct config *cfg, char *err, size_t size);
/* The effective configuration, in the file's syntax. */
void config_print(const struct config *cfg, FILE *fp);
void config_free(struct config *cfg);

/* timer.c: the clock and the libevent loop thread serving wake-ups */
uint64_t clock_now_ns(void);
struct timer;
typedef void (*timer_fn)(void *arg);
struct timer *timer_start(timer_fn fn, void *arg);
void timer_arm(struct timer *t, uint64_t at_ns);
void timer_stop(struct timer *t);
/* Run fn(arg) on the loop thread when signal signo arrives; -errno. */
int timer_on_signal(struct timer *t, int signo, timer_fn fn, void *arg);
/* The loop's libevent base, for what serves on it (metrics.c). */
struct event_base *timer_base(struct timer *t);
/* Run fn(arg) in timer_stop, after the loop ended, before the base goes. */
void timer_on_stop(struct timer *t, timer_fn fn, void *arg);

/* metrics.c: the Prometheus endpoint, on the timer's loop */
struct queue;
/* "off", or HOST:PORT, [HOST]:PORT, :PORT (loopback), port 1-65535. */
bool metrics_addr_valid(const char *addr);
/* Bind and listen, before mounting: the socket, or -1 and err set. */
int metrics_listen(const char *addr, char *err, size_t size);
/* Serve /metrics on fd (taken over, closed on failure); 0 or -errno. */
int metrics_start(struct timer *t, int fd, struct queue *q);

/* stats.c: per direction, updated under the queue lock */
/*
 * Latency histograms: bucket i < STATS_BUCKETS - 1 counts times of at most
 * 2^i microseconds (and more than the bucket before), the last one the
 * rest.  Fixed bounds: recording is an index computation, no allocation.
 */
#define STATS_BUCKETS 27		/* 1 us .. 2^25 us (33.6 s), then inf */
enum stats_class {			/* I/O priority classes, as ionice(1) */
	STATS_CLASS_RT,
	STATS_CLASS_BE,			/* also class NONE: it means BE */
	STATS_CLASS_IDLE,
	STATS_CLASSES
};
struct stats_hist {
	uint64_t count;
	uint64_t sum_ns;
	uint64_t bucket[STATS_BUCKETS];	/* not cumulative */
};
struct stats_dir {
	uint64_t requests;	/* FUSE requests submitted */
	uint64_t merges;	/* of which merged into another */
	uint64_t dispatched;	/* I/O operations performed */
	uint64_t completed;	/* FUSE requests completed */
	uint64_t sectors;	/* sectors completed */
	uint64_t errors;	/* FUSE requests answered with an error */
	uint64_t queued;	/* now: ios waiting in the scheduler */
	uint64_t in_flight;	/* now: ios dispatched, not completed */
	uint64_t wait_ns;	/* total time from arrival to dispatch */
	uint64_t service_ns;	/* total time from dispatch to completion */
	struct stats_hist wait[STATS_CLASSES];		/* per io, at dispatch */
	struct stats_hist service[STATS_CLASSES];	/* at completion */
};
/* The active scheduler instance's counters (struct elv_counter). */
struct stats_counters {
	const char *scheduler;
	unsigned n;
	const char *name[IOSCHED_COUNTERS_MAX];
	uint64_t value[IOSCHED_COUNTERS_MAX];
};

struct stats {
	struct stats_dir dir[2];	/* ELV_READ, ELV_WRITE */
	uint64_t switches;
	/* As the kernel's io_ticks and time_in_queue, over ios queued or
	 * in flight: the time with at least one, and the integral of their
	 * number over time. */
	uint64_t busy_ns;
	uint64_t depth_ns;
	struct stats_counters sched;	/* filled by queue_get_stats */
};
extern const char *const stats_class_names[STATS_CLASSES];
/* The class of an I/O priority (IOSCHED_IOPRIO). */
enum stats_class stats_class_of(int ioprio);
/* The bucket of a time. */
unsigned stats_bucket(uint64_t ns);
/* Bucket i's upper bound in microseconds; 0 for the last (infinite). */
uint64_t stats_bucket_us(unsigned i);
void stats_hist_add(struct stats_hist *h, uint64_t ns);
/* The upper bound (us) of the bucket holding the pct-th percentile; 0 if
 * empty, UINT64_MAX if in the last bucket. */
uint64_t stats_percentile_us(const struct stats_hist *h, unsigned pct);
int stats_format(const struct stats *s, char *buf, size_t size);

/* sectormap.c: file offset -> device sector */
struct sectormap;
struct sectormap *sectormap_new(dev_t dev, ino_t ino);
void sectormap_free(struct sectormap *m);
/* The sector of byte off of the file open as fd; never fails. */
uint64_t sectormap_lookup(struct sectormap *m, int fd, uint64_t off);
/* The layout of [off, off + len) may have changed; len 0 means "to end". */
void sectormap_invalidate(struct sectormap *m, uint64_t off, uint64_t len);

/* backing.c: the backing_io modes, direct I/O alignment, the device */
enum backing_io {
	BACKING_IO_AUTO,	/* the backing descriptor follows the opener */
	BACKING_IO_DIRECT,	/* always O_DIRECT */
	BACKING_IO_BUFFERED,	/* never O_DIRECT */
};
/* A mode by name, or -1. */
int backing_io_parse(const char *name);
bool backing_io_name_valid(const char *name);
const char *backing_io_name(enum backing_io mode);
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

/* fs_inode.c: the inode table; a fuse_ino_t is a struct inode pointer */
struct inode {
	/* O_PATH descriptor of the backing inode, held for a bounded set of
	 * inodes (fs_fd.c); use it only between fs_fd_get and fs_fd_put. */
	int fd;			/* fd lock: -1 while closed */
	unsigned fd_users;	/* fd lock: uses in progress pin fd */
	struct inode *lru_prev, *lru_next;	/* fd lock: NULL if unlisted */
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
	bool dont_mask;		/* the kernel leaves the umask to us */
	struct queue *queue;
	struct dispatch *dispatch;
	struct timer *timer;
	struct fuse_session *se;
	double timeout;		/* attribute and entry cache seconds */
	enum backing_io backing_io;	/* from cfg, immutable */
	int dio_refused;	/* O_DIRECT refusal logged; atomic */
};

static inline struct fs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

struct inode *fs_inode(fuse_req_t req, fuse_ino_t ino);
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
 * (n -1): count it if it may write. */
void fs_inode_writers_add(struct fs *fs, struct inode *inode, int open_flags,
			  int n);
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
void fs_fd_put(struct inode *inode);
/* A new inode's first descriptor; call under the inode table mutex. */
void fs_fd_adopt(struct inode *inode, int fd);
/* A file handle of fd's inode, or NULL when it cannot be reopened so. */
struct file_handle *fs_fd_handle(int fd);
/* The inode is being freed: close and drop what fs_fd.c holds. */
void fs_fd_forget(struct inode *inode);

/* fs_*.c: shared by the filesystem files */
#define FS_PROC_PATH_MAX 32	/* "/proc/self/fd/" and an int */
struct fs_cred {		/* a thread's credentials, saved to restore */
	bool switched;
	int nr_groups;		/* the thread's own supplementary groups */
	gid_t *groups;
};
/* fs_inode.c */
int fs_inode_entry(fuse_req_t req, struct inode *parent, const char *name,
		   struct fuse_entry_param *e);
void fs_inode_unref(struct inode *inode, uint64_t n);
/* "/proc/self/fd/N" of a descriptor from fs_fd_get. */
void fs_inode_proc_path(int fd, char *buf);
/* Open inode's backing inode with flags; -1 and errno. */
int fs_inode_reopen(struct inode *inode, int flags);
/* Open inode through its parent's descriptor and name; fd or -errno. */
int fs_inode_reopen_by_name(struct inode *inode);
/* parent/name was renamed to newparent/newname: follow it. */
void fs_inode_renamed(struct inode *newparent, int newparent_fd,
		      const char *newname);
bool fs_inode_is_control_name(fuse_ino_t parent, const char *name);
int fs_inode_cred_enter(fuse_req_t req, struct fs_cred *saved);
void fs_inode_cred_leave(struct fs_cred *saved);
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
void control_getattr(fuse_req_t req, fuse_ino_t ino);
void control_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void control_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		  struct fuse_file_info *fi);
void control_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		   size_t size, off_t off, struct fuse_file_info *fi);
void control_release(fuse_req_t req, fuse_ino_t ino,
		     struct fuse_file_info *fi);
void control_opendir(fuse_req_t req, fuse_ino_t ino,
		     struct fuse_file_info *fi);
void control_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi, bool plus);
void control_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		     int to_set, struct fuse_file_info *fi);
/* After the session has ended: free the files whose release never came. */
void control_close_all(void);
/* Any other operation on a control inode gets this errno. */
#define CONTROL_EPERM EPERM
/*
 * The number parser of nr_requests and iosched/ writes: decimal, at most
 * max, then only blanks and newlines; 0 or -EINVAL.  Exported for the
 * fuzzer (fuzz/fuzz_number.c).
 */
int control_parse_number(const char *buf, size_t len, uint64_t max,
			 uint64_t *value);

/* request.c: struct io, one queued unit of I/O and its FUSE requests */
struct io_part {
	struct io_part *next;
	fuse_req_t req;		/* NULL in unit tests */
	void *buf;		/* read destination or write data */
	sem_t *lender;		/* non-NULL: buf is lent; post when done */
	size_t len;
	ssize_t result;		/* bytes done, or -errno, set at completion */
	bool whole;		/* a write whose writer cannot see a short
				 * count (writeback): cut short, it fails */
	unsigned write_epoch;	/* from fs_inode_write_begin, for writes */
};

struct io {
	struct elv_request rq;	/* the scheduler's view */
	struct inode *inode;	/* NULL in unit tests */
	int fd;			/* backing fd (not owned) */
	/* fd is O_DIRECT and needs this alignment (0: buffered fd); an
	 * unaligned direct io goes through a bounce buffer (dio.c). */
	unsigned dio_align;
	bool dio_unaligned;
	struct io_part *parts, *parts_tail;
	unsigned nr_parts;
	uint64_t dispatch_ns;	/* set by the queue at dispatch */
	struct io *hash_next[2];	/* queue.c's merge hashes, queue lock */
	void (*end)(struct io *io);	/* called once, after completion */
};

/* Allocate an io of one part, with its buffer for a read. */
struct io *io_new(enum elv_dir dir, uint64_t file, int fd,
		  unsigned dio_align, uint64_t off, size_t len);
/* A buffer of len bytes for io (aligned for a direct one), or NULL;
 * io_free_buf frees it (all parts of an io have the same alignment). */
void *io_alloc_buf(const struct io *io, size_t len);
void io_free_buf(const struct io *io, void *buf);
void io_free(struct io *io);
/* Fill pid, ioprio and sync from the FUSE request and open flags. */
void io_set_origin(struct io *io, fuse_req_t req, int open_flags);
/* The read/write paths of the filesystem.  Both reply themselves. */
void io_submit_read(fuse_req_t req, struct inode *inode, uint64_t fh,
		    size_t size, off_t off, int open_flags);
void io_submit_write(fuse_req_t req, struct inode *inode, uint64_t fh,
		     struct fuse_bufvec *in, off_t off, int open_flags);

/*
 * dio.c: performing a direct io.  Results go to each part, as
 * dispatch_perform's do.
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
/* Record an event ('Q', 'M', 'F', 'D', 'C') of rq for every reader. */
void trace_emit(char action, const struct elv_request *rq, uint64_t now_ns,
		uint64_t wait_ns, uint64_t service_ns);
static inline void trace_rq(char action, const struct elv_request *rq,
			    uint64_t now_ns, uint64_t wait_ns,
			    uint64_t service_ns)
{
	if (trace_on())
		trace_emit(action, rq, now_ns, wait_ns, service_ns);
}
/* Remember pid's process name while it still exists. */
void trace_note_pid(pid_t pid);
struct trace_reader;
/* A new reader, seeing events from now on; the first starts the trace
 * thread.  0, or -errno (ENOMEM, or the thread's, ESHUTDOWN if stopped). */
int trace_open(struct trace_reader **rp);
/* Answers req now or, with nothing to read yet, later. */
void trace_read(struct trace_reader *r, fuse_req_t req, size_t size);
void trace_release(struct trace_reader *r);
/* Times count from start_ns; watch mountpoint (NULL: none). */
void trace_start(const char *mountpoint, uint64_t start_ns);
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

/* queue.c: the request queue */
typedef uint64_t (*queue_clock_fn)(void *arg);
struct queue_params {
	unsigned nr_requests;
	queue_clock_fn clock;	/* NULL: clock_now_ns */
	void *clock_arg;
	/* The scheduler asked to be called at at_ns (timer or test). */
	void (*wakeup_at)(void *arg, uint64_t at_ns);
	void *wakeup_arg;
	/* An io emptied by a merge; NULL: free().  The replay's pool. */
	void (*free_shell)(void *arg, struct io *io);
	void *free_shell_arg;
};
#define NR_REQUESTS_MIN 1
#define NR_REQUESTS_MAX 65536

struct queue *queue_new(const struct queue_params *p,
			const struct elevator_type *type);
void queue_free(struct queue *q);
/* Queue io or merge it into a queued one; waits while full or frozen. */
void queue_submit(struct queue *q, struct io *io);
/* What queue_submit_nowait did with an io. */
enum queue_take {
	QUEUE_ADDED,	/* queued: the queue owns io */
	QUEUE_MERGED,	/* merged into a queued io: io's shell is freed
			 * (queue_params.free_shell) */
	QUEUE_FULL,	/* its direction is full, or the queue frozen: io is
			 * still the caller's, to submit again (again set) */
};
/* queue_submit for a single-threaded caller that must not wait (the
 * replay): again says io was refused before, and arrived then. */
enum queue_take queue_submit_nowait(struct queue *q, struct io *io,
				    bool again);
/* For workers: the next io to perform; waits; NULL once stopped. */
struct io *queue_next(struct queue *q);
/* Without waiting: the next io to perform now, or NULL. */
struct io *queue_try_next(struct queue *q);
/* queue_submit, then queue_try_next, under one lock: no worker woken. */
struct io *queue_submit_dispatch(struct queue *q, struct io *io);
/* queue_submit_dispatch, if nothing is queued and io needs no wait for a
 * slot: true and *next (io or NULL); else false, io untouched. */
bool queue_submit_idle(struct queue *q, struct io *io, struct io **next);
/* io was performed (its parts' results are set). */
void queue_done(struct queue *q, struct io *io);
/* The timer fired: a scheduler wake-up is due. */
void queue_kick(struct queue *q);
/* Make queue_next return NULL once nothing is queued or in flight. */
void queue_stop(struct queue *q);
/* Freeze: new submitters wait, and wait until nothing is queued or in
 * flight.  Returns the time the drain took. */
uint64_t queue_freeze(struct queue *q);
void queue_unfreeze(struct queue *q);
/* An instance of type bound to q, initialised, not yet attached. */
struct elevator_queue *queue_alloc_elevator(struct queue *q,
					    const struct elevator_type *type,
					    int *err);
/* Replace the elevator of a frozen queue; returns the old one. */
struct elevator_queue *queue_swap_elevator(struct queue *q,
					   struct elevator_queue *eq);
const struct elevator_type *queue_elevator_type(struct queue *q);
int queue_set_nr_requests(struct queue *q, unsigned nr);
unsigned queue_nr_requests(struct queue *q);
void queue_get_stats(struct queue *q, struct stats *out);
/* Run fn on the active elevator under the queue lock (tunables). */
int queue_with_elevator(struct queue *q,
			int (*fn)(struct elevator_queue *eq, void *arg),
			void *arg);

/* elevator.c: the scheduler registry and online switching */
/* A scheduler name: [a-z0-9_-]{1,31}. */
bool elv_name_valid(const char *name, size_t len);
/* "noop deadline\n", with the active one (if any) in brackets. */
int elv_list_names(char *buf, size_t size, const char *active);
int elv_register(const struct elevator_type *type, const char *origin);
void elv_unregister_all(void);
const struct elevator_type *elv_find(const char *name);
/* The i-th registered scheduler, in registration order, or NULL. */
const struct elevator_type *elv_nth(unsigned i);
/* Find name, loading NAME.so from the module directory if needed. */
const struct elevator_type *elv_get(const char *name);
/* "noop [deadline] ...\n" */
int elv_show(struct queue *q, char *buf, size_t size);
/* Parse a user's write ("cfq\n") and switch; 0 or -errno. */
int elv_store(struct queue *q, const char *buf, size_t len);
int elv_switch(struct queue *q, const struct elevator_type *type);
/* Bind an instance: allocate data, set tunable defaults, init. */
struct elevator_queue *elv_alloc(const struct elevator_type *type,
				 const struct elevator_host *host,
				 void *host_data, int *err);
void elv_release(struct elevator_queue *eq);
/* Tunables by name.  Setting checks the range: -ENOENT, -EINVAL, 0. */
const struct elv_tunable *elv_tunable_find(const struct elevator_type *type,
					   const char *name);
int elv_tunable_get(struct elevator_queue *eq, const char *name,
		    int64_t *value);
int elv_tunable_set(struct elevator_queue *eq, const char *name,
		    int64_t value);
/* Defaults for future instances of type (the config file): -ERANGE... */
int elv_tunable_default_set(const struct elevator_type *type,
			    const char *name, int64_t value);
void elv_tunable_defaults_clear(void);

/* noop.c: the built-in scheduler, written against the public header only */
const struct elevator_type *elv_noop(void);

/* module.c: scheduler modules */
void module_set_dir(const char *dir);
/* Register every *.so in the module directory; failures are logged. */
void module_load_all(void);
/* Load dir/NAME.so and register it; 0 or -errno (logged). */
int module_load(const char *name);
void module_unload_all(void);

/* diskmodel.c: a disk's service time (hdd or ssd), charged at dispatch */
#define DISKMODEL_SEEK_MS 8		/* defaults: a 7200 rpm SATA disk */
#define DISKMODEL_RPM 7200
#define DISKMODEL_MB_PER_S 150
#define DISKMODEL_SEEK_MS_MAX 1000	/* ranges of the settings */
#define DISKMODEL_RPM_MIN 100
#define DISKMODEL_RPM_MAX 100000
#define DISKMODEL_MB_PER_S_MAX 100000
#define DISKMODEL_SSD_CHANNELS_MAX 64	/* ranges of the ssd settings */
#define DISKMODEL_SSD_READ_US_MAX 100000
#define DISKMODEL_SSD_BUFFER_MIB_MAX 65536
struct diskmodel;
/* The ssd model's parameters, as the settings of the same names. */
struct diskmodel_ssd {
	unsigned channels;
	unsigned read_us;
	unsigned mb_per_s;	/* per channel */
	unsigned buffer_mib;
	unsigned drain_mb_per_s;
};
/* "none", "hdd" or "ssd". */
bool diskmodel_name_valid(const char *name);
/* The hdd model; NULL with errno set (EINVAL for rpm or mb_per_s 0). */
struct diskmodel *diskmodel_new(unsigned seek_ms, unsigned rpm,
				unsigned mb_per_s);
/* The ssd model; NULL with errno set (EINVAL for a parameter 0, or more
 * channels than DISKMODEL_SSD_CHANNELS_MAX). */
struct diskmodel *diskmodel_ssd_new(const struct diskmodel_ssd *p);
void diskmodel_free(struct diskmodel *dm);
/* A seek over distance sectors; 0 for 0, capped at the full stroke. */
uint64_t diskmodel_seek_ns(const struct diskmodel *dm, uint64_t distance);
/* The service time of rq with the head at sector head. */
uint64_t diskmodel_cost_ns(const struct diskmodel *dm, uint64_t head,
			   const struct elv_request *rq);
/* The ssd's service time of rq starting at start_ns: a read's access and
 * transfer; a write's transfer after it waits for room in the buffer. */
uint64_t diskmodel_ssd_cost_ns(const struct diskmodel *dm,
			       const struct elv_request *rq,
			       uint64_t start_ns);
/* Book the device for rq from now_ns, or when the head (hdd) or the first
 * channel (ssd) frees: its slot's end.  Never sleeps, so it works on any
 * clock, virtual or not. */
uint64_t diskmodel_book(struct diskmodel *dm, const struct elv_request *rq,
			uint64_t now_ns);
/* For workers: queue_next (hdd: once the head is free) and book it; its
 * slot's end in *end_ns.  NULL once the queue is stopped. */
struct io *diskmodel_next(struct diskmodel *dm, struct queue *q,
			  uint64_t *end_ns);
/* Sleep until end_ns on clock_now_ns()'s clock, if it is still ahead. */
void diskmodel_wait(uint64_t end_ns);

/* dispatch.c: the worker pool that performs I/O */
/* dm: NULL, or a disk model the pool takes over (and frees). */
struct dispatch *dispatch_start(struct queue *q, unsigned threads,
				struct diskmodel *dm);
/* Call after queue_stop: joins the workers. */
void dispatch_stop(struct dispatch *d);
/* Perform io's syscall and set each part's result; no FUSE. */
void dispatch_perform(struct io *io);
/* Give each part its result from done bytes moved and the positive errno
 * that stopped the transfer (0: end of file), in order (dio.c too). */
void dispatch_spread(struct io *io, size_t done, int err);
/* Queue io; the calling thread performs what the elevator sends at once. */
void dispatch_submit(struct dispatch *d, struct io *io);
/*
 * The same for an io whose data is lent by the calling thread, which will
 * wait for it: only onto an idle queue without a disk model, so that the
 * wait is one service (or a scheduler's idle window), never a backlog.
 * false: nothing done.
 */
bool dispatch_submit_lent(struct dispatch *d, struct io *io);

/* replay_parse.c: traces for fuse-iosched-replay; -1 with a message */
struct replay_rq {
	uint64_t time_ns;	/* issue time, from the trace's first */
	uint64_t abs_ns;	/* issue time as recorded */
	uint64_t think_ns;	/* closed loop: after the previous completed */
	uint64_t sector;
	uint64_t seq;		/* position in the file */
	uint32_t nr_sectors;
	uint32_t proc;		/* index into procs */
	bool write;
	bool sync;
	bool sync_write;	/* O_SYNC, O_DSYNC, O_DIRECT: the kernel's WS */
};
/* A dispatch of our own format, with the times its C reported. */
struct replay_disp {
	uint64_t d_ns;		/* dispatch time, from the trace's first */
	uint64_t service_ns;	/* D to C, or UINT64_MAX if unknown */
	uint64_t wait_ns;	/* Q to D (C's wait), or UINT64_MAX */
	uint64_t sector;
	uint32_t nr_sectors;
	bool write;
};
struct replay_trace {
	struct replay_rq *rq;	/* in issue order */
	size_t nr, cap;
	uint64_t span_ns;	/* the first issue to the last event */
	struct replay_disp *disp;	/* in dispatch order */
	size_t nr_disp, cap_disp;
	int64_t *procs;		/* process keys: pids, or MSR host+disk */
	uint32_t nr_procs;
	const char *format;	/* as named or detected */
};
/* "auto", "fuse-iosched", "blkparse" or "msr". */
bool replay_format_valid(const char *name);
int replay_parse(const char *path, const char *format,
		 struct replay_trace *t, char *err, size_t size);
void replay_trace_free(struct replay_trace *t);

/* replay_sim.c: one trace through one scheduler, in simulated time */
enum replay_lag {
	REPLAY_LAG_HEAD,
	REPLAY_LAG_ARRIVAL,
};
enum replay_model {
	REPLAY_MODEL_NONE,	/* transfer time only, one io at a time */
	REPLAY_MODEL_HDD,
	REPLAY_MODEL_SSD,
};
struct replay_opts {
	bool closed_loop;
	bool time_based;	/* closed loop: for a duration, fio-like */
	uint64_t duration_ns;	/* time-based: 0 is the recorded span */
	enum replay_model model;
	unsigned seek_ms, rpm, mb_per_s;	/* hdd; none: mb_per_s */
	struct diskmodel_ssd ssd;
	unsigned nr_requests;	/* per direction, as the mount's */
	unsigned threads;	/* ios in flight: the mount's workers */
	/* Host time from service end to completion, reads and writes. */
	uint64_t overhead_ns[2];
	/*
	 * Host time from "the device may take an io" to its start: when
	 * the head frees with ios queued (lag_ns[REPLAY_LAG_HEAD]), when an
	 * io arrives at an idle device (REPLAY_LAG_ARRIVAL).
	 */
	uint64_t lag_ns[2];
	/*
	 * The values behind those medians, as a trace of ours recorded them
	 * request by request, used in turn (none: the median every time).
	 */
	struct replay_host_seq {
		uint64_t *v;
		size_t n;
	} overhead_seq[2], lag_seq[2];
	bool cost;		/* time the scheduler's hooks */
	bool plot;		/* fill replay_result's buckets */
	/* Tunables to set, "name=value", and how many. */
	char **tunables;
	unsigned nr_tunables;
};
struct replay_result {
	uint64_t requests, merges, bytes;
	uint64_t start_ns, end_ns;	/* first issue, last completion */
	uint64_t *lat[2];		/* per direction, sorted */
	size_t nr_lat[2];
	double jain;
	double cost_ns;			/* per request, with opts->cost */
	/* Completed bytes per time bucket, with opts->plot. */
	uint64_t *buckets;
	size_t nr_buckets;
	uint64_t bucket_ns;
};
/* 0, or -1 with err set (an unknown tunable, a failing scheduler). */
int replay_sim(const struct replay_trace *t, const struct elevator_type *type,
	       const struct replay_opts *o, struct replay_result *res,
	       char *err, size_t size);
void replay_result_free(struct replay_result *res);
/* The mount's host times from a trace of ours (0 from other traces): the
 * service time beyond the model's, per direction (overhead_ns), and the
 * delay before the device starts an io it could start (lag_ns). */
void replay_host_times(const struct replay_trace *t, struct replay_opts *o);
void replay_host_times_free(struct replay_opts *o);

#endif /* FUSE_IOSCHED_H */
