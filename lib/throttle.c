/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blk-throttle above the queue: each control group's limits in bytes and
 * ios per second, per direction (io.max, blkio.throttle.*_device, or the
 * configuration's group sections), applied to the requests of the group
 * before they reach the elevator, as block/blk-throttle.c applies them to
 * bios before the scheduler sees them.
 *
 * A group's budget of each direction refills continuously at its limit
 * and holds at most THROTTLE_SLICE_NS worth (blk-throttle's slice, 100 ms
 * on a rotational disk): a group idle for a while may send a slice's
 * worth at once, then its limit.  A request goes on when the budget holds
 * its cost, or the whole budget when it costs more than a slice's worth
 * (it then leaves the budget in debt, which later requests wait out).
 * Otherwise it is parked at the tail of its group's FIFO of its direction
 * and every later request of that group and direction queues behind it,
 * so a group's requests keep their order.  Parked requests take no slot
 * of the queue and nothing of the scheduler's, and other groups' requests
 * pass them: a throttled group slows nobody else.
 *
 * One thread (the daemon's releaser) takes them out with throttle_next,
 * in time order, and submits them; the number parked is bounded by the
 * kernel's own bound on outstanding FUSE requests.  Limits are asked of
 * the limits function at each submission and, for groups with parked
 * requests, every THROTTLE_REFRESH_NS, so that a limit changed on a live
 * group applies to requests already waiting.
 *
 * Everything in struct throttle is protected by its lock, a leaf: the
 * limits function is called without it.  nr_groups alone is also read
 * without it, so that a request of a mount without limits takes neither
 * the lock nor the clock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include "fuse-iosched.h"

#define THROTTLE_HASH_SIZE 256		/* a power of two */
/* Idle groups are forgotten once there are this many (their state is a
 * full budget, which a new group starts with anyway). */
#define THROTTLE_GROUPS_SWEEP 64

struct throttle_group {
	struct throttle_group *hash_next;
	LIST_ENTRY(throttle_group) link;	/* throttle.groups */
	uint64_t cgroup;
	struct throttle_limits lim;
	/* Budgets in bytes and ios, refilled up to last_ns. */
	double bytes[2];
	double ios[2];
	uint64_t last_ns[2];
	struct io *head[2], *tail[2];		/* parked, oldest first */
};

struct throttle {
	pthread_mutex_t lock;
	pthread_cond_t cv;		/* the releaser: something changed */
	struct throttle_group *hash[THROTTLE_HASH_SIZE];
	LIST_HEAD(, throttle_group) groups;	/* every group, newest first */
	unsigned nr_groups;	/* written under the lock, read without */
	unsigned nr_parked;
	uint64_t refresh_ns;	/* parked groups' limits are asked then */
	bool stopping;
	throttle_limits_fn limits;	/* set at creation */
	void *arg;
};

static unsigned throttle_hash(uint64_t cgroup)
{
	return (unsigned)((cgroup * 0x9e3779b97f4a7c15ull) >> 56) &
	       (THROTTLE_HASH_SIZE - 1);
}

static bool throttle_any(const struct throttle_limits *lim)
{
	return lim->bps[0] | lim->bps[1] | lim->iops[0] | lim->iops[1];
}

static struct throttle_group *do_throttle_find(struct throttle *t,
					       uint64_t cgroup)
{
	struct throttle_group *tg = t->hash[throttle_hash(cgroup)];

	while (tg != NULL && tg->cgroup != cgroup)
		tg = tg->hash_next;
	return tg;
}

/* A budget's cap: a slice's worth of rate, per second. */
static double throttle_cap(uint64_t rate)
{
	return (double)rate * (double)THROTTLE_SLICE_NS / 1e9;
}

/* Bring dir's budgets to now, under lim (new limits cap them). */
static void throttle_refill(struct throttle_group *tg, int dir, uint64_t now)
{
	double dt = now > tg->last_ns[dir] ?
		(double)(now - tg->last_ns[dir]) / 1e9 : 0;

	tg->last_ns[dir] = now;
	tg->bytes[dir] += dt * (double)tg->lim.bps[dir];
	if (tg->bytes[dir] > throttle_cap(tg->lim.bps[dir]))
		tg->bytes[dir] = throttle_cap(tg->lim.bps[dir]);
	tg->ios[dir] += dt * (double)tg->lim.iops[dir];
	if (tg->ios[dir] > throttle_cap(tg->lim.iops[dir]))
		tg->ios[dir] = throttle_cap(tg->lim.iops[dir]);
}

/*
 * How long a cost waits on a budget at rate: until the budget holds the
 * cost, or is full when the cost is more than it can hold.
 */
static uint64_t throttle_wait_one(double budget, double cost, uint64_t rate)
{
	double need;

	if (rate == 0)
		return 0;
	need = cost < throttle_cap(rate) ? cost : throttle_cap(rate);
	if (budget >= need)
		return 0;
	return (uint64_t)((need - budget) * 1e9 / (double)rate) + 1;
}

/* How long io, of tg's direction dir, must still wait; 0: it may go. */
static uint64_t throttle_wait(const struct throttle_group *tg, int dir,
			      const struct io *io)
{
	uint64_t wb, wi;

	wb = throttle_wait_one(tg->bytes[dir], (double)io->rq.bytes,
			       tg->lim.bps[dir]);
	wi = throttle_wait_one(tg->ios[dir], 1, tg->lim.iops[dir]);
	return wb > wi ? wb : wi;
}

static void throttle_charge(struct throttle_group *tg, int dir,
			    const struct io *io)
{
	if (tg->lim.bps[dir] != 0)
		tg->bytes[dir] -= (double)io->rq.bytes;
	if (tg->lim.iops[dir] != 0)
		tg->ios[dir] -= 1;
}

/* New limits: budgets of a limit just set start full. */
static void throttle_set(struct throttle_group *tg,
			 const struct throttle_limits *lim, uint64_t now)
{
	for (int dir = 0; dir < 2; dir++) {
		throttle_refill(tg, dir, now);
		if (tg->lim.bps[dir] == 0)
			tg->bytes[dir] = throttle_cap(lim->bps[dir]);
		if (tg->lim.iops[dir] == 0)
			tg->ios[dir] = throttle_cap(lim->iops[dir]);
	}
	tg->lim = *lim;
	for (int dir = 0; dir < 2; dir++)
		throttle_refill(tg, dir, now);
}

static bool throttle_idle(const struct throttle_group *tg, uint64_t now)
{
	return tg->head[0] == NULL && tg->head[1] == NULL &&
	       now - tg->last_ns[0] >= THROTTLE_SLICE_NS &&
	       now - tg->last_ns[1] >= THROTTLE_SLICE_NS;
}

static void do_throttle_unlink(struct throttle *t, struct throttle_group *tg)
{
	struct throttle_group **pp = &t->hash[throttle_hash(tg->cgroup)];

	while (*pp != tg)
		pp = &(*pp)->hash_next;
	*pp = tg->hash_next;
	LIST_REMOVE(tg, link);
	__atomic_store_n(&t->nr_groups, t->nr_groups - 1, __ATOMIC_RELEASE);
	free(tg);
}

/* Forget groups whose state is that of a new group: nothing parked, and
 * budgets full again (a slice since their last request). */
static void do_throttle_sweep(struct throttle *t, uint64_t now)
{
	struct throttle_group *tg, *next;

	for (tg = LIST_FIRST(&t->groups); tg != NULL; tg = next) {
		next = LIST_NEXT(tg, link);
		if (throttle_idle(tg, now))
			do_throttle_unlink(t, tg);
	}
}

static struct throttle_group *do_throttle_add(struct throttle *t,
					      uint64_t cgroup,
					      const struct throttle_limits *lim,
					      uint64_t now)
{
	struct throttle_group *tg;
	unsigned h = throttle_hash(cgroup);

	if (t->nr_groups >= THROTTLE_GROUPS_SWEEP)
		do_throttle_sweep(t, now);
	tg = calloc(1, sizeof *tg);
	if (tg == NULL)
		return NULL;
	tg->cgroup = cgroup;
	tg->last_ns[0] = tg->last_ns[1] = now;
	throttle_set(tg, lim, now);
	tg->hash_next = t->hash[h];
	t->hash[h] = tg;
	LIST_INSERT_HEAD(&t->groups, tg, link);
	__atomic_store_n(&t->nr_groups, t->nr_groups + 1, __ATOMIC_RELEASE);
	return tg;
}

bool throttle_limited(struct throttle *t, const struct io *io)
{
	struct throttle_limits lim;
	int dir = io->rq.dir;

	memset(&lim, 0, sizeof lim);
	if (t->limits(t->arg, io->rq.cgroup, &lim) != 0)
		return false;
	return lim.bps[dir] != 0 || lim.iops[dir] != 0;
}

bool throttle_submit(struct throttle *t, struct io *io)
{
	struct throttle_limits lim;
	struct throttle_group *tg;
	int dir = io->rq.dir;
	bool known, parked = false;
	uint64_t now;

	memset(&lim, 0, sizeof lim);
	known = t->limits(t->arg, io->rq.cgroup, &lim) == 0;
	/*
	 * No limit and no group of ours at all (so none parked): on at once,
	 * without the lock or the clock, as every request of a mount without
	 * limits goes.  A group added meanwhile is one this request came
	 * before.
	 */
	if ((!known || !throttle_any(&lim)) &&
	    __atomic_load_n(&t->nr_groups, __ATOMIC_ACQUIRE) == 0)
		return false;
	pthread_mutex_lock(&t->lock);
	tg = do_throttle_find(t, io->rq.cgroup);
	if (tg == NULL && (!known || !throttle_any(&lim)))
		goto out;	/* no limit, nothing parked: the fast path */
	now = clock_now_ns();
	if (tg == NULL) {
		tg = do_throttle_add(t, io->rq.cgroup, &lim, now);
		if (tg == NULL)
			goto out;	/* out of memory: unthrottled */
	} else if (known) {
		throttle_set(tg, &lim, now);
	}
	throttle_refill(tg, dir, now);
	if (tg->head[dir] == NULL && !t->stopping &&
	    throttle_wait(tg, dir, io) == 0) {
		throttle_charge(tg, dir, io);
		goto out;
	}
	if (t->stopping && tg->head[dir] == NULL)
		goto out;
	io->throttle_next = NULL;
	if (tg->tail[dir] != NULL)
		tg->tail[dir]->throttle_next = io;
	else
		tg->head[dir] = io;
	tg->tail[dir] = io;
	t->nr_parked++;
	parked = true;
	pthread_cond_signal(&t->cv);
out:
	pthread_mutex_unlock(&t->lock);
	return parked;
}

static struct io *do_throttle_pop(struct throttle *t,
				  struct throttle_group *tg, int dir)
{
	struct io *io = tg->head[dir];

	tg->head[dir] = io->throttle_next;
	if (tg->head[dir] == NULL)
		tg->tail[dir] = NULL;
	io->throttle_next = NULL;
	t->nr_parked--;
	return io;
}

/* Ask the limits of groups with parked requests again, without the lock
 * held while asking; caller holds it. */
static void do_throttle_refresh(struct throttle *t)
{
	uint64_t ids[64];
	struct throttle_limits lim[64];
	bool known[64];
	struct throttle_group *tg;
	unsigned n = 0;

	for (tg = LIST_FIRST(&t->groups); tg != NULL && n < ARRAY_SIZE(ids);
	     tg = LIST_NEXT(tg, link))
		if (tg->head[0] != NULL || tg->head[1] != NULL)
			ids[n++] = tg->cgroup;
	pthread_mutex_unlock(&t->lock);
	for (unsigned i = 0; i < n; i++) {
		memset(&lim[i], 0, sizeof lim[i]);
		known[i] = t->limits(t->arg, ids[i], &lim[i]) == 0;
	}
	pthread_mutex_lock(&t->lock);
	for (unsigned i = 0; i < n; i++) {
		tg = do_throttle_find(t, ids[i]);
		if (tg != NULL && known[i])
			throttle_set(tg, &lim[i], clock_now_ns());
	}
}

struct io *throttle_next(struct throttle *t)
{
	struct throttle_group *tg;
	uint64_t now, due, w;
	struct timespec ts;
	struct io *io = NULL;

	pthread_mutex_lock(&t->lock);
	for (;;) {
		now = clock_now_ns();
		if (t->nr_parked > 0 && now >= t->refresh_ns) {
			t->refresh_ns = now + THROTTLE_REFRESH_NS;
			do_throttle_refresh(t);
			now = clock_now_ns();
		}
		due = UINT64_MAX;
		LIST_FOREACH(tg, &t->groups, link) {
			for (int dir = 0; dir < 2; dir++) {
				if (tg->head[dir] == NULL)
					continue;
				throttle_refill(tg, dir, now);
				w = t->stopping ? 0 :
				    throttle_wait(tg, dir, tg->head[dir]);
				if (w == 0) {
					io = do_throttle_pop(t, tg, dir);
					throttle_charge(tg, dir, io);
					goto out;
				}
				if (now + w < due)
					due = now + w;
			}
		}
		if (t->stopping)
			goto out;	/* nothing parked: the end */
		if (due == UINT64_MAX) {
			pthread_cond_wait(&t->cv, &t->lock);
			continue;
		}
		if (due > t->refresh_ns)
			due = t->refresh_ns;
		ts.tv_sec = (time_t)(due / 1000000000u);
		ts.tv_nsec = (long)(due % 1000000000u);
		pthread_cond_timedwait(&t->cv, &t->lock, &ts);
	}
out:
	pthread_mutex_unlock(&t->lock);
	return io;
}

void throttle_stop(struct throttle *t)
{
	pthread_mutex_lock(&t->lock);
	t->stopping = true;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->lock);
}

struct throttle *throttle_new(throttle_limits_fn limits, void *arg)
{
	struct throttle *t = calloc(1, sizeof *t);
	pthread_condattr_t ca;

	if (t == NULL)
		return NULL;
	t->limits = limits;
	t->arg = arg;
	pthread_mutex_init(&t->lock, NULL);
	/* clock_now_ns()'s clock, for the timed waits. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cv, &ca);
	pthread_condattr_destroy(&ca);
	return t;
}

void throttle_free(struct throttle *t)
{
	if (t == NULL)
		return;
	while (!LIST_EMPTY(&t->groups))
		do_throttle_unlink(t, LIST_FIRST(&t->groups));
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->lock);
	free(t);
}
