/* SPDX-License-Identifier: MIT */
/*
 * fuse-iosched scheduler ABI, version 2.
 *
 * A scheduler is one struct elevator_type: a name, a description, a table
 * of methods (struct elevator_ops) and a table of tunables.  The host binds
 * one instance of a scheduler to its request queue through a struct
 * elevator_queue.  Schedulers are built as shared objects that export one
 * symbol, made by IOSCHED_ELEVATOR(), which also fills in the ABI version
 * and the structure's size; the host refuses a module whose abi_version
 * differs from its own.
 *
 * Every public name starts with elv_, ELV_, elevator_ or IOSCHED_ (and the
 * entry point is iosched_elevator), so the header can be included after
 * <linux/ioprio.h>, <linux/fs.h> and the like, and from C++.
 *
 * Rules for scheduler authors (fuse-iosched-scheduler(3) says more):
 *  - Every method except init_queue and exit_queue is called with the
 *    queue lock held, from any thread, one at a time per queue.  init_queue
 *    runs before the instance is attached to the queue and exit_queue after
 *    it was detached, so neither races with the other methods.  No method
 *    may block, sleep or perform I/O.
 *  - Schedulers never read a clock: the host passes "now" (nanoseconds on a
 *    monotonic clock, or a virtual clock in tests) to the methods that need
 *    it, and calls dispatch again at the time asked for with
 *    elv_wakeup_at().
 *  - A request is queued in the scheduler from add_request until dispatch
 *    returns it (or merged_requests takes it away).  From add_request until
 *    completed (or merged_requests) the elv_* fields of the request are the
 *    scheduler's alone, dispatched or not; the host never touches them.
 */
#ifndef FUSE_IOSCHED_ELEVATOR_H
#define FUSE_IOSCHED_ELEVATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IOSCHED_ABI_VERSION 2

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
 * and bytes when it merges).
 */
struct elv_request {
	enum elv_dir dir;
	bool sync;		/* a process waits for it (reads, O_SYNC writes) */
	bool sync_write;	/* a write the kernel would send as a sync
				 * write: its file was opened O_SYNC,
				 * O_DSYNC or O_DIRECT (false for reads).
				 * Without writeback_cache every write is
				 * sync (write(2) waits), not every one is
				 * sync_write.  Added in 0.3, in what was
				 * padding: hosts before it leave it 0 */
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

	/* The scheduler's, from add_request until completed. */
	struct elv_list elv_sort;	/* e.g. a sector-sorted list */
	struct elv_list elv_fifo;	/* e.g. an expiry-ordered list */
	uint64_t elv_deadline_ns;	/* e.g. FIFO expiry time */
	void *elv_priv[2];		/* e.g. a per-process queue */
};

static inline uint64_t elv_rq_end_sector(const struct elv_request *rq)
{
	return rq->sector + rq->nr_sectors;
}

/*
 * Sector order on a list threaded through elv_sort.  Insert walks back
 * from the tail, short for a sequential stream; equal sectors keep
 * arrival order.
 */
#define elv_rq_sort_entry(l) elv_list_entry(l, struct elv_request, elv_sort)

static inline void elv_rq_sort_add(struct elv_list *head,
				   struct elv_request *rq)
{
	struct elv_list *pos;

	for (pos = head->prev; pos != head; pos = pos->prev)
		if (elv_rq_sort_entry(pos)->sector <= rq->sector)
			break;
	elv_list_add(&rq->elv_sort, pos);
}

/* The request after rq in sector order, or NULL at the end. */
static inline struct elv_request *elv_rq_sort_next(struct elv_list *head,
						   struct elv_request *rq)
{
	return rq->elv_sort.next == head ? NULL :
		elv_rq_sort_entry(rq->elv_sort.next);
}

/* The request before rq in sector order, or NULL at the start. */
static inline struct elv_request *elv_rq_sort_prev(struct elv_list *head,
						   struct elv_request *rq)
{
	return rq->elv_sort.prev == head ? NULL :
		elv_rq_sort_entry(rq->elv_sort.prev);
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

/* True when rq is out of sector order with its neighbours on head. */
static inline bool elv_rq_sort_misplaced(struct elv_list *head,
					 struct elv_request *rq)
{
	struct elv_request *before = elv_rq_sort_prev(head, rq);
	struct elv_request *after = elv_rq_sort_next(head, rq);

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

struct elevator_host {
	/* Call dispatch again, with force false, no later than at_ns. */
	void (*wakeup_at)(struct elevator_queue *eq, uint64_t at_ns);
	void (*log)(struct elevator_queue *eq, enum elv_log_level level,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
};

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

/* ------------------------------------------------------------------ */
/* Methods.                                                            */

/*
 * Merges, all found by the host (as block/elevator.c's hash does): a queued
 * request rq and a request next of the same file, direction and backing
 * descriptor that touch in file offsets, together at most
 * IOSCHED_MAX_SECTORS.
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

struct elevator_ops {
	/* Optional.  Set up elevator_data; tunables hold their values. */
	int (*init_queue)(struct elevator_queue *eq);
	/* Optional.  Called with no request queued or in flight. */
	void (*exit_queue)(struct elevator_queue *eq);

