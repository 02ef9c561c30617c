/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libcore's interfaces (lib/), grouped by the file that defines them: the
 * queue, the scheduler registry and switch, the module loader, the io
 * object, stats, the disk models, the clock, logging and configuration.
 * Neither FUSE nor libevent: the daemon (daemon/daemon.h) and the replay
 * (replay/replay.h) build on this.
 *
 * Errors: a function returns 0 (or a count, a length) or a negative errno;
 * one that makes a pointer returns NULL and says why in errno (or *err).
 * Parsers of what a user wrote (config_*) return -1 and put the message,
 * one line, in the err buffer they are given.  A lookup by name
 * (log_level_parse, backing_io_parse) returns -1 for no such name.
 *
 * Lock order (take from left to right, never the other way):
 *   elevator switch mutex  ->  queue lock
 * and the disk model's head lock  ->  queue lock (diskmodel_next),
 * and any lock  ->  the log lock (log.c; a leaf).
 * The queue calls its hooks (queue_params: clock, wakeup_at, trace,
 * cgroup_path, cgroup_weight) under its lock: they take only locks of their own, after
 * it.  The queue lock
 * is never held while doing I/O.  daemon/daemon.h has the whole order.
 */
#ifndef FUSE_IOSCHED_H
#define FUSE_IOSCHED_H

#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <syslog.h>

#include "fuse-iosched/elevator.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* log.c */
/* After detaching: syslog if to_syslog, else stderr (and, always, the
 * ring and the log file). */
void log_open(bool to_syslog, int max_level);
/* -o log_file: append to path (NULL or "none": no file); 0, or -1 with
 * one line in err.  Before the threads start. */
int log_file_open(const char *path, char *err, size_t size);
/* A log_file setting: "none" or an absolute path. */
bool log_file_name_valid(const char *value);
/* SIGHUP: reopen the log file by its name (logrotate); logged. */
void log_file_reopen(void);
/* Before detaching: if syslog cannot be reached, say so (once), naming
 * the mount's ring (mountpoint/ring) as where messages still go. */
void log_syslog_check(const char *mountpoint, const char *ring);
/* The mount's own log (.control/log): the newest whole lines of the ring
 * that fit in size bytes, oldest first; their length. */
#define LOG_RING_SIZE 65536
size_t log_ring_read(char *buf, size_t size);
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
/* Hold stderr's messages from now on, until log_release prints them. */
void log_hold(void);
void log_release(void);
/* The last held message containing text, or NULL. */
const char *log_held_find(const char *text);
#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
/*
 * A call site that users or the I/O can repeat at will: at most a burst
 * of lines per interval, then one line with the count left out, at the
 * site's next message after the interval (the kernel's
 * printk_ratelimited).  The count lives at the call site.
 */
