/* SPDX-License-Identifier: MIT */
/*
 * fuse-iosched scheduler ABI, version 3 (see <fuse-iosched/version.h>).
 *
 * A scheduler is one flat struct elevator_type: its name, description,
 * tunables, counters and hooks, sized and versioned as nbdkit's plugin
 * structure is.  Modules are shared objects exporting one symbol, made by
 * IOSCHED_ELEVATOR(), which also fills in the ABI version and the
 * structure's size.  The host binds one instance of a scheduler to its
 * request queue through a struct elevator_queue, and offers its services
 * through a sized struct elevator_host.
 *
 * Every public name starts with elv_, ELV_, elevator_ or IOSCHED_ (and the
 * entry point is iosched_elevator), so the header can be included after
 * <linux/ioprio.h>, <linux/fs.h> and the like, and from C++.
 *
 * Compatibility (as nbdkit's): within ABI 3, fields are only ever appended,
 * to struct elevator_type (hooks), struct elevator_host (services) and
 * struct elv_request (host-set fields, after the scheduler's); each says
 * since which 3.x it exists.  The host refuses another major version with
 * a log line naming both.
 *
 * What the host promises a scheduler (fuse-iosched-scheduler(3) says more):
 *  - Every hook except init_queue and exit_queue is called with the queue
 *    lock held, from any thread, one at a time per queue.  init_queue runs
 *    before the instance is attached to the queue and exit_queue after it
 *    was detached, so neither races with the others.  No hook may block,
 *    sleep or perform I/O.
 *  - Schedulers never read a clock: the host passes "now" (nanoseconds on a
 *    monotonic clock, or a virtual clock in tests and the replay).
 *  - dispatch is called only while a request is queued, and may be called
 *    at any time then: after every submission (a new or merged request),
 *    after every completion, when a wake-up asked for with elv_wakeup_at()
 *    falls due, and whenever a dispatch thread is free.  Returning NULL is
 *    always allowed; a scheduler that waits must ask for a wake-up again
 *    on each call that returns NULL, since the host keeps only the
 *    earliest one asked for and forgets it once it has fired.  A wake-up
 *    that falls due while nothing is queued calls nothing: the next
 *    add_request is followed by a dispatch call anyway.
 *  - A request is queued in the scheduler from add_request until dispatch
 *    returns it (or merged_requests takes it away).  From add_request until
 *    completed (or merged_requests) the elv_* fields of the request are the
 *    scheduler's alone, dispatched or not; the host never touches them.
 */
#ifndef FUSE_IOSCHED_ELEVATOR_H
#define FUSE_IOSCHED_ELEVATOR_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rbtree.h"
#include "version.h"

