/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The kyber I/O scheduler, after the Linux one (Omar Sandoval, 2017): no
 * sorting, a FIFO and a depth (the kernel's tokens) per domain, depths
 * rescaled from latency histograms by the kernel's rules.  What it does
 * and where it differs from the kernel is in fuse-iosched(8), kyber.
 *
 * Invariants:
 * - Kyber holds work back only by depth, and a domain at its depth has
 *   requests in flight whose completion makes the host dispatch again:
 *   it needs no wake-ups.
 * - The timer runs lazily, at the first dispatch or completion after it
 *   expires, before that event's own work and as if at its expiry (depths
 *   are read only by dispatch, so this is the kernel's timer exactly).
 * - Every hook is O(1): fixed-size histograms, no allocation; merges are
 *   the host's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuse-iosched/elevator.h"

enum ky_domain {
	KY_READ,
	KY_WRITE,
	KY_DISCARD,
	KY_OTHER,
	KY_NR_DOMAINS,
};

/* Domains below this one have a latency target and are measured. */
#define KY_NR_MEASURED		KY_OTHER

static const char *const ky_domain_names[KY_NR_DOMAINS] = {
	[KY_READ] = "read",
	[KY_WRITE] = "write",
	[KY_DISCARD] = "discard",
	[KY_OTHER] = "other",
};

/*
 * Largest depth of each domain, the kernel's.  With the default
 * nr_requests (128) the read depth cannot bind; a larger nr_requests lets
 * it, as a device with more tags does in the kernel.
 */
static const unsigned ky_max_depth[KY_NR_DOMAINS] = {
	[KY_READ] = 256,
	[KY_WRITE] = 128,
	[KY_DISCARD] = 64,
	[KY_OTHER] = 16,
};

/*
 * Asynchronous writes may fill this share of the write slots, the
 * kernel's KYBER_ASYNC_PERCENT: the rest is kept for synchronous ones.
 */
#define KY_ASYNC_PERCENT	75

/* Requests served from one domain in a row, as in the kernel. */
static const unsigned ky_batch_size[KY_NR_DOMAINS] = {
	[KY_READ] = 16,
	[KY_WRITE] = 8,
	[KY_DISCARD] = 1,
	[KY_OTHER] = 1,
};

/* Latency targets (ns), the kernel's defaults and sysfs units. */
#define KY_READ_LAT_NSEC	2000000LL
#define KY_WRITE_LAT_NSEC	10000000LL
/* The discard target is fixed in the kernel too: 5 s. */
#define KY_DISCARD_LAT_NSEC	5000000000LL
#define KY_LAT_NSEC_MIN		1000LL
#define KY_LAT_NSEC_MAX		10000000000LL

/*
 * The kernel's timer: it is armed by a completion to fire 100 ms later
 * (timer_reduce: a pending one keeps its earlier time).  When it fires,
 * a domain's histogram is judged only once it holds KY_MIN_SAMPLES
 * samples, or KY_SAMPLE_TIMEOUT_NS after the first look at it found some
 * (the kernel's latency_timeout); until then it keeps filling.
 */
#define KY_TIMER_NS		100000000ULL
#define KY_SAMPLE_TIMEOUT_NS	1000000000ULL
#define KY_MIN_SAMPLES		500

/*
 * Histogram buckets are 1/4 of the target wide: buckets 0-3 are within the
 * target ("good"), 4-6 up to 7/4 of it, and the last holds the rest.
 */
#define KY_LAT_SHIFT		2
#define KY_GOOD_BUCKETS		(1 << KY_LAT_SHIFT)
#define KY_NR_BUCKETS		(2 << KY_LAT_SHIFT)

/* Device latency (dispatch to completion) and total (arrival to it). */
enum ky_lat_type {
	KY_LAT_TOTAL,
	KY_LAT_IO,
	KY_NR_LAT_TYPES,
};

struct kyber_data {
	/*
	 * Tunables first: the host sets them before init_queue and may
	 * change them between any two calls, so they are read when used.
	 */
	int64_t read_lat_nsec;		/* ns */
	int64_t write_lat_nsec;		/* ns */

	/*
	 * Queued requests, oldest first, via elv_fifo.  From add_request
	 * on, elv_priv[0] holds a request's domain and elv_priv[1] the time
	 * it was added (see ky_start); while it is queued, elv_deadline_ns
	 * holds its arrival sequence number (to keep FIFO order across
	 * merges), and from dispatch on the dispatch time.
	 */
	struct elv_list fifo[KY_NR_DOMAINS];
	unsigned nr_queued[KY_NR_DOMAINS];
	uint64_t seq;			/* next arrival sequence number */

	/* Tokens: dispatched, not completed, and the limit on that. */
	unsigned in_flight[KY_NR_DOMAINS];
	unsigned depth[KY_NR_DOMAINS];

	/* Round-robin: the domain being served, and how many it got. */
	enum ky_domain cur_domain;
	unsigned batching;

	/*
	 * The kernel's timer, fired lazily (see the header): armed by a
	 * measured completion, it fires at timer_ns.
	 */
	bool timer_armed;
	uint64_t timer_ns;
	/* Latency histograms, per domain and type, kept until judged. */
	uint32_t buckets[KY_NR_MEASURED][KY_NR_LAT_TYPES][KY_NR_BUCKETS];
	/*
	 * Per domain: when its histograms may be judged with fewer than
	 * KY_MIN_SAMPLES, 0 if not yet looked at with samples.  Shared by
	 * the two types, as in the kernel.
	 */
	uint64_t timeout_ns[KY_NR_MEASURED];
	/*
	 * The last p99 bucket judged per domain, -1 if none: congestion
	 * throttles a domain whose p99 could not be judged with the p99 of
	 * an earlier timer run, once (the kernel's domain_p99).
	 */
	int last_p99[KY_NR_MEASURED];

	/*
	 * Counters (.control/stats), after the kernel's kyber tracepoints:
	 * timer runs ("windows"), and of those congested; depth changes of reads
	 * and writes (kyber_adjust); dispatches that found a domain with
	 * requests but no token (kyber_throttled).
	 */
	uint64_t windows;
	uint64_t congested;
	uint64_t read_adjust;
	uint64_t write_adjust;
	uint64_t read_throttled;
	uint64_t write_throttled;
};

/* ------------------------------------------------------------------ */
/* Helpers.                                                            */

static struct kyber_data *ky_data(struct elevator_queue *eq)
{
	return eq->elevator_data;
}

static struct elv_request *ky_fifo_entry(struct elv_list *l)
{
	return elv_list_entry(l, struct elv_request, elv_fifo);
}

/* The kernel's kyber_sched_domain: by operation only, not by sync. */
static enum ky_domain ky_domain_of(enum elv_dir dir)
{
	return dir == ELV_WRITE ? KY_WRITE : KY_READ;
}

/* The domain a request was queued in, remembered in elv_priv[0]. */
static enum ky_domain ky_rq_domain(const struct elv_request *rq)
{
	return (enum ky_domain)(uintptr_t)rq->elv_priv[0];
}

static void ky_set_rq_domain(struct elv_request *rq, enum ky_domain d)
{
	rq->elv_priv[0] = (void *)(uintptr_t)d;
}

/*
 * When rq was added, for its total latency.  Kept in a pointer, so on a
 * 32-bit host only modulo 2^32 ns: differences below 4.29 s are exact,
 * as with the kernel's jiffies (time_before), and a longer one lands in
 * the last bucket of any target below 2.4 s all the same.
 */
static uintptr_t ky_start(const struct elv_request *rq)
{
	return (uintptr_t)rq->elv_priv[1];
}

static void ky_set_start(struct elv_request *rq, uint64_t now_ns)
{
	rq->elv_priv[1] = (void *)(uintptr_t)now_ns;
}

/* Nanoseconds since rq was added. */
static uint64_t ky_since_start(const struct elv_request *rq, uint64_t now_ns)
{
	uintptr_t d = (uintptr_t)now_ns - ky_start(rq);

	/* "Before the start" only if the clock went back: count 0. */
	return d > UINTPTR_MAX / 2 ? 0 : (uint64_t)d;
}

static uint64_t ky_target_ns(const struct kyber_data *kd, enum ky_domain d)
{
	int64_t t = d == KY_READ ? kd->read_lat_nsec :
		d == KY_WRITE ? kd->write_lat_nsec : KY_DISCARD_LAT_NSEC;

	return t < KY_LAT_NSEC_MIN ? (uint64_t)KY_LAT_NSEC_MIN : (uint64_t)t;
}

/* Queue rq at the tail of domain d. */
static void ky_enqueue(struct kyber_data *kd, struct elv_request *rq,
		       enum ky_domain d)
{
	ky_set_rq_domain(rq, d);
	elv_list_add_tail(&rq->elv_fifo, &kd->fifo[d]);
	kd->nr_queued[d]++;
}

static void ky_dequeue(struct kyber_data *kd, struct elv_request *rq)
{
	elv_list_del(&rq->elv_fifo);
	kd->nr_queued[ky_rq_domain(rq)]--;
}

/* ------------------------------------------------------------------ */
/* Latency histograms and depth adjustment.                            */

static void ky_add_sample(struct kyber_data *kd, enum ky_domain d,
			  enum ky_lat_type type, uint64_t lat_ns)
{
	uint64_t width = ky_target_ns(kd, d) >> KY_LAT_SHIFT;
	uint64_t bucket = 0;

	/* A latency of exactly k quarters still counts as within them. */
	if (lat_ns > 0)
		bucket = (lat_ns - 1) / (width > 0 ? width : 1);
	if (bucket >= KY_NR_BUCKETS)
		bucket = KY_NR_BUCKETS - 1;
	kd->buckets[d][type][bucket]++;
}

/*
 * The bucket holding the given percentile of domain d's histogram of the
 * given type, as judged at now_ns, which then starts afresh; or -1 while
 * it has no samples, or fewer than KY_MIN_SAMPLES and its timeout has
 * not passed (the kernel's calculate_percentile).
 */
static int ky_percentile(struct kyber_data *kd, enum ky_domain d,
			 enum ky_lat_type type, unsigned percentile,
			 uint64_t now_ns)
{
	uint32_t *b = kd->buckets[d][type];
	uint64_t samples = 0, want;
	int i;

	for (i = 0; i < KY_NR_BUCKETS; i++)
		samples += b[i];
	if (samples == 0)
		return -1;
	if (kd->timeout_ns[d] == 0)
		kd->timeout_ns[d] = now_ns + KY_SAMPLE_TIMEOUT_NS;
	if (samples < KY_MIN_SAMPLES && now_ns < kd->timeout_ns[d])
		return -1;
	kd->timeout_ns[d] = 0;

	want = (samples * percentile + 99) / 100;
	for (i = 0; i < KY_NR_BUCKETS - 1; i++) {
		if (b[i] >= want)
			break;
		want -= b[i];
	}
	memset(b, 0, sizeof kd->buckets[d][type]);
	return i;
}

static void ky_set_depth(struct elevator_queue *eq, enum ky_domain d,
			 uint64_t depth)
{
	struct kyber_data *kd = ky_data(eq);

	if (depth < 1)
		depth = 1;
	if (depth > ky_max_depth[d])
		depth = ky_max_depth[d];
	if (depth == kd->depth[d])
		return;
	elv_log(eq, ELV_LOG_DEBUG, "%s depth %u -> %u", ky_domain_names[d],
		kd->depth[d], (unsigned)depth);
	kd->depth[d] = (unsigned)depth;
	if (d == KY_READ)
		kd->read_adjust++;
	else if (d == KY_WRITE)
		kd->write_adjust++;
}

/*
 * Scale a domain's depth by its p99 against its target: p99 in bucket b
 * means (b + 1) quarters of the target, so a domain at half its target
 * gets half the depth and one at twice its target twice the depth.
 */
static void ky_scale(struct elevator_queue *eq, enum ky_domain d, int p99)
{
	struct kyber_data *kd = ky_data(eq);

	ky_set_depth(eq, d, ((uint64_t)kd->depth[d] * (unsigned)(p99 + 1)) >>
		     KY_LAT_SHIFT);
}

/* The kernel's kyber_timer_fn, run as if at now_ns. */
static void ky_timer_fn(struct elevator_queue *eq, uint64_t now_ns)
{
	struct kyber_data *kd = ky_data(eq);
	bool congested = false;
	int d, p90, p99;

	/*
	 * The device is congested when the p90 of some domain's device
	 * latency misses its target: the p90, so that a few outliers do
	 * not throttle everything.
	 */
	for (d = 0; d < KY_NR_MEASURED; d++) {
		p90 = ky_percentile(kd, d, KY_LAT_IO, 90, now_ns);
		if (p90 >= KY_GOOD_BUCKETS)
			congested = true;
	}

	for (d = 0; d < KY_NR_MEASURED; d++) {
		p99 = ky_percentile(kd, d, KY_LAT_TOTAL, 99, now_ns);
		/*
		 * Domains reach enough samples at different runs: a p99
		 * judged without congestion is kept for the next congested
		 * run, which uses it once.
		 */
		if (congested) {
			if (p99 < 0)
				p99 = kd->last_p99[d];
			kd->last_p99[d] = -1;
		} else if (p99 >= 0) {
			kd->last_p99[d] = p99;
		}

		/*
		 * Congestion throttles the domains doing well; a domain
		 * missing its own target gets more depth either way.
		 */
		if (p99 >= 0 && (congested || p99 >= KY_GOOD_BUCKETS))
			ky_scale(eq, d, p99);
	}

	kd->windows++;
	if (congested)
		kd->congested++;
}

/*
 * Run the timer if it has expired.  Called with every "now" we are
 * given, before anything else: nothing changed since it expired, so
 * running it late with its own time is running it on time.
 */
static void ky_check_timer(struct elevator_queue *eq, uint64_t now_ns)
{
	struct kyber_data *kd = ky_data(eq);

	if (!kd->timer_armed || now_ns < kd->timer_ns)
		return;
	kd->timer_armed = false;
	ky_timer_fn(eq, kd->timer_ns);
}

/* ------------------------------------------------------------------ */
/* Hooks.                                                              */

static int ky_init_queue(struct elevator_queue *eq)
{
	struct kyber_data *kd = ky_data(eq);
	int d;

	/* The data arrives zeroed with the tunables set. */
	for (d = 0; d < KY_NR_DOMAINS; d++) {
		elv_list_init(&kd->fifo[d]);
		kd->depth[d] = ky_max_depth[d];
	}
	for (d = 0; d < KY_NR_MEASURED; d++)
		kd->last_p99[d] = -1;
	kd->cur_domain = KY_READ;
	return 0;
}

static void ky_exit_queue(struct elevator_queue *eq)
{
	struct kyber_data *kd = ky_data(eq);
	int d;

	/* The host only exits an empty scheduler; say so if it did not. */
	for (d = 0; d < KY_NR_DOMAINS; d++) {
		if (kd->nr_queued[d] != 0 || kd->in_flight[d] != 0)
			elv_log(eq, ELV_LOG_ERR,
				"exit with %u %s requests queued, %u in flight",
				kd->nr_queued[d], ky_domain_names[d],
				kd->in_flight[d]);
	}
}

/*
 * next was merged into rq.  If next was queued earlier in the same domain,
 * rq takes its place, so that merged data is not served later than its
 * oldest part; then next is forgotten.  The host joins the two after this
 * call.  Both are of one direction, so of one domain.
 */
static void ky_merged_requests(struct elevator_queue *eq,
			       struct elv_request *rq,
			       struct elv_request *next)
{
	struct kyber_data *kd = ky_data(eq);

	if (ky_rq_domain(next) == ky_rq_domain(rq))
		elv_rq_merge_fifo(rq, next);
	/* The earlier start, as the kernel's attempt_merge keeps. */
	if (ky_start(next) - ky_start(rq) > UINTPTR_MAX / 2)
		rq->elv_priv[1] = next->elv_priv[1];
	ky_dequeue(kd, next);
}

static void ky_add_request(struct elevator_queue *eq, struct elv_request *rq,
			   uint64_t now_ns)
{
	struct kyber_data *kd = ky_data(eq);

	rq->elv_deadline_ns = kd->seq++;
	ky_set_start(rq, now_ns);
	ky_enqueue(kd, rq, ky_domain_of(rq->dir));
}

/*
 * The kernel's kyber_limit_depth: an asynchronous request may take a slot
 * only while fewer than KY_ASYNC_PERCENT of them are held.  Reads are
 * always synchronous there (op_is_sync), so only writeback is limited.
 */
static unsigned ky_limit_depth(struct elevator_queue *eq,
			       const struct elv_request *rq,
			       unsigned nr_requests)
{
	(void)eq;
	if (rq->dir != ELV_WRITE || rq->sync)
		return nr_requests;
	return nr_requests * KY_ASYNC_PERCENT / 100;
}

/* The head of domain d if it has one and a token for it (or force). */
static struct elv_request *ky_dispatch_domain(struct kyber_data *kd,
					      enum ky_domain d, uint64_t now_ns,
					      bool force)
{
	struct elv_request *rq;

	if (elv_list_empty(&kd->fifo[d]))
		return NULL;
	if (!force && kd->in_flight[d] >= kd->depth[d]) {
		if (d == KY_READ)
			kd->read_throttled++;
		else if (d == KY_WRITE)
			kd->write_throttled++;
		return NULL;
	}
	rq = ky_fifo_entry(kd->fifo[d].next);
	ky_dequeue(kd, rq);
	kd->in_flight[d]++;
	kd->batching++;
	rq->elv_deadline_ns = now_ns;	/* for the device latency */
	return rq;
}

/*
 * Go on with the current domain while its batch lasts and it has work and
 * tokens; otherwise start a batch at the next domain that has both,
 * coming back to the current one last.  With force, depths do not count,
 * so a draining queue always empties.
 */
static struct elv_request *ky_dispatch(struct elevator_queue *eq,
				       uint64_t now_ns,
				       bool force)
{
	struct kyber_data *kd = ky_data(eq);
	struct elv_request *rq;
	int i;

	ky_check_timer(eq, now_ns);

	if (kd->batching < ky_batch_size[kd->cur_domain]) {
		rq = ky_dispatch_domain(kd, kd->cur_domain, now_ns, force);
		if (rq != NULL)
			return rq;
	}
	kd->batching = 0;
	for (i = 0; i < KY_NR_DOMAINS; i++) {
		kd->cur_domain = (kd->cur_domain + 1) % KY_NR_DOMAINS;
		rq = ky_dispatch_domain(kd, kd->cur_domain, now_ns, force);
		if (rq != NULL)
			return rq;
	}
	return NULL;
}

/* Give the token back and count the latencies. */
static void ky_completed(struct elevator_queue *eq, struct elv_request *rq,
			 uint64_t now_ns)
{
	struct kyber_data *kd = ky_data(eq);
	enum ky_domain d = ky_rq_domain(rq);

	ky_check_timer(eq, now_ns);
	kd->in_flight[d]--;
	/* As in the kernel, "other" has no target and is not measured. */
	if (d >= KY_NR_MEASURED)
		return;
	ky_add_sample(kd, d, KY_LAT_TOTAL, ky_since_start(rq, now_ns));
	ky_add_sample(kd, d, KY_LAT_IO, now_ns > rq->elv_deadline_ns ?
		      now_ns - rq->elv_deadline_ns : 0);
	if (!kd->timer_armed) {
		kd->timer_armed = true;
		kd->timer_ns = now_ns + KY_TIMER_NS;
	}
}

static bool ky_has_work(struct elevator_queue *eq)
{
	struct kyber_data *kd = ky_data(eq);

	int d;

	for (d = 0; d < KY_NR_DOMAINS; d++)
		if (kd->nr_queued[d] != 0)
			return true;
	return false;
}

/* ------------------------------------------------------------------ */
/* Tunables, shown and set under .control/iosched/.                    */

static const struct elv_tunable ky_tunables[] = {
	ELV_TUNABLE(struct kyber_data, read_lat_nsec, KY_READ_LAT_NSEC,
		    KY_LAT_NSEC_MIN, KY_LAT_NSEC_MAX, "ns",
		    "read latency target: writes are throttled to meet it"),
	ELV_TUNABLE(struct kyber_data, write_lat_nsec, KY_WRITE_LAT_NSEC,
		    KY_LAT_NSEC_MIN, KY_LAT_NSEC_MAX, "ns",
		    "write latency target: reads are throttled to meet it"),
	{ .name = NULL },
};

static const struct elv_counter ky_counters[] = {
	ELV_COUNTER(struct kyber_data, windows),
	ELV_COUNTER(struct kyber_data, congested),
	ELV_COUNTER(struct kyber_data, read_adjust),
	ELV_COUNTER(struct kyber_data, write_adjust),
	ELV_COUNTER(struct kyber_data, read_throttled),
	ELV_COUNTER(struct kyber_data, write_throttled),
	{ .name = NULL },
};

/* ------------------------------------------------------------------ */
/* The scheduler and its registration.                                 */

static struct elevator_type kyber_type = {
	.name = "kyber",
	.description = "per-domain depth limits tuned to latency targets",
	.data_size = sizeof(struct kyber_data),
	.init_queue = ky_init_queue,
	.exit_queue = ky_exit_queue,
	.merged_requests = ky_merged_requests,
	.add_request = ky_add_request,
	.dispatch = ky_dispatch,
	.completed = ky_completed,
	.has_work = ky_has_work,
	.tunables = ky_tunables,
	.counters = ky_counters,
	.limit_depth = ky_limit_depth,
};

IOSCHED_ELEVATOR(kyber_type);