struct log_ratelimit {
	uint64_t begin_ns;	/* the interval's start; log.c's log lock */
	unsigned printed;	/* lines in this interval */
	unsigned missed;	/* lines left out in it */
};
void log_msg_ratelimited(struct log_ratelimit *rl, const char *where,
			 int level, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define log_ratelimited(level, ...) do {				\
	static struct log_ratelimit log_rl_;				\
	log_msg_ratelimited(&log_rl_, __func__, level, __VA_ARGS__);	\
} while (0)
/*
 * A value a user gave (a name written to a control file, a setting from
 * the file) as a log line shows it: printable ASCII as it is, any other
 * byte and the backslash as \xNN, cut to fit in size with "...(N bytes)"
 * after it.  Returns buf; LOG_VALUE_SIZE is what callers use.  It reads
 * at most size bytes of value, whatever len says.
 */
#define LOG_VALUE_SIZE 96
const char *log_value(char *buf, size_t size, const void *value, size_t len);

/* config.c: built-in defaults < the configuration file < -o options */
#define CONFIG_FILE SYSCONF_DIR "/fuse-iosched.conf"
#define CONFIG_ERR_MAX 512
struct queue;
/* throttle.c's limits of a group, per direction (below). */
struct throttle_limits {
	uint64_t bps[2];	/* bytes per second, ELV_READ, ELV_WRITE; 0: none */
	uint64_t iops[2];	/* ios per second; 0: none */
};
/* A group section of the file: limits and weight of one control group. */
struct config_group {
	struct config_group *next;
	char *path;		/* as /proc/PID/cgroup shows it: "/a/b" */
	struct throttle_limits lim;	/* rbps, wbps, riops, wiops; 0: none */
	unsigned weight;	/* 1 to 1000; 0: not set */
};
#define CONFIG_GROUP_PATH_MAX 4096
struct config {
	char *backing;		/* BACKING, as given */
	char *mountpoint;	/* MOUNTPOINT, as given */
	char *scheduler;	/* scheduler at mount time */
	char *module_dir;	/* where NAME.so schedulers live */
	unsigned threads;	/* dispatch workers, or the ring's depth */
	char *engine;		/* "threads" or "uring" (names.c) */
	unsigned fuse_uring;	/* ring entries per CPU; 0: /dev/fuse */
	unsigned nr_requests;	/* queue depth limit */
	unsigned max_background; /* FUSE background requests */
	bool writeback_cache;	/* FUSE writeback cache: batching vs pid */
	char *disk_model;	/* "none" or "hdd" (diskmodel.c) */
	char *metrics;		/* "off" or the address of /metrics */
	bool groups;		/* control groups' limits and weights */
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
	char *log_file;		/* "none" or an absolute path (log.c) */
	bool overmount;		/* mount where it hides something */
	bool foreground;
	bool debug;
	unsigned max_read;	/* -o max_read= (libfuse's), or 0 */

	char *config_file;	/* -o config=PATH; NULL: CONFIG_FILE if any */
	char *config_read;	/* the file actually read, or NULL */
	unsigned given;		/* settings -o gave (bit per setting) */
	unsigned named;		/* settings -o or the file gave */
	char **opts;		/* our -o options, replayed on reload */
	unsigned nr_opts;
	struct elv_tunable_value *tunables;	/* the file's sections */
	struct config_group *groups_conf;	/* its group sections */
	int module_dir_line;	/* where the file set module_dir */
};
/* Built-in defaults; -ENOMEM. */
int config_init(struct config *cfg);
/* Whether -o or the file gave it (else it is the built-in default). */
bool config_named(const struct config *cfg, const char *name);
/* The syslog level to log at: log, or debug under -d. */
int config_log_level(const struct config *cfg);
/* The -o lines of --help, from the settings table. */
void config_usage(FILE *fp);
/* --help: what SIGHUP applies at once, what at the next mount. */
void config_usage_reload(FILE *fp);
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
/* SIGHUP: apply to q what next changes from cur (or log that it waits
 * for the next mount); what was applied moves into cur. */
void config_reload_apply(struct config *cur, struct config *next,
			 struct queue *q);
/* Make the file's tunables the defaults of new instances. */
int config_apply_tunables(const struct config *cfg, char *err, size_t size);
/* The effective configuration, in the file's syntax. */
void config_print(const struct config *cfg, FILE *fp);
void config_free(struct config *cfg);

/* clock.c: the monotonic clock, in nanoseconds */
uint64_t clock_now_ns(void);
/*
 * The same clock as of its last tick (CLOCK_MONOTONIC_COARSE): no system
 * call and no TSC read, up to a tick (1-10 ms) behind clock_now_ns; for
 * lifetimes of caches on the request path, not for the queue.
 */
uint64_t clock_coarse_ns(void);

/* stats.c: per direction, updated under the queue lock */
/*
 * Latency histograms: bucket i < STATS_BUCKETS - 1 counts times of at most
 * 2^i microseconds (and more than the bucket before), the last one the
 * rest.  Fixed bounds: recording is an index computation, no allocation.
 */
#define STATS_BUCKETS 27		/* 1 us .. 2^25 us (33.6 s), then inf */
/* I/O priority classes, as ionice(1), in elv_ioprio_class_index's order. */
enum stats_class {
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

/*
 * One control group's I/O, per direction: ios dispatched, their bytes and
 * waits, and their service at completion.  The queue keeps STATS_GROUPS
 * groups, the least recently active one giving its slot to a new group
 * (its counts start again if it comes back).
 */
#define STATS_GROUPS 8
#define STATS_GROUP_PATH_MAX 256
struct stats_group_dir {
	uint64_t ios;
	uint64_t bytes;
	struct stats_hist wait;
	struct stats_hist service;
};
struct stats_group {
	uint64_t id;		/* elv_request.cgroup */
	uint64_t last_ns;	/* its latest dispatch */
	char path[STATS_GROUP_PATH_MAX];	/* by queue_get_stats */
	struct stats_group_dir dir[2];
};

/*
 * The daemon's request buffers (request.c fills these; zero elsewhere):
 * bytes of write data copied for queued writes now, their peak, the
 * limit above which a writer waits, the writes that waited, the times
 * freed memory was given back to the system at idle, and the copies of
 * writes a throttled group's budget holds back (outside the limit).
 */
struct stats_memory {
	uint64_t copy_bytes;
	uint64_t copy_peak;
	uint64_t copy_limit;
	uint64_t copy_waits;
	uint64_t trims;
	uint64_t copy_parked;	/* of writes the throttle holds: not bound */
	uint64_t adopted;	/* writes queued in their receive buffer */
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
	struct stats_memory mem;	/* not the queue's: the daemon's */
	unsigned nr_groups;
	struct stats_group group[STATS_GROUPS];
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
/* A group's slot in s for an io of group id at now (a new one taken from
 * the least recently active when all are used), or, without add, NULL
 * when it has none. */
struct stats_group *stats_group(struct stats *s, uint64_t id, bool add,
				uint64_t now);

/* names.c: settings chosen by name */
/* The index of name in names[n] (NULL entries skipped), or -1. */
int names_index(const char *const *names, size_t n, const char *name);

/* The backing_io setting's modes */
enum backing_io {
	BACKING_IO_AUTO,	/* the backing descriptor follows the opener */
	BACKING_IO_DIRECT,	/* always O_DIRECT */
	BACKING_IO_BUFFERED,	/* never O_DIRECT */
};
/* A mode by name, or -1. */
int backing_io_parse(const char *name);
bool backing_io_name_valid(const char *name);
const char *backing_io_name(enum backing_io mode);

/* The engine setting's names */
enum engine {
	ENGINE_THREADS,		/* dispatch workers, one syscall each */
	ENGINE_URING,		/* one io_uring, threads ios in flight */
};
/* An engine by name, or -1. */
int engine_parse(const char *name);
bool engine_name_valid(const char *name);

/* metrics_addr.c: the metrics setting's address */
#define METRICS_ADDR_HOST_MAX 256
/* "off", or HOST:PORT, [HOST]:PORT, :PORT (loopback), port 1-65535. */
bool metrics_addr_valid(const char *addr);
/* Split addr into host (METRICS_ADDR_HOST_MAX bytes; empty: loopback) and
 * port (6 bytes); false if it is not HOST:PORT, [HOST]:PORT or :PORT. */
bool metrics_addr_split(const char *addr, char *host, char *port);

/* io.c: struct io, one queued unit of I/O, and its parts */
struct io_part {
	struct io_part *next;
	void *req;		/* the daemon's fuse_req_t; NULL elsewhere */
	void *buf;		/* read destination or write data */
	void *own;		/* non-NULL: buf lies in this malloc'd block,
				 * freed in its place (an adopted buffer) */
	sem_t *lender;		/* non-NULL: buf is lent; post when done */
	bool borrowed;		/* buf is where the request arrived, valid
				 * until its reply (fusering.c) */
	size_t len;
	ssize_t result;		/* bytes done, or -errno, set at completion */
	bool whole;		/* a write whose writer cannot see a short
				 * count (writeback): cut short, it fails */
	unsigned write_epoch;	/* from fs_inode_write_begin, for writes */
};

struct io {
	struct elv_request rq;	/* the scheduler's view */
	struct inode *inode;	/* the daemon's; NULL elsewhere */
	int fd;			/* backing fd (not owned) */
	/* fd is O_DIRECT and needs this alignment (0: buffered fd); an
	 * unaligned direct io goes through a bounce buffer (dio.c). */
	unsigned dio_align;
	bool dio_unaligned;
	struct io_part *parts, *parts_tail;
	unsigned nr_parts;
	uint64_t dispatch_ns;	/* set by the queue at dispatch */
	struct io *throttle_next;	/* throttle.c's FIFO, while parked */
	struct io *hash_next[2];	/* queue.c's merge hashes, queue lock */
	void (*end)(struct io *io);	/* called once, after completion */
};

/* Set up io with its one part p (both zeroed) for len bytes at off of
 * file, without a buffer or a descriptor (fd -1): the way to build an io
 * whose memory the caller holds (the replay's pools, the unit tests). */
void io_init(struct io *io, struct io_part *p, enum elv_dir dir,
	     uint64_t file, uint64_t off, size_t len);
/* Allocate an io of one part, without a buffer (a read's is allocated
 * when it is performed, so that queued reads hold no data memory). */
struct io *io_new(enum elv_dir dir, uint64_t file, int fd,
		  unsigned dio_align, uint64_t off, size_t len);
/* A buffer of len bytes for io (aligned for a direct one), or NULL;
 * io_free_buf frees it (all parts of an io have the same alignment). */
void *io_alloc_buf(const struct io *io, size_t len);
void io_free_buf(const struct io *io, void *buf);
void io_free(struct io *io);
/* Give each part its result from done bytes moved and the positive errno
 * that stopped the transfer (0: end of file), in order. */
void io_spread(struct io *io, size_t done, int err);
/* queue.c: the request queue */
typedef uint64_t (*queue_clock_fn)(void *arg);
struct queue_params {
	unsigned nr_requests;
	queue_clock_fn clock;	/* NULL: clock_now_ns */
	void *clock_arg;
	/* The scheduler asked to be called at at_ns (timer or test). */
	void (*wakeup_at)(void *arg, uint64_t at_ns);
	void *wakeup_arg;
	/*
	 * Request events ('Q' queued, 'M' and 'F' back and front merged,
	 * 'D' dispatched, 'C' completed, with its wait and service times and
	 * error: 0, or the first part's -errno), called under the queue
	 * lock; NULL: none.  The daemon's trace.
	 */
	void (*trace)(void *arg, char action, const struct elv_request *rq,
		      uint64_t now_ns, uint64_t wait_ns, uint64_t service_ns,
		      int error);
	void *trace_arg;
	/* An io emptied by a merge; NULL: free().  The replay's pool. */
	void (*free_shell)(void *arg, struct io *io);
	void *free_shell_arg;
	/*
	 * The path of a control group for the scheduler (the host's
	 * cgroup_path service), called under the queue lock.  NULL: only
	 * the root group is known ("/").  The daemon's control groups.
	 */
	int (*cgroup_path)(void *arg, uint64_t cgroup, char *buf, size_t len);
	void *cgroup_path_arg;
	/*
	 * The weight of a control group for the scheduler (the host's
	 * cgroup_weight service), called under the queue lock; answers
	 * outside [ELV_CGROUP_WEIGHT_MIN, MAX] are clamped.  NULL: every
	 * group has ELV_CGROUP_WEIGHT_DEFAULT.
	 */
	uint32_t (*cgroup_weight)(void *arg, uint64_t cgroup);
	void *cgroup_weight_arg;
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
 * slot: true and *next (io or NULL; with next NULL, queue_submit); else
 * false, io untouched. */
bool queue_submit_idle(struct queue *q, struct io *io, struct io **next);
/* Also call fn(arg), under the queue lock, wherever a worker would be
 * woken to dispatch; fn must take no lock but leaves (uring.c). */
void queue_set_work(struct queue *q, void (*fn)(void *arg), void *arg);
/* After queue_stop, with nothing queued: a dispatcher may end. */
bool queue_stopped(struct queue *q);
/* io was performed (its parts' results are set). */
void queue_done(struct queue *q, struct io *io);
/* The timer fired: a scheduler wake-up is due. */
void queue_kick(struct queue *q);
/*
 * Process pid has exited: tell the scheduler (its exit_process hook,
 * called under the queue lock), then let a worker dispatch what it may
 * no longer hold back for pid.  For the daemon, once it sees an exit.
 */
void queue_process_exited(struct queue *q, pid_t pid);
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

/*
 * throttle.c: blk-throttle above the queue.  Each control group's
 * requests are charged to budgets of bytes and ios per second (its
 * limits); one that would overdraw them waits, parked in its group's FIFO
 * of its direction, outside the queue, until the budget has refilled.
 */
/* Budgets refill continuously and hold at most this much time's worth. */
#define THROTTLE_SLICE_NS 100000000ull
/* Parked groups' limits are asked again at least this often. */
#define THROTTLE_REFRESH_NS 250000000ull
/* A group's current limits (zeroed: none); called without any lock of
 * the throttle's.  0, or -errno (the group is gone: keep the old ones). */
typedef int (*throttle_limits_fn)(void *arg, uint64_t cgroup,
				  struct throttle_limits *lim);
struct throttle;
/* NULL (errno set) on failure. */
struct throttle *throttle_new(throttle_limits_fn limits, void *arg);
/* After throttle_stop, once throttle_next has returned NULL. */
void throttle_free(struct throttle *t);
/* Whether io's group has a limit of io's direction now. */
bool throttle_limited(struct throttle *t, const struct io *io);
/* Charge io to its group: false, it goes on to the queue now; true, it is
 * parked and the throttle's until throttle_next returns it. */
bool throttle_submit(struct throttle *t, struct io *io);
/* For the releasing thread: the next parked io its budget allows, waiting
 * for one; after throttle_stop every parked io at once, then NULL. */
struct io *throttle_next(struct throttle *t);
/* Release everything parked, limits or not (unmount). */
void throttle_stop(struct throttle *t);

/* elevator.c: the scheduler registry and online switching */
/*
 * A scheduler or counter name: [a-z0-9_-]{1,ELV_NAME_MAX}.  Names come
 * from users (a write to .control/scheduler) and end up in a path, so
 * '/' and ".." are ruled out.
 */
#define ELV_NAME_MAX 31
bool elv_name_valid(const char *name, size_t len);
/* "noop deadline\n", with the active one (if any) in brackets. */
int elv_list_names(char *buf, size_t size, const char *active);
/* The same without brackets or newline, for a message ("" if too long). */
void elv_available(char *buf, size_t size);
int elv_register(const struct elevator_type *type, const char *origin);
void elv_unregister_all(void);
const struct elevator_type *elv_find(const char *name);
/* The i-th registered scheduler, in registration order, or NULL. */
const struct elevator_type *elv_nth(unsigned i);
/* Find name, loading NAME.so from the module directory if needed. */
const struct elevator_type *elv_get(const char *name);
/* "noop [deadline] ... kyber\n": the registered ones, then the modules
 * a switch would load now (module_foreach_file); length or -ENOSPC. */
int elv_show(struct queue *q, char *buf, size_t size);
/* Switch to the scheduler named exactly by buf (control.c strips a
 * user's write first); 0, or -errno and why in a few words (a failed
 * switch logs its own reason; why stays as it was). */
int elv_store(struct queue *q, const char *buf, size_t len, char *why,
	      size_t size);
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
/*
 * A tunable's value for the future instances of its scheduler: the
 * configuration file's sections, and the registry's copy of them.
 */
struct elv_tunable_value {
	struct elv_tunable_value *next;
	const struct elevator_type *type;
	const struct elv_tunable *t;
	int64_t value;
};
/* Set t's value in *list, adding it there if need be; 0 or -ENOMEM. */
int elv_tunable_value_put(struct elv_tunable_value **list,
			  const struct elevator_type *type,
			  const struct elv_tunable *t, int64_t value);
void elv_tunable_values_free(struct elv_tunable_value *list);
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
/* fn(NAME) for every NAME.so a switch may load now; nothing logged. */
void module_foreach_file(void (*fn)(const char *name, void *arg), void *arg);
void module_unload_all(void);

/* diskmodel.c: a disk's service time (hdd or ssd), charged at dispatch */
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
/* diskmodel_next for one thread that must not sleep (uring.c): NULL and
 * *free_ns, when the hdd's head frees, while it is busy; else
 * queue_try_next, booked as diskmodel_next does. */
struct io *diskmodel_try_next(struct diskmodel *dm, struct queue *q,
			      uint64_t *end_ns, uint64_t *free_ns);
/* Sleep until end_ns on clock_now_ns()'s clock, if it is still ahead. */
void diskmodel_wait(uint64_t end_ns);

#endif /* FUSE_IOSCHED_H */