	/*
	 * Optional.  The host found a merge of the given type (see enum
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
	 * Optional.  rq grew by a merge of a new request (ELV_BACK_MERGE or
	 * ELV_FRONT_MERGE, when its sector moved down); re-sort it.
	 */
	void (*merged)(struct elevator_queue *eq, struct elv_request *rq,
		       enum elv_merge type);
	/*
	 * Optional.  next, a queued request, was merged into rq, also queued
	 * (ELV_REQUEST_MERGE); forget next (it leaves the scheduler now).  rq
	 * keeps the earlier of the two deadlines.  Without this hook the host
	 * never merges two queued requests.
	 */
	void (*merged_requests)(struct elevator_queue *eq,
				struct elv_request *rq,
				struct elv_request *next);

	/* Required.  Take ownership of rq. */
	void (*add_request)(struct elevator_queue *eq, struct elv_request *rq,
			    uint64_t now_ns);
	/*
	 * Required.  Hand over the next request to perform, or NULL.  With
	 * force true (the queue is draining for a switch or for shutdown) a
	 * scheduler must not idle: if it holds a request, it returns one.
	 */
	struct elv_request *(*dispatch)(struct elevator_queue *eq,
					uint64_t now_ns, bool force);
	/* Optional.  A dispatched request finished. */
	void (*completed)(struct elevator_queue *eq, struct elv_request *rq,
			  uint64_t now_ns);
	/* Required.  True while the scheduler holds requests. */
	bool (*has_work)(struct elevator_queue *eq);
	/*
	 * Optional.  rq's direction holds nr_requests requests (queued and
	 * in flight; reads and writes count apart): return ELV_MQUEUE_MUST
	 * to admit rq all the same, as the kernel's anticipatory and cfq do
	 * for the process they idle for, or ELV_MQUEUE_MAY to let it wait.
	 * The host admits at most half of nr_requests more.  rq is new: its
	 * elv_* fields are not the scheduler's.
	 */
	enum elv_may_queue (*may_queue)(struct elevator_queue *eq,
					const struct elv_request *rq);
};

/* ------------------------------------------------------------------ */
/* Tunables, shown and set as files under .control/iosched/.           */

/*
 * A plain tunable is an int64_t inside elevator_data at the given offset.
 * The host sets it to def before init_queue and refuses writes outside
 * [min, max] with EINVAL (it does not clamp); unit is for people ("ms",
 * "KiB", "" ...).  A table holds at most IOSCHED_TUNABLES_MAX entries
 * before its NULL name (the loader refuses longer ones).
 *
 * Optional callbacks, called under the queue lock like methods:
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

#define ELV_TUNABLE(type, field, def, min, max, unit, desc) \
	{ #field, offsetof(type, field), (def), (min), (max), (unit), (desc), \
	  0, NULL, NULL }

/* A plain tunable whose writes go through store(eq, value). */
#define ELV_TUNABLE_STORE(type, field, def, min, max, unit, desc, store) \
	{ #field, offsetof(type, field), (def), (min), (max), (unit), (desc), \
	  0, NULL, (store) }

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
 * the scheduler counts up in its methods (under the queue lock) and the
 * host reads under the same lock.  Counters start at zero with each
 * instance, as the kernel's per-elevator statistics do, so a switch away
 * and back starts them again.  A table holds at most IOSCHED_COUNTERS_MAX
 * entries before its NULL name; names are [a-z0-9_-]{1,31} (the loader
 * refuses anything else).
 */
#define IOSCHED_COUNTERS_MAX 31

struct elv_counter {
	const char *name;
	size_t offset;
};

#define ELV_COUNTER(type, field) { #field, offsetof(type, field) }

/* ------------------------------------------------------------------ */
/* The scheduler's description.                                        */

/*
 * abi_version and struct_size come first in every version, and are filled
 * in by IOSCHED_ELEVATOR().  Size policy (as nbdkit's): fields added within
 * ABI 2 go at the end of this structure; the host accepts a structure of
 * at least the 2.0 size (up to and including tunables), uses the first
 * struct_size bytes it knows, and zeroes the rest, so a module built
 * against an older 2.x header has the newer optional hooks absent.
 */
struct elevator_type {
	unsigned abi_version;	/* IOSCHED_ABI_VERSION */
	size_t struct_size;	/* sizeof(struct elevator_type) */
	const char *name;	/* [a-z0-9_-]{1,31} */
	const char *description;
	size_t data_size;	/* bytes the host allocates as elevator_data */
	struct elevator_ops ops;
	const struct elv_tunable *tunables;	/* ends with a NULL name */
	/* Added in 0.3.0; absent (NULL) in a module built against 0.2. */
	const struct elv_counter *counters;	/* ends with a NULL name */
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