#ifdef __cplusplus
#include <type_traits>
extern "C" {
#endif

/* Sector size used for all sector arithmetic. */
#define IOSCHED_SECTOR_SHIFT 9

/*
 * The largest request the host performs, in sectors (1 MiB): merges stop
 * there, and FUSE never sends a larger read or write.
 */
#define IOSCHED_MAX_SECTORS 2048

/* Tunables in milliseconds, times in nanoseconds; negative counts as 0. */
#define IOSCHED_NS_PER_MS 1000000ULL

static inline uint64_t elv_ms_to_ns(int64_t ms)
{
	return (uint64_t)(ms < 0 ? 0 : ms) * IOSCHED_NS_PER_MS;
}

static inline int64_t elv_ns_to_ms(uint64_t ns)
{
	return (int64_t)(ns / IOSCHED_NS_PER_MS);
}

/* ------------------------------------------------------------------ */
/* Intrusive doubly-linked list, for schedulers' queues.               */

struct elv_list {
	struct elv_list *next, *prev;
};

#define ELV_LIST_INIT(name) { &(name), &(name) }

static inline void elv_list_init(struct elv_list *l)
{
	l->next = l->prev = l;
}

static inline bool elv_list_empty(const struct elv_list *l)
{
	return l->next == l;
}

static inline void elv_list_insert(struct elv_list *n, struct elv_list *prev,
				   struct elv_list *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

/* Insert n after pos. */
static inline void elv_list_add(struct elv_list *n, struct elv_list *pos)
{
	elv_list_insert(n, pos, pos->next);
}

/* Insert n before pos (at the tail when pos is the list head). */
static inline void elv_list_add_tail(struct elv_list *n, struct elv_list *pos)
{
	elv_list_insert(n, pos->prev, pos);
}

static inline void elv_list_del(struct elv_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	elv_list_init(n);
}

#define elv_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#define elv_list_entry(ptr, type, member) elv_container_of(ptr, type, member)

#define elv_list_first(head, type, member) \
	elv_list_entry((head)->next, type, member)

#define elv_list_for_each(pos, head) \
	for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

/* ------------------------------------------------------------------ */
/* Per-process tables: chains of nodes keyed by pid.                   */

/*
 * The caller embeds a node in its own per-process data and owns an array
 * of 1 << bits chain heads (bits 1 to 31), zeroed.  Nodes are pushed at
 * the head of their chain.  Inline: each module keeps its own copy.
 */
struct elv_pid_node {
	pid_t pid;
	struct elv_pid_node *next;
};

static inline struct elv_pid_node **elv_pid_bucket(struct elv_pid_node **tab,
						   unsigned bits, pid_t pid)
{
	return &tab[((uint32_t)pid * 2654435761u) >> (32 - bits)];
}

static inline struct elv_pid_node *elv_pid_find(struct elv_pid_node **tab,
						unsigned bits, pid_t pid)
{
	struct elv_pid_node *n = *elv_pid_bucket(tab, bits, pid);

	while (n != NULL && n->pid != pid)
		n = n->next;
	return n;
}

/* Enter n, whose pid is set and not in the table yet. */
static inline void elv_pid_add(struct elv_pid_node **tab, unsigned bits,
			       struct elv_pid_node *n)
{
	struct elv_pid_node **pp = elv_pid_bucket(tab, bits, n->pid);

	n->next = *pp;
	*pp = n;
}

/* Take n, which is in the table, out of it. */
static inline void elv_pid_del(struct elv_pid_node **tab, unsigned bits,
			       struct elv_pid_node *n)
{
	struct elv_pid_node **pp = elv_pid_bucket(tab, bits, n->pid);

	while (*pp != n)
		pp = &(*pp)->next;
	*pp = n->next;
	n->next = NULL;
}

/* ------------------------------------------------------------------ */
/* I/O priorities, as ionice(1) and ioprio_set(2) define them.         */

enum {
	ELV_IOPRIO_CLASS_NONE = 0,
	ELV_IOPRIO_CLASS_RT = 1,
	ELV_IOPRIO_CLASS_BE = 2,
	ELV_IOPRIO_CLASS_IDLE = 3,
};

#define IOSCHED_IOPRIO_CLASS_SHIFT 13
#define IOSCHED_IOPRIO_LEVELS 8
#define IOSCHED_IOPRIO(class, level) \
	(((class) << IOSCHED_IOPRIO_CLASS_SHIFT) | (level))
#define IOSCHED_IOPRIO_CLASS(p) ((p) >> IOSCHED_IOPRIO_CLASS_SHIFT)
#define IOSCHED_IOPRIO_LEVEL(p) ((p) & ((1 << IOSCHED_IOPRIO_CLASS_SHIFT) - 1))

/*
 * The class that applies to ioprio as an index, in order of precedence:
 * 0 real-time, 1 best-effort, 2 idle.  Class NONE (never set with ionice)
 * and anything unknown are best-effort, as in the kernel's
 * ioprio_class_to_prio.  Inline: it needs nothing of the host (since 3.0).
 */
static inline unsigned elv_ioprio_class_index(int ioprio)
{
	switch (IOSCHED_IOPRIO_CLASS(ioprio)) {
	case ELV_IOPRIO_CLASS_RT:
		return 0;
	case ELV_IOPRIO_CLASS_IDLE:
		return 2;
	default:
		return 1;
	}
}

/* ------------------------------------------------------------------ */
/* Requests.                                                           */

enum elv_dir {
	ELV_READ = 0,
	ELV_WRITE = 1,
};

/*
 * What a scheduler sees of a request.  The host owns the request and embeds
 * this structure in its own; fields above the elv_ ones are set by the host
 * and are read-only for the scheduler (the host updates sector, nr_sectors
 * and bytes when it merges).  Fields added within ABI 3 go at the end.
 *
 * sync and sync_write against the kernel's REQ_SYNC: the kernel marks a
 * read, and a write from an O_SYNC, O_DSYNC or O_DIRECT file (or fsync's
 * writeback of one), REQ_SYNC; its schedulers keep sync and async queues
 * apart by that bit.  Here sync says that a process waits for the request
 * (every read; a write unless it is writeback under writeback_cache), and
 * sync_write is the kernel's REQ_SYNC for a write (false for reads).
 * Without writeback_cache every write is sync (write(2) waits) but not
 * every one is sync_write.  A scheduler modelled on the kernel's uses
 * "dir == ELV_READ || sync_write" where the kernel tests REQ_SYNC.  A
 * merged request is sync (sync_write) when either part was.
 */
struct elv_request {
	enum elv_dir dir;
	bool sync;		/* a process waits for it (see above) */
	bool sync_write;	/* a write the kernel would mark REQ_SYNC */
	uint64_t file;		/* identifies the backing file; merges
				 * stay in one, and in one descriptor of
				 * it (the host's, not shown here) */
	uint64_t offset;	/* byte offset in that file */
	uint64_t bytes;		/* length in bytes */
	uint64_t sector;	/* device sector of the first byte */
	uint64_t nr_sectors;	/* length in sectors, at least 1 */
	pid_t pid;		/* submitting process, 0 for the kernel */
	int ioprio;		/* IOSCHED_IOPRIO(class, level) */
	uint64_t arrival_ns;	/* when the host queued it */
	/*
	 * Since 3.0.  The submitter's control group: an opaque id, stable
	 * while the group exists, 0 for the root group (and for every
	 * request of a host that does not tell groups apart).  Requests of
	 * different groups are never merged.  elv_cgroup_path() names it.
	 */
	uint64_t cgroup;

	/* The scheduler's, from add_request until completed. */
	struct elv_rb_node elv_rb;	/* e.g. sector order */
	struct elv_list elv_fifo;	/* e.g. an expiry-ordered list */
	uint64_t elv_deadline_ns;	/* e.g. FIFO expiry time */
	void *elv_priv[2];		/* e.g. a per-process queue */
};

static inline uint64_t elv_rq_end_sector(const struct elv_request *rq)
{
	return rq->sector + rq->nr_sectors;
}

/*
 * Sector order in an rb-tree threaded through elv_rb (rbtree.h): O(log n)
 * where the kernel's elevators also keep an rb-tree.  A request goes
 * after those of equal sector, so that they keep arrival order.
 */
#define elv_rq_rb_entry(n) elv_container_of(n, struct elv_request, elv_rb)

static inline struct elv_request *elv_rq_rb_entry_or_null(
	struct elv_rb_node *n)
{
	return n != NULL ? elv_rq_rb_entry(n) : NULL;
}

static inline void elv_rq_sort_add(struct elv_rb_root *root,
				   struct elv_request *rq)
{
	struct elv_rb_node **link = &root->node, *parent = NULL;

	while (*link != NULL) {
		parent = *link;
		link = rq->sector < elv_rq_rb_entry(parent)->sector ?
			&parent->left : &parent->right;
	}
	elv_rb_link_node(&rq->elv_rb, parent, link);
	elv_rb_insert_color(root, &rq->elv_rb);
}

static inline void elv_rq_sort_del(struct elv_rb_root *root,
				   struct elv_request *rq)
{
	elv_rb_erase(root, &rq->elv_rb);
}

/* The request of the lowest sector, or NULL when root is empty. */
static inline struct elv_request *elv_rq_sort_first(
	const struct elv_rb_root *root)
{
	return elv_rq_rb_entry_or_null(elv_rb_first(root));
}

/* The request after rq in sector order, or NULL at the end. */
static inline struct elv_request *elv_rq_sort_next(struct elv_request *rq)
{
	return elv_rq_rb_entry_or_null(elv_rb_next(&rq->elv_rb));
}

/* The request before rq in sector order, or NULL at the start. */
static inline struct elv_request *elv_rq_sort_prev(struct elv_request *rq)
{
	return elv_rq_rb_entry_or_null(elv_rb_prev(&rq->elv_rb));
}

/*
 * next, queued, is being merged into rq (merged_requests) and both are on
 * one FIFO through elv_fifo ordered by elv_deadline_ns: rq takes next's
 * place and deadline if next's is earlier, so that merged data is not
 * served later than its oldest part.
 */
static inline void elv_rq_merge_fifo(struct elv_request *rq,
				     struct elv_request *next)
{
	if (next->elv_deadline_ns < rq->elv_deadline_ns) {
		elv_list_del(&rq->elv_fifo);
		elv_list_add(&rq->elv_fifo, &next->elv_fifo);
		rq->elv_deadline_ns = next->elv_deadline_ns;
	}
}

/*
 * True when rq, whose sector a merge moved, is out of sector order with
 * its neighbours: take it out and add it again.
 */
static inline bool elv_rq_sort_misplaced(struct elv_request *rq)
{
	struct elv_request *before = elv_rq_sort_prev(rq);
	struct elv_request *after = elv_rq_sort_next(rq);

	return (before != NULL && before->sector > rq->sector) ||
	       (after != NULL && after->sector < rq->sector);
}

/* ------------------------------------------------------------------ */
/* The queue binding and the host's services.                          */

struct elevator_queue;

enum elv_log_level {
	ELV_LOG_ERR = 3,
	ELV_LOG_WARNING = 4,
	ELV_LOG_INFO = 6,
	ELV_LOG_DEBUG = 7,
};

/*
 * The host's services.  struct_size comes first in every version: a
 * module built against a newer header tests for a service with
 * elv_host_has() before it calls one added after 3.0; the elv_* wrappers
 * below do that.  Services are called with the queue lock held, from the
 * hooks.
 */
struct elevator_host {
	size_t struct_size;	/* sizeof the host's struct elevator_host */

	/* Since 3.0.  Call dispatch again, force false, at at_ns. */
	void (*wakeup_at)(struct elevator_queue *eq, uint64_t at_ns);
	/* Since 3.0.  A line in the daemon's log, the scheduler named. */
	void (*log)(struct elevator_queue *eq, enum elv_log_level level,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
	/*
	 * Since 3.0.  Write the path of control group cgroup (a request's
	 * cgroup field) as it shows under /sys/fs/cgroup, "/" for the root
	 * group, NUL-terminated, into buf of len bytes; return its length
	 * or -errno: -ENOENT for a group the host does not know (gone, or
	 * never seen), -ERANGE when len is too short.  Hosts of 3.0 give
	 * every request group 0 and know only the root group.
	 */
	int (*cgroup_path)(struct elevator_queue *eq, uint64_t cgroup,
			   char *buf, size_t len);
	/*
	 * Since 3.1.  The weight of control group cgroup (a request's
	 * cgroup field) among its sibling groups, in [ELV_CGROUP_WEIGHT_MIN,
	 * ELV_CGROUP_WEIGHT_MAX] as the kernel's io.bfq.weight and
	 * blkio.weight are, ELV_CGROUP_WEIGHT_DEFAULT for a group the host
	 * has no weight for.  Schedulers that divide the device among
	 * groups (bfq, cfq) ask it; it may change while the group lives.
	 */
	uint32_t (*cgroup_weight)(struct elevator_queue *eq, uint64_t cgroup);
};

/* True when the host offers service (a field of struct elevator_host). */
#define elv_host_has(eq, service)                                          \
	((eq)->host->struct_size >= offsetof(struct elevator_host, service) + \
	 sizeof((eq)->host->service) && (eq)->host->service != NULL)

struct elevator_queue {
	const struct elevator_type *type;
	void *elevator_data;	/* type->data_size zeroed bytes, tunables set */
	const struct elevator_host *host;
	void *host_data;	/* the host's; never touched by schedulers */
};

static inline void elv_wakeup_at(struct elevator_queue *eq, uint64_t at_ns)
{
	eq->host->wakeup_at(eq, at_ns);
}

#define elv_log(eq, level, ...) ((eq)->host->log((eq), (level), __VA_ARGS__))

/* The host's cgroup_path, or -ENOSYS from a host without it. */
static inline int elv_cgroup_path(struct elevator_queue *eq, uint64_t cgroup,
				  char *buf, size_t len)
{
	if (!elv_host_has(eq, cgroup_path))
		return -ENOSYS;
	return eq->host->cgroup_path(eq, cgroup, buf, len);
}

/* A control group's weight: the kernel's range and default. */
#define ELV_CGROUP_WEIGHT_MIN 1
#define ELV_CGROUP_WEIGHT_MAX 1000
#define ELV_CGROUP_WEIGHT_DEFAULT 100

/* The host's cgroup_weight, or the default from a host without it. */
static inline uint32_t elv_cgroup_weight(struct elevator_queue *eq,
					 uint64_t cgroup)
{
	if (!elv_host_has(eq, cgroup_weight))
		return ELV_CGROUP_WEIGHT_DEFAULT;
	return eq->host->cgroup_weight(eq, cgroup);
}

/* ------------------------------------------------------------------ */
/* Hooks' arguments and answers.                                       */

/*
 * Merges, all found by the host (as block/elevator.c's hash does): a queued
 * request rq and a request next of the same file, direction, backing
 * descriptor and control group that touch in file offsets, together at
 * most IOSCHED_MAX_SECTORS.
 */
enum elv_merge {
	ELV_NO_MERGE = 0,
	ELV_FRONT_MERGE = 1,	/* next, new, goes in front of rq */
	ELV_BACK_MERGE = 2,	/* next, new, goes after rq */
	ELV_REQUEST_MERGE = 3,	/* next, queued too, goes after rq */
};

/* may_queue's answer: wait for a slot like everyone, or be admitted now. */
enum elv_may_queue {
	ELV_MQUEUE_MAY = 0,
	ELV_MQUEUE_MUST = 1,
};

/* ------------------------------------------------------------------ */
/* Compile-time checks of a field's type, for the table macros below.  */

/*
 * ELV_FIELD_CHECK(type, field, T, msg) is 0 when type's field has type T
 * (the same type, not merely the same size), and does not compile
 * otherwise: the host writes and reads a T there.
 */
#ifdef __cplusplus
#define ELV_FIELD_IS(type, field, T) \
	(std::is_same<decltype(((type *)0)->field), T>::value)
#define ELV_BUILD_CHECK(cond, msg) (sizeof(char[(cond) ? 1 : -1]) - 1)
#else
#define ELV_FIELD_IS(type, field, T) \
	__builtin_types_compatible_p(__typeof__(((type *)0)->field), T)
#define ELV_BUILD_CHECK(cond, msg) \
	(sizeof(struct { _Static_assert(cond, msg); char elv_c; }) - 1)
#endif
#define ELV_FIELD_CHECK(type, field, T, msg)                          \
	ELV_BUILD_CHECK(ELV_FIELD_IS(type, field, T) &&               \
			sizeof(((type *)0)->field) == sizeof(T), msg)

/* ------------------------------------------------------------------ */
/* Tunables, shown and set as files under .control/iosched/.           */

/*
 * A plain tunable is an int64_t inside elevator_data at the given offset.
 * The host sets it to def before init_queue and refuses writes outside
 * [min, max] with EINVAL (it does not clamp); unit is for people ("ms",
 * "KiB", "" ...).  A table holds at most IOSCHED_TUNABLES_MAX entries
 * before its NULL name (the loader refuses longer ones).  Declare entries
 * with the macros below, which refuse to compile unless the field is an
 * int64_t.
 *
 * Optional callbacks, called under the queue lock like hooks:
 *  - show computes the value shown instead of reading the field;
 *  - store applies a value already checked against [min, max], with any
 *    side effect it needs (another field recomputed, say), instead of the
 *    host writing the field; 0 or -errno, passed on to the writer.
 * ELV_TUNABLE_READONLY makes writes fail with EACCES (the file's mode is
 * 0444) and keeps the tunable out of the configuration file.  A read-only
 * tunable with a show callback has no field: offset and def are unused.
 */
#define IOSCHED_TUNABLES_MAX 63

enum elv_tunable_flags {
	ELV_TUNABLE_READONLY = 1u << 0,
};

struct elv_tunable {
	const char *name;
	size_t offset;
	int64_t def, min, max;
	const char *unit;
	const char *description;
	unsigned flags;		/* enum elv_tunable_flags */
	int64_t (*show)(struct elevator_queue *eq);
	int (*store)(struct elevator_queue *eq, int64_t value);
};

/* offsetof(type, field), compiling only for an int64_t field. */
#define ELV_TUNABLE_OFFSET(type, field)                                 \
	(offsetof(type, field) +                                        \
	 ELV_FIELD_CHECK(type, field, int64_t,                          \
			 "a tunable's field must be an int64_t"))

#define ELV_TUNABLE(type, field, def, min, max, unit, desc)              \
	{ #field, ELV_TUNABLE_OFFSET(type, field), (def), (min), (max),  \
	  (unit), (desc), 0, NULL, NULL }

/* A plain tunable whose writes go through store(eq, value). */
#define ELV_TUNABLE_STORE(type, field, def, min, max, unit, desc, store) \
	{ #field, ELV_TUNABLE_OFFSET(type, field), (def), (min), (max),  \
	  (unit), (desc), 0, NULL, (store) }

/* A read-only value computed by show(eq), e.g. an estimate. */
#define ELV_TUNABLE_COMPUTED(name, show, unit, desc) \
	{ (name), 0, 0, INT64_MIN, INT64_MAX, (unit), (desc), \
	  ELV_TUNABLE_READONLY, (show), NULL }

/* True when the tunable lives in a field of elevator_data. */
static inline bool elv_tunable_has_field(const struct elv_tunable *t)
{
	return !(t->show != NULL && (t->flags & ELV_TUNABLE_READONLY));
}

/* ------------------------------------------------------------------ */
/* Counters, shown in .control/stats and the metrics.                  */

/*
 * A counter is a uint64_t inside elevator_data at the given offset, which
 * the scheduler counts up in its hooks (under the queue lock) and the
 * host reads under the same lock.  Counters start at zero with each
 * instance, as the kernel's per-elevator statistics do, so a switch away
 * and back starts them again.  A table holds at most IOSCHED_COUNTERS_MAX
 * entries before its NULL name; names are [a-z0-9_-]{1,31} (the loader
 * refuses anything else).  ELV_COUNTER() refuses to compile unless the
 * field is a uint64_t.
 */
#define IOSCHED_COUNTERS_MAX 31

struct elv_counter {
	const char *name;
	size_t offset;
};

#define ELV_COUNTER(type, field)                                        \
	{ #field, offsetof(type, field) +                               \
		  ELV_FIELD_CHECK(type, field, uint64_t,                \
				  "a counter's field must be a uint64_t") }

/* ------------------------------------------------------------------ */
/* The scheduler's description.                                        */

/*
 * One flat structure: abi_version and struct_size first, filled in by
 * IOSCHED_ELEVATOR(); then what describes the scheduler; then its hooks,
 * each dated by the ABI version that brought it.  Later versions of ABI 3
 * append hooks at the end, never insert or move one.  The host accepts a
 * structure of at least the 3.0 size, uses the first struct_size bytes it
 * knows and takes the rest as absent (NULL), so a module built against an
 * older 3.x header has the newer optional hooks absent, and one built
 * against a newer header has only what this host understands read.
 *
 * Hooks are optional unless marked required; the host checks an optional
 * one before calling it.
 */
struct elevator_type {
	unsigned abi_version;	/* IOSCHED_ABI_VERSION */
	size_t struct_size;	/* sizeof(struct elevator_type) */
	const char *name;	/* [a-z0-9_-]{1,31} */
	const char *description;
	size_t data_size;	/* bytes the host allocates as elevator_data */
	const struct elv_tunable *tunables;	/* ends with a NULL name */
	const struct elv_counter *counters;	/* ends with a NULL name */

	/* Since 3.0.  Set up elevator_data; tunables hold their values. */
	int (*init_queue)(struct elevator_queue *eq);
	/* Since 3.0.  Called with no request queued or in flight. */
	void (*exit_queue)(struct elevator_queue *eq);

	/*
	 * Since 3.0.  The host found a merge of the given type (see enum
	 * elv_merge) and asks before it joins the two: return false to keep
	 * them apart, e.g. when they belong to different per-process queues.
	 * rq is queued.  For ELV_BACK_MERGE and ELV_FRONT_MERGE next is a new
	 * request, never added, whose elv_* fields are not the scheduler's;
	 * for ELV_REQUEST_MERGE next is queued too.  Without this hook every
	 * merge the host finds is made.
	 */
	bool (*allow_merge)(struct elevator_queue *eq,
			    const struct elv_request *rq,
			    const struct elv_request *next,
			    enum elv_merge type);
	/*
	 * Since 3.0.  rq grew by a merge of a new request (ELV_BACK_MERGE or
	 * ELV_FRONT_MERGE, when its sector moved down); re-sort it.
	 */
	void (*merged)(struct elevator_queue *eq, struct elv_request *rq,
		       enum elv_merge type);
	/*
	 * Since 3.0.  next, a queued request, was merged into rq, also queued
	 * (ELV_REQUEST_MERGE); forget next (it leaves the scheduler now).  rq
	 * keeps the earlier of the two deadlines.  Without this hook the host
	 * never merges two queued requests.
	 */
	void (*merged_requests)(struct elevator_queue *eq,
				struct elv_request *rq,
				struct elv_request *next);

	/* Since 3.0.  Required.  Take ownership of rq. */
	void (*add_request)(struct elevator_queue *eq, struct elv_request *rq,
			    uint64_t now_ns);
	/*
	 * Since 3.0.  Required.  Hand over the next request to perform, or
	 * NULL; when and how often the host calls it is said at the top of
	 * this file.  With force true (the queue is draining for a switch or
	 * for shutdown) a scheduler must not idle: if it holds a request, it
	 * returns one.
	 */
	struct elv_request *(*dispatch)(struct elevator_queue *eq,
					uint64_t now_ns, bool force);
	/* Since 3.0.  A dispatched request finished. */
	void (*completed)(struct elevator_queue *eq, struct elv_request *rq,
			  uint64_t now_ns);
	/* Since 3.0.  Required.  True while the scheduler holds requests. */
	bool (*has_work)(struct elevator_queue *eq);
	/*
	 * Since 3.0.  rq's direction holds nr_requests requests (queued and
	 * in flight; reads and writes count apart): return ELV_MQUEUE_MUST
	 * to admit rq all the same, as the kernel's anticipatory and cfq do
	 * for the process they idle for, or ELV_MQUEUE_MAY to let it wait.
	 * The host admits at most half of nr_requests more.  rq is new: its
	 * elv_* fields are not the scheduler's.
	 */
	enum elv_may_queue (*may_queue)(struct elevator_queue *eq,
					const struct elv_request *rq);
	/*
	 * Since 3.0.  How many slots of rq's direction rq may fill: the host
	 * lets rq wait for a slot while its direction holds that many
	 * requests or more (queued and in flight), even when fewer than
	 * nr_requests, as the kernel's limit_depth does with the scheduler
	 * tags.  The answer is clamped to [1, nr_requests], the current
	 * limit, and asked again whenever a slot of the direction frees;
	 * may_queue is asked only once the direction is full.  kyber keeps a
	 * quarter of the write slots for synchronous writes this way.  rq is
	 * new: its elv_* fields are not the scheduler's.
	 */
	unsigned (*limit_depth)(struct elevator_queue *eq,
				const struct elv_request *rq,
				unsigned nr_requests);
	/*
	 * Since 3.0.  Process pid, which may have submitted requests, has
	 * exited (the kernel's exit of an I/O context): stop waiting for
	 * its next request, and free what is kept for it once none of its
	 * requests is queued or in flight.  Some may still be (its
	 * writeback): they are served as usual.  The host may tell of a pid
	 * the scheduler never saw; a later request of the same pid comes
	 * from a new process, except one the process sent before it exited
	 * and the host handled after telling: the host then tells the exit
	 * again.  pid is rq->pid's: the daemon's are thread ids, each thread
	 * told of on its own.  dispatch is called after it when a request
	 * is queued.
	 */
	void (*exit_process)(struct elevator_queue *eq, pid_t pid,
			     uint64_t now_ns);
};

#define IOSCHED_ELEVATOR_SYMBOL "iosched_elevator"

#ifdef __cplusplus
#define IOSCHED_EXTERN_C extern "C"
#else
#define IOSCHED_EXTERN_C
#endif

/*
 * Define function fn returning &type, with type's ABI version and size
 * filled in.  type is a static, non-const struct elevator_type; the host
 * calls fn once, when it loads the module.  The macro ends with a
 * declaration, so that the caller's semicolon is not an empty statement.
 */
#define IOSCHED_ELEVATOR_FN(fn, type)                                        \
	IOSCHED_EXTERN_C __attribute__((visibility("default")))              \
	const struct elevator_type *fn(void);                                \
	IOSCHED_EXTERN_C const struct elevator_type *fn(void)                \
	{                                                                    \
		(type).abi_version = IOSCHED_ABI_VERSION;                    \
		(type).struct_size = sizeof(struct elevator_type);           \
		return &(type);                                              \
	}                                                                    \
	IOSCHED_EXTERN_C const struct elevator_type *fn(void)

/*
 * Export a scheduler from a module, after its definition:
 *   static struct elevator_type my_type = { .name = "my", ... };
 *   IOSCHED_ELEVATOR(my_type);
 * A module holds one scheduler.
 */
#define IOSCHED_ELEVATOR(type) IOSCHED_ELEVATOR_FN(iosched_elevator, type)

#ifdef __cplusplus
}
#endif

#endif /* FUSE_IOSCHED_ELEVATOR_H */
