/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The anticipatory I/O scheduler, after Iyer and Druschel ("Anticipatory
 * scheduling", SOSP 2001) and Linux 2.6's as-iosched.c: deadline's sorted
 * lists, FIFOs and batches in two classes (synchronous, asynchronous),
 * plus idling after a synchronous read for its process's next one.  What
 * it does, and where and why it differs from the kernel's, is in
 * fuse-iosched(8), anticipatory.
 *
 * Invariants:
 * - A queued request is on its class's sort tree and FIFO; next_rq[dir] is
 *   NULL only when nothing of dir is queued.
 * - Anticipation is a state machine (enum as_antic_status): OFF after a
 *   dispatch; WAIT_REQ while the awaited reads are in flight (think time
 *   starts when the process has its data); WAIT_NEXT until its next read
 *   or antic_expire after the completion; FINISHED once waiting is over,
 *   until the next request is served.
 * - While waiting, dispatch returns NULL and asks the host for a wake-up
 *   at the earliest time waiting could end on its own; arrivals and
 *   completions make the host call dispatch earlier.
 * - No hook allocates: per-process entries are made in init_queue and
 *   recycled least recently seen first.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuse-iosched/elevator.h"

/* Longest a read waits before it is served ahead of the sweep (ms). */
#define AS_READ_EXPIRE		125
/* Likewise for writes: a process rarely waits for them. */
#define AS_WRITE_EXPIRE		250
/* How long a read batch may run while writes wait (ms). */
#define AS_READ_BATCH_EXPIRE	500
/* How long a write batch may run while reads wait (ms). */
#define AS_WRITE_BATCH_EXPIRE	125
/* Longest idle wait for a process's next read (ms); 0 turns it off. */
#define AS_ANTIC_EXPIRE		6

/*
 * Backward seeks: up to 1 Mi sectors (512 MiB) behind the head, the
 * kernel's MAXBACK, costed twice their length (a disk head moves back
 * about as fast, but the track read-ahead of the drive is wasted).
 * Further back, the request waits for the next sweep.
 */
#define AS_BACK_SEEK_MAX	(1024 * 1024)	/* sectors */
#define AS_BACK_SEEK_PENALTY	2

/*
 * Another process's read this close to the head breaks anticipation
 * whatever the waited-for process's seek history, as the kernel's
 * as_close_req: up to 8192 sectors (4 MiB) ahead or half that behind at
 * the start of the wait, doubling with each millisecond waited, since the
 * longer the wait the less likely it pays; past AS_CLOSE_MAX_MS (or
 * antic_expire) any read ends it.
 */
#define AS_CLOSE_SECTORS	8192
#define AS_CLOSE_MAX_MS		20

/*
 * One think-time sample counts at most this much (the kernel's
 * MAX_THINKTIME): a single long pause, such as an open that waited for the
 * daemon, must not turn anticipation off for the next dozen reads.
 */
#define AS_MAX_THINKTIME_NS	(20 * IOSCHED_NS_PER_MS)

/*
 * A process that did no I/O for this long has probably exited, or its pid
 * was reused: its history says nothing any more.
 */
#define AS_QUIET_NS		1000000000ULL

/*
 * exit_no_coop (the kernel's): how often no other process's close read
 * followed the exit of the process waited for, a decaying average out of
 * AS_AVG_ONE.  Above half, an exit ends the wait at once; below, the wait
 * goes on for another process that reads nearby (a shell script's next
 * command, a build's next compiler).  An exit that ends a wait at once
 * lowers it by 1/AS_EXIT_PROBE, so that every few exits one wait is tried
 * again: a workload that starts cooperating is seen to.
 */
#define AS_EXIT_PROBE		16

/*
 * One seek sample may weigh at most four times the mean plus this, so a
 * single jump across the disk does not make a sequential reader look
 * random for long.
 */
#define AS_SEEK_OUTLIER		(1ULL << 21)	/* sectors: 1 GiB */

/*
 * Processes with statistics.  Entries are preallocated in init_queue and
 * recycled least recently seen first, so that no hook allocates memory and
 * a host with many short-lived processes stays within a fixed size.
 */
#define AS_NR_PROCS		128
#define AS_HASH_BITS		6

/*
 * Decaying averages are fixed point: a weight of 256 is one sample, each
 * new sample weighs 1/8 and older ones fade by 7/8.
 */
#define AS_AVG_ONE		256


/*
 * Batches, lists and expiry times are per class, as the kernel's REQ_SYNC
 * and REQ_ASYNC: reads and the writes a process waits for as the kernel
 * would have (sync_write: O_SYNC, O_DSYNC, O_DIRECT) are synchronous and
 * share the read batch; other writes are asynchronous.  read_expire and
 * read_batch_expire apply to the first class, write_* to the second.
 */
enum as_class {
	AS_SYNC = 0,
	AS_ASYNC = 1,
};

enum as_antic_status {
	ANTIC_OFF,
	ANTIC_WAIT_REQ,
	ANTIC_WAIT_NEXT,
	ANTIC_FINISHED,
};

/* How a wait ended, for the counters. */
enum as_antic_end {
	AS_END_HIT,		/* the awaited process's request came */
	AS_END_CLOSE,		/* another process's close request */
	AS_END_TIMEOUT,		/* antic_expire passed */
	AS_END_EXIT,		/* the awaited process exited */
	AS_END_OTHER,		/* an expired read, the batch, force */
};

/* A decaying average: samples and total scaled by AS_AVG_ONE. */
struct as_avg {
	uint64_t samples;	/* 0: no sample yet */
	uint64_t total;
	uint64_t mean;
};

/* What the scheduler knows of one process (of its synchronous requests). */
struct as_proc {
	struct elv_pid_node node;	/* in as_data.hash; pid 0: free */
	struct elv_list lru;		/* on as_data.lru, oldest first */
	uint64_t last_seen_ns;		/* last arrival or completion */

	unsigned nr_queued;		/* its reads in the scheduler */
	unsigned nr_in_flight;		/* its reads dispatched, not done */
	bool exited;			/* exit_process: never waited for */

	/*
	 * Think time runs from the completion of its last read to the
	 * arrival of the next one, when it had no other read pending.
	 */
	bool has_end;
	uint64_t last_end_ns;
	struct as_avg ttime;		/* ns */

	/* Seek distance from the end of its previous read. */
	bool has_pos;
	uint64_t last_pos;		/* end sector of its last read */
	struct as_avg seek;		/* sectors */
};

struct as_data {
	/*
	 * Tunables first: the host sets them before init_queue and may
	 * change them between any two calls, so they are read when used.
	 */
	int64_t read_expire;		/* ms */
	int64_t write_expire;		/* ms */
	int64_t read_batch_expire;	/* ms */
	int64_t write_batch_expire;	/* ms */
	int64_t antic_expire;		/* ms */

	/* Each queued request is on both lists of its direction. */
	struct elv_rb_root sort_tree[2];	/* by sector, via elv_rb */
	struct elv_list fifo_list[2];	/* by arrival, via elv_fifo */
	unsigned nr_queued[2];
	unsigned nr_in_flight[2];	/* dispatched, not completed */

	/*
	 * The elevator: head[dir] is the end sector of the last request
	 * dispatched in dir, next_rq[dir] the cheapest queued request to
	 * reach from there (NULL only when nothing of dir is queued).
	 */
	uint64_t head[2];
	struct elv_request *next_rq[2];

	/*
	 * The running batch, and when it stops being allowed to run.  A
	 * change of direction first lets the device drain (changed_batch:
	 * nothing is dispatched while the other direction is in flight),
	 * so that the new batch is not charged for the old one's requests;
	 * a read batch's clock then starts at its first completion
	 * (new_batch), when the writes before it are surely done.
	 */
	enum as_class batch_dir;
	uint64_t batch_end_ns;
	/*
	 * Each direction's FIFO is looked at once per expiry time at most
	 * (the kernel's last_check_fifo), from the start of its batch: when
	 * many requests expire together, the first expired one is served
	 * and the elevator goes on from there, instead of a seek storm in
	 * arrival order.
	 */
	uint64_t last_check_fifo[2];
	bool changed_batch;
	bool new_batch;

	/*
	 * Write batches are bounded in requests too, and the bound adapts
	 * (as_update_write_batch): a write batch that overran its time,
	 * measured to the first read completion after it, gets fewer
	 * requests next time, so under reads they shrink to one or two.
	 */
	unsigned write_batch_count;	/* requests in a write batch */
	/*
	 * While a process with synchronous I/O has been seen in the last
	 * AS_QUIET_NS, asynchronous writes go out one at a time, as to the
	 * disks without command queueing AS was made for: a read that
	 * arrives then waits for one write to drain, not for a device
	 * queue full of them (see fuse-iosched(8)).
	 */
	bool sync_seen;
	uint64_t last_sync_ns;		/* last sync arrival or completion */
	unsigned current_write_count;	/* left in the current one */
	bool write_batch_idled;		/* it ran out of work: not timed */

	/*
	 * Anticipation.  antic_proc is the process whose read was the last
	 * one dispatched, the one worth waiting for; NULL when the last
	 * request was a write, a kernel read or an untracked process.
	 * reads_done_ns is when the last read in flight completed: the
	 * wait ends antic_expire after it.
	 */
	enum as_antic_status antic_status;
	struct as_proc *antic_proc;
	uint64_t reads_done_ns;

	/*
	 * Counters (.control/stats), counted under the queue lock: waits
	 * started and how each ended (antic_exits: the host told of the
	 * awaited process's exit), batches started, reads served from
	 * an expired FIFO, sync writes queued, and writes held back while
	 * one was in flight near sync I/O.
	 */
	uint64_t antic_started;
	uint64_t antic_hits;
	uint64_t antic_close;
	uint64_t antic_timeouts;
	uint64_t antic_other;
	uint64_t antic_exits;
	uint64_t sync_batches;
	uint64_t async_batches;
	uint64_t fifo_expired;
	uint64_t sync_writes;
	uint64_t writes_held;

	/* Per-process statistics, allocated in init_queue. */
	struct as_proc *procs;		/* AS_NR_PROCS entries */
	struct elv_pid_node **hash;	/* by pid: AS_HASH_BITS */
	struct elv_list lru;		/* every entry, least recent first */
	/* Think time of processes on their first sample: a guess for new ones. */
	struct as_avg new_ttime;	/* ns */
	unsigned exit_no_coop;		/* out of AS_AVG_ONE; AS_EXIT_PROBE */
	bool exits_told;		/* the host has told of an exit */
};

/* ------------------------------------------------------------------ */
/* Helpers.                                                            */

static struct as_data *as_data(struct elevator_queue *eq)
{
	return eq->elevator_data;
}

static struct elv_request *as_fifo_entry(struct elv_list *l)
{
	return elv_list_entry(l, struct elv_request, elv_fifo);
}

static enum as_class as_class(const struct elv_request *rq)
{
	return rq->dir == ELV_READ || rq->sync_write ? AS_SYNC : AS_ASYNC;
}

static enum as_class as_other(enum as_class dir)
{
	return dir == AS_SYNC ? AS_ASYNC : AS_SYNC;
}

static uint64_t as_expire_ns(const struct as_data *ad, enum as_class dir)
{
	return elv_ms_to_ns(dir == AS_SYNC ? ad->read_expire :
			    ad->write_expire);
}

static uint64_t as_batch_ns(const struct as_data *ad, enum as_class dir)
{
	return elv_ms_to_ns(dir == AS_SYNC ? ad->read_batch_expire :
			    ad->write_batch_expire);
}

static uint64_t as_distance(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* Fold sample x into avg. */
static void as_avg_add(struct as_avg *avg, uint64_t x)
{
	avg->samples = (7 * avg->samples + AS_AVG_ONE) / 8;
	avg->total = (7 * avg->total + AS_AVG_ONE * x) / 8;
	avg->mean = (avg->total + AS_AVG_ONE / 2) / avg->samples;
}

/* ------------------------------------------------------------------ */
/* Per-process statistics.                                             */

static struct as_proc *as_proc_find(struct as_data *ad, pid_t pid)
{
	struct elv_pid_node *n = elv_pid_find(ad->hash, AS_HASH_BITS, pid);

	return n != NULL ? elv_container_of(n, struct as_proc, node) : NULL;
}

/* Forget the history of p: a new process, or one back after a pause. */
static void as_proc_reset(struct as_proc *p)
{
	p->has_end = false;
	p->has_pos = false;
	p->ttime = (struct as_avg){ 0, 0, 0 };
	p->seek = (struct as_avg){ 0, 0, 0 };
}

/* p was seen now: it moves to the recent end of the LRU. */
static void as_proc_touch(struct as_data *ad, struct as_proc *p,
			  uint64_t now_ns)
{
	p->last_seen_ns = now_ns;
	elv_list_del(&p->lru);
	elv_list_add_tail(&p->lru, &ad->lru);
}

static bool as_proc_quiet(const struct as_proc *p, uint64_t now_ns)
{
	return now_ns > p->last_seen_ns &&
	       now_ns - p->last_seen_ns > AS_QUIET_NS;
}

/*
 * The entry of pid, made if need be by recycling the least recently seen
 * entry that has nothing queued or in flight.  NULL when every entry is
 * busy: the request is then scheduled without anticipation.
 */
static struct as_proc *as_proc_get(struct as_data *ad, pid_t pid,
				   uint64_t now_ns)
{
	struct as_proc *p = as_proc_find(ad, pid);
	struct elv_list *pos;

	if (p != NULL) {
		/* After an exit the pid is another process's. */
		if (p->exited || (p->nr_queued == 0 && p->nr_in_flight == 0 &&
				  as_proc_quiet(p, now_ns)))
			as_proc_reset(p);
		p->exited = false;
		as_proc_touch(ad, p, now_ns);
		return p;
	}
	elv_list_for_each(pos, &ad->lru) {
		p = elv_list_entry(pos, struct as_proc, lru);
		if (p->node.pid == 0 || (p->nr_queued == 0 &&
				    p->nr_in_flight == 0 &&
				    p != ad->antic_proc))
			break;
	}
	if (pos == &ad->lru)
		return NULL;
	if (p->node.pid != 0)
		elv_pid_del(ad->hash, AS_HASH_BITS, &p->node);
	as_proc_reset(p);
	p->node.pid = pid;
	p->exited = false;
	p->nr_queued = p->nr_in_flight = 0;
	elv_pid_add(ad->hash, AS_HASH_BITS, &p->node);
	as_proc_touch(ad, p, now_ns);
	return p;
}

/* A sync request of p arrives: take think time and seek samples. */
static void as_proc_arrival(struct as_data *ad, struct as_proc *p,
			    const struct elv_request *rq, uint64_t now_ns)
{
	uint64_t t, d;

	/*
	 * Only a process with no read pending was thinking; one with reads
	 * in flight is issuing ahead (readahead, several threads).
	 */
	if (p->has_end && p->nr_queued == 0 && p->nr_in_flight == 0) {
		t = now_ns > p->last_end_ns ? now_ns - p->last_end_ns : 0;
		if (t > AS_MAX_THINKTIME_NS)
			t = AS_MAX_THINKTIME_NS;
		if (p->ttime.samples == 0)
			as_avg_add(&ad->new_ttime, t);
		as_avg_add(&p->ttime, t);
	}
	p->has_end = false;

	if (p->has_pos) {
		d = as_distance(rq->sector, p->last_pos);
		if (d > 4 * p->seek.mean + AS_SEEK_OUTLIER)
			d = 4 * p->seek.mean + AS_SEEK_OUTLIER;
		as_avg_add(&p->seek, d);
	}
	p->last_pos = elv_rq_end_sector(rq);
	p->has_pos = true;
	p->nr_queued++;
}

/* ------------------------------------------------------------------ */
/* The elevator.                                                       */

/*
 * The cost of reaching rq from the head of its direction: the distance
 * forward, or twice the distance back.  False when rq lies further back
 * than a backward seek may go: it waits for the sweep to wrap.
 */
static bool as_cost(const struct as_data *ad, const struct elv_request *rq,
		    uint64_t *cost)
{
	uint64_t head = ad->head[as_class(rq)];

	if (rq->sector >= head) {
		*cost = rq->sector - head;
		return true;
	}
	if (head - rq->sector <= AS_BACK_SEEK_MAX) {
		*cost = (head - rq->sector) * AS_BACK_SEEK_PENALTY;
		return true;
	}
	return false;
}

/* The better of two candidates (either may be NULL) to serve next. */
static struct elv_request *as_choose(const struct as_data *ad,
				     struct elv_request *a,
				     struct elv_request *b)
{
	uint64_t ca = 0, cb = 0;
	bool ra, rb;

	if (a == NULL || b == NULL)
		return a != NULL ? a : b;
	ra = as_cost(ad, a, &ca);
	rb = as_cost(ad, b, &cb);
	if (ra != rb)
		return ra ? a : b;
	/* Both behind the head: the sweep starts again at the lowest. */
	if (!ra)
		return a->sector <= b->sector ? a : b;
	if (ca != cb)
		return ca < cb ? a : b;
	/* A tie between a step back and one forward: go forward. */
	return a->sector >= b->sector ? a : b;
}

/*
 * The request to serve after rq, rq excluded: its neighbour ahead (the
 * lowest one when rq is the last, wrapping round) or its neighbour behind.
 */
static struct elv_request *as_find_next(struct as_data *ad,
					struct elv_request *rq)
{
	struct elv_request *ahead = elv_rq_sort_next(rq);
	struct elv_request *behind = elv_rq_sort_prev(rq);

	if (ahead == NULL && behind != NULL)
		ahead = elv_rq_sort_first(&ad->sort_tree[as_class(rq)]);
	return as_choose(ad, ahead, behind);
}

/* Insert rq in sector order; equal sectors keep arrival order. */
static void as_sort_add(struct as_data *ad, struct elv_request *rq)
{
	enum as_class c = as_class(rq);

	elv_rq_sort_add(&ad->sort_tree[c], rq);
	ad->next_rq[c] = as_choose(ad, rq, ad->next_rq[c]);
}

static void as_sort_del(struct as_data *ad, struct elv_request *rq)
{
	if (ad->next_rq[as_class(rq)] == rq)
		ad->next_rq[as_class(rq)] = as_find_next(ad, rq);
	elv_rq_sort_del(&ad->sort_tree[as_class(rq)], rq);
}

/* rq leaves the scheduler, dispatched or merged into another. */
static void as_remove(struct as_data *ad, struct elv_request *rq)
{
	struct as_proc *p = rq->elv_priv[0];

	as_sort_del(ad, rq);
	elv_list_del(&rq->elv_fifo);
	ad->nr_queued[as_class(rq)]--;
	if (p != NULL)
		p->nr_queued--;
	rq->elv_priv[0] = NULL;
}

static bool as_fifo_expired(const struct as_data *ad, enum as_class dir,
			    uint64_t now_ns)
{
	if (elv_list_empty(&ad->fifo_list[dir]))
		return false;
	return now_ns >= as_fifo_entry(ad->fifo_list[dir].next)->elv_deadline_ns;
}

/* The rate-limited check of dispatch: see last_check_fifo. */
static bool as_fifo_due(struct as_data *ad, enum as_class dir, uint64_t now_ns)
{
	if (now_ns < ad->last_check_fifo[dir] + as_expire_ns(ad, dir))
		return false;
	ad->last_check_fifo[dir] = now_ns;
	return as_fifo_expired(ad, dir, now_ns);
}

static struct elv_request *as_fifo_first(struct as_data *ad, enum as_class dir)
{
	return as_fifo_entry(ad->fifo_list[dir].next);
}

/* ------------------------------------------------------------------ */
/* Anticipation.                                                       */

static bool as_antic_waiting(const struct as_data *ad)
{
	return ad->antic_status == ANTIC_WAIT_REQ ||
	       ad->antic_status == ANTIC_WAIT_NEXT;
}

/* When waiting gives up; meaningful once no read is in flight. */
static uint64_t as_antic_end_ns(const struct as_data *ad)
{
	return ad->reads_done_ns + elv_ms_to_ns(ad->antic_expire);
}

/*
 * Is rq close enough to the head to serve instead of waiting?  The window
 * (AS_CLOSE_SECTORS ahead, half that behind) doubles with each whole
 * millisecond since the awaited reads completed; once the wait has lasted
 * AS_CLOSE_MAX_MS or antic_expire, everything is close.  A read within the
 * awaited process's mean seek distance is close too: it costs no more than
 * the read we wait for would.
 */
static bool as_close(const struct as_data *ad, const struct elv_request *rq,
		     uint64_t now_ns)
{
	const struct as_proc *p = ad->antic_proc;
	uint64_t head = ad->head[AS_SYNC], delta = AS_CLOSE_SECTORS;
	uint64_t waited = 0;

	if (ad->antic_status == ANTIC_WAIT_NEXT && now_ns > ad->reads_done_ns)
		waited = (now_ns - ad->reads_done_ns) / IOSCHED_NS_PER_MS;
	if (waited > AS_CLOSE_MAX_MS || (int64_t)waited > ad->antic_expire)
		return true;
	delta <<= waited;
	if (rq->sector + delta / 2 >= head && rq->sector <= head + delta)
		return true;
	return p->seek.samples != 0 &&
	       as_distance(rq->sector, head) < p->seek.mean;
}

/*
 * rq (arriving, or the next in line) makes waiting pointless: it is the
 * awaited process's own request, read or write (its write says it is
 * busy elsewhere, not thinking about its next read), or another process's
 * synchronous request (a read or a sync write) close to the head
 * (as_close).  Others' asynchronous writes never break the wait: they
 * can wait for their batch.
 */
static bool as_can_break(const struct as_data *ad,
			 const struct elv_request *rq, uint64_t now_ns)
{
	const struct as_proc *p = ad->antic_proc;

	if (p == NULL)
		return true;
	if (rq->pid != 0 && rq->pid == p->node.pid)
		return true;
	if (as_class(rq) != AS_SYNC)
		return false;
	return as_close(ad, rq, now_ns);
}

/*
 * Is it worth idling for antic_proc's next read, rq being what would be
 * served otherwise (NULL: no read queued)?  Dispatch only asks while the
 * read batch may run, which bounds the wait by read_batch_expire.
 */
static bool as_can_anticipate(const struct as_data *ad,
			      const struct elv_request *rq, uint64_t now_ns)
{
	const struct as_proc *p = ad->antic_proc;
	uint64_t antic_ns = elv_ms_to_ns(ad->antic_expire);
	uint64_t think;

	if (antic_ns == 0 || p == NULL || ad->antic_status == ANTIC_FINISHED)
		return false;
	/* Exited: worth waiting only for another process close by. */
	if (p->exited && ad->exit_no_coop > AS_AVG_ONE / 2)
		return false;
	/* An expired read is served now: its deadline bounds the wait. */
	if (as_fifo_expired(ad, AS_SYNC, now_ns))
		return false;
	if (ad->nr_in_flight[AS_SYNC] == 0 && now_ns >= as_antic_end_ns(ad))
		return false;
	if (rq != NULL && as_can_break(ad, rq, now_ns))
		return false;
	/* Its own reads are queued: nothing to wait for. */
	if (p->nr_queued > 0)
		return false;
	/* It would not come back in time. */
	think = p->ttime.samples != 0 ? p->ttime.mean : ad->new_ttime.mean;
	return think <= antic_ns;
}

/* Waiting ends, for the reason given: serve what comes next. */
static void as_antic_stop(struct as_data *ad, enum as_antic_end why)
{
	struct as_proc *p = ad->antic_proc;
	bool timed_out = why == AS_END_TIMEOUT;

	if (why == AS_END_HIT)
		ad->antic_hits++;
	else if (why == AS_END_CLOSE)
		ad->antic_close++;
	else if (timed_out)
		ad->antic_timeouts++;
	else if (why == AS_END_EXIT)
		ad->antic_exits++;
	else
		ad->antic_other++;

	/*
	 * After an exit: did another process carry on close by?  Another
	 * process's close read is a cooperator whether or not the exit was
	 * told yet (it races with the next process's first read).
	 */
	if (why == AS_END_CLOSE)
		ad->exit_no_coop = 7 * ad->exit_no_coop / 8;
	else if (why == AS_END_EXIT)
		ad->exit_no_coop -= ad->exit_no_coop / AS_EXIT_PROBE;
	else if (timed_out && p != NULL && p->exited)
		ad->exit_no_coop = (7 * ad->exit_no_coop + AS_AVG_ONE) / 8;
	/*
	 * A new process that did not come back in time, under a host that
	 * tells no exits (the replay): count it as a longer think than we
	 * wait, so that a run of processes reading once and exiting stops
	 * being waited for.  A host that tells them may tell this one's
	 * just after the timeout (its exit takes a while on a loaded
	 * machine): that must not stop waits for every new process.
	 */
	else if (timed_out && p != NULL && p->ttime.samples == 0 &&
		 !ad->exits_told)
		as_avg_add(&ad->new_ttime, 2 * elv_ms_to_ns(ad->antic_expire));
	ad->antic_status = ANTIC_FINISHED;
}

/*
 * Ask to be called when waiting could end without an arrival.  A batch
 * end already past is no such time: asking for it would have the host
 * call at once, find the wait unchanged and ask again, a busy loop until
 * the awaited read completes (whose completion calls anyway).
 */
static void as_antic_arm(struct elevator_queue *eq, struct as_data *ad,
			 uint64_t now_ns)
{
	uint64_t at = UINT64_MAX, t;

	if (ad->antic_status == ANTIC_WAIT_NEXT)
		at = as_antic_end_ns(ad);
	if (!elv_list_empty(&ad->fifo_list[AS_SYNC])) {
		t = as_fifo_first(ad, AS_SYNC)->elv_deadline_ns;
		if (t < at)
			at = t;
	}
	if (ad->nr_queued[AS_ASYNC] > 0 && ad->batch_end_ns > now_ns &&
	    ad->batch_end_ns < at)
		at = ad->batch_end_ns;
	if (at != UINT64_MAX)
		elv_wakeup_at(eq, at);
}

/*
 * Called by dispatch during a read batch: true to idle now.  Starts,
 * continues or ends anticipation.
 */
static bool as_antic_hold(struct elevator_queue *eq, struct as_data *ad,
			  uint64_t now_ns, bool force)
{
	if (force) {
		if (as_antic_waiting(ad))
			as_antic_stop(ad, AS_END_OTHER);
		return false;
	}
	if (ad->antic_status == ANTIC_WAIT_NEXT &&
	    now_ns >= as_antic_end_ns(ad)) {
		as_antic_stop(ad, AS_END_TIMEOUT);
		return false;
	}
	if (!as_can_anticipate(ad, ad->next_rq[AS_SYNC], now_ns)) {
		if (as_antic_waiting(ad))
			as_antic_stop(ad, AS_END_OTHER);
		return false;
	}
	if (!as_antic_waiting(ad))
		ad->antic_started++;
	/* Only one read in flight when anticipating: let it complete. */
	ad->antic_status = ad->nr_in_flight[AS_SYNC] > 0 ?
		ANTIC_WAIT_REQ : ANTIC_WAIT_NEXT;
	as_antic_arm(eq, ad, now_ns);
	return true;
}

/* ------------------------------------------------------------------ */
/* Dispatch.                                                           */

static struct elv_request *as_move_to_dispatch(struct as_data *ad,
					       struct elv_request *rq)
{
	enum as_class dir = as_class(rq);
	struct as_proc *p = rq->elv_priv[0];

	ad->head[dir] = elv_rq_end_sector(rq);
	ad->next_rq[dir] = as_find_next(ad, rq);
	as_remove(ad, rq);
	ad->nr_in_flight[dir]++;
	/* The process of a tracked read is the one to wait for next. */
	if (dir == AS_SYNC && p != NULL) {
		p->nr_in_flight++;
		ad->antic_proc = p->exited ? NULL : p;
	} else {
		ad->antic_proc = NULL;
	}
	if (dir == AS_ASYNC && ad->current_write_count > 0)
		ad->current_write_count--;
	ad->antic_status = ANTIC_OFF;
	return rq;
}

/*
 * After a read batch's first completion: how long did the write batch
 * before it really take, from its start to now?  Shrink the next one if
 * it overran (halve it past three times write_batch_expire), grow it if
 * it used all its requests well within the time; one running out of work
 * says nothing.
 */
static void as_update_write_batch(struct as_data *ad, uint64_t now_ns)
{
	uint64_t batch = as_batch_ns(ad, AS_ASYNC);
	uint64_t start = ad->batch_end_ns > batch ? ad->batch_end_ns - batch : 0;
	uint64_t took = now_ns > start ? now_ns - start : 0;

	if (took > batch && !ad->write_batch_idled) {
		if (took > 3 * batch)
			ad->write_batch_count /= 2;
		else
			ad->write_batch_count--;
	} else if (took < batch && ad->current_write_count == 0) {
		if (batch > 3 * took)
			ad->write_batch_count *= 2;
		else
			ad->write_batch_count++;
	}
	if (ad->write_batch_count < 1)
		ad->write_batch_count = 1;
}

/* One asynchronous write in flight at a time near synchronous I/O. */
static bool as_write_held(const struct as_data *ad, uint64_t now_ns)
{
	return ad->nr_in_flight[AS_ASYNC] > 0 && ad->sync_seen &&
	       now_ns - ad->last_sync_ns < AS_QUIET_NS;
}

/* Is the running batch over?  Not before its clock has started. */
static bool as_batch_expired(const struct as_data *ad, uint64_t now_ns)
{
	if (ad->changed_batch || ad->new_batch)
		return false;
	if (now_ns >= ad->batch_end_ns)
		return true;
	return ad->batch_dir == AS_ASYNC && ad->current_write_count == 0;
}

/* Start a batch of dir; it runs once the other direction has drained. */
static void as_start_batch(struct as_data *ad, enum as_class dir)
{
	if (dir != ad->batch_dir)
		ad->changed_batch = true;
	if (dir == AS_SYNC)
		ad->sync_batches++;
	else
		ad->async_batches++;
	if (dir == AS_ASYNC) {
		ad->new_batch = false;
		ad->current_write_count = ad->write_batch_count;
		ad->write_batch_idled = false;
	}
	ad->batch_dir = dir;
}

/*
 * rq is about to go out in the running batch: if it is the first of a
 * changed batch, the batch's clock starts (a write batch's now, a read
 * batch's at its first completion).
 */
static struct elv_request *as_batch_begin(struct as_data *ad,
					  struct elv_request *rq,
					  uint64_t now_ns)
{
	if (!ad->changed_batch)
		return rq;
	ad->changed_batch = false;
	if (ad->batch_dir == AS_ASYNC)
		ad->batch_end_ns = now_ns + as_batch_ns(ad, AS_ASYNC);
	else
		ad->new_batch = true;
	return rq;
}

static struct elv_request *as_dispatch(struct elevator_queue *eq,
				       uint64_t now_ns, bool force)
{
	struct as_data *ad = as_data(eq);
	enum as_class dir, other;
	struct elv_request *rq;

	if (ad->nr_queued[AS_SYNC] == 0 && ad->nr_queued[AS_ASYNC] == 0)
		return NULL;

	/* A write batch that ran out of work cannot be timed. */
	if (ad->batch_dir == AS_ASYNC && ad->nr_queued[AS_SYNC] == 0 &&
	    (ad->current_write_count == 0 || ad->nr_queued[AS_ASYNC] == 0))
		ad->write_batch_idled = true;

	if (!force && ad->changed_batch &&
	    ad->nr_in_flight[AS_SYNC] + ad->nr_in_flight[AS_ASYNC] > 0)
		return NULL;	/* a completion calls again */
	dir = ad->batch_dir;
	other = as_other(dir);

	/*
	 * Uncontended, a batch runs on, its clock restarted; a write batch
	 * keeps its count, so that the first read to come ends it if the
	 * count is spent.
	 */
	if (ad->nr_queued[other] == 0 && !ad->changed_batch &&
	    !ad->new_batch && now_ns >= ad->batch_end_ns)
		ad->batch_end_ns = now_ns + as_batch_ns(ad, dir);

	if (!as_batch_expired(ad, now_ns) || ad->nr_queued[other] == 0) {
		/*
		 * In a read batch, idling may be better than serving the
		 * next read, or than turning to writes while no read waits.
		 */
		if (dir == AS_SYNC && as_antic_hold(eq, ad, now_ns, force))
			return NULL;
		if (dir == AS_ASYNC && !force && as_write_held(ad, now_ns)) {
			ad->writes_held++;
			return NULL;	/* a completion calls again */
		}
		if (ad->nr_queued[dir] > 0) {
			if (as_fifo_due(ad, dir, now_ns)) {
				ad->fifo_expired++;
				rq = as_fifo_first(ad, dir);
			} else if (ad->next_rq[dir] == NULL) {
				rq = as_fifo_first(ad, dir);
			} else {
				rq = ad->next_rq[dir];
			}
			rq = as_batch_begin(ad, rq, now_ns);
			return as_move_to_dispatch(ad, rq);
		}
	}

	/* A new batch of the other direction, from its oldest request. */
	if (ad->nr_queued[other] == 0)
		return NULL;	/* not reached: something is queued */
	as_start_batch(ad, other);
	ad->last_check_fifo[other] = now_ns;
	if (!force && ad->nr_in_flight[dir] > 0)
		return NULL;	/* it starts once dir has drained */
	rq = as_batch_begin(ad, as_fifo_first(ad, other), now_ns);
	return as_move_to_dispatch(ad, rq);
}

/* ------------------------------------------------------------------ */
/* Hooks.                                                              */

static int as_init_queue(struct elevator_queue *eq)
{
	struct as_data *ad = as_data(eq);
	unsigned i;
	int dir;

	/* The data arrives zeroed (empty trees) with the tunables set. */
	for (dir = AS_SYNC; dir <= AS_ASYNC; dir++)
		elv_list_init(&ad->fifo_list[dir]);
	/* The first batch with reads waiting is a read batch. */
	ad->batch_dir = AS_ASYNC;
	ad->antic_status = ANTIC_OFF;
	/* The kernel's first guess: a request per 10 ms of the batch. */
	ad->write_batch_count = (unsigned)(ad->write_batch_expire / 10);
	if (ad->write_batch_count < 2)
		ad->write_batch_count = 2;
	ad->current_write_count = ad->write_batch_count;

	ad->procs = calloc(AS_NR_PROCS, sizeof *ad->procs);
	ad->hash = calloc(1u << AS_HASH_BITS, sizeof *ad->hash);
	if (ad->procs == NULL || ad->hash == NULL) {
		free(ad->procs);
		free(ad->hash);
		ad->procs = NULL;
		ad->hash = NULL;
		return -ENOMEM;
	}
	elv_list_init(&ad->lru);
	for (i = 0; i < AS_NR_PROCS; i++)
		elv_list_add_tail(&ad->procs[i].lru, &ad->lru);
	return 0;
}

static void as_exit_queue(struct elevator_queue *eq)
{
	struct as_data *ad = as_data(eq);

	/* The host only exits an empty scheduler; say so if it did not. */
	if (ad->nr_queued[AS_SYNC] != 0 || ad->nr_queued[AS_ASYNC] != 0)
		elv_log(eq, ELV_LOG_ERR,
			"anticipatory: exit with %u reads and %u writes queued",
			ad->nr_queued[AS_SYNC], ad->nr_queued[AS_ASYNC]);
	free(ad->procs);
	free(ad->hash);
	ad->procs = NULL;
	ad->hash = NULL;
	ad->antic_proc = NULL;
}

/*
 * The host merges requests of one direction; two of different classes are
 * on different lists and stay apart, so that a sync write never waits in
 * the asynchronous batch, nor a background write rides in the sync one.
 */
static bool as_allow_merge(struct elevator_queue *eq,
			   const struct elv_request *rq,
			   const struct elv_request *next, enum elv_merge type)
{
	(void)eq;
	(void)type;
	return as_class(rq) == as_class(next);
}

/* A front merge moved rq's first sector down: put it back in order. */
static void as_merged(struct elevator_queue *eq, struct elv_request *rq,
		      enum elv_merge type)
{
	struct as_data *ad = as_data(eq);

	if (type != ELV_FRONT_MERGE)
		return;
	as_sort_del(ad, rq);
	as_sort_add(ad, rq);
}

/*
 * next was merged into rq: rq keeps the earlier deadline and FIFO place,
 * so the merged data is not served later than its oldest part; then next
 * is forgotten.
 */
static void as_merged_requests(struct elevator_queue *eq,
			       struct elv_request *rq,
			       struct elv_request *next)
{
	struct as_data *ad = as_data(eq);

	elv_rq_merge_fifo(rq, next);
	as_remove(ad, next);

	if (elv_rq_sort_misplaced(rq)) {
		as_sort_del(ad, rq);
		as_sort_add(ad, rq);
	}
}

static void as_add_request(struct elevator_queue *eq, struct elv_request *rq,
			   uint64_t now_ns)
{
	struct as_data *ad = as_data(eq);
	struct as_proc *p = NULL;

	/* Statistics are about synchronous requests of real processes. */
	if (as_class(rq) == AS_SYNC && rq->pid != 0) {
		ad->sync_seen = true;
		ad->last_sync_ns = now_ns;
		p = as_proc_get(ad, rq->pid, now_ns);
		if (p != NULL)
			as_proc_arrival(ad, p, rq, now_ns);
	}
	rq->elv_priv[0] = p;
	if (rq->sync_write)
		ad->sync_writes++;

	as_sort_add(ad, rq);
	rq->elv_deadline_ns = now_ns + as_expire_ns(ad, as_class(rq));
	elv_list_add_tail(&rq->elv_fifo, &ad->fifo_list[as_class(rq)]);
	ad->nr_queued[as_class(rq)]++;

	/* The host calls dispatch next: it will serve what broke the wait. */
	if (as_antic_waiting(ad) && as_can_break(ad, rq, now_ns))
		as_antic_stop(ad, ad->antic_proc == NULL ? AS_END_OTHER :
				  rq->pid == ad->antic_proc->node.pid ?
				  AS_END_HIT : AS_END_CLOSE);
}

static void as_completed(struct elevator_queue *eq, struct elv_request *rq,
			 uint64_t now_ns)
{
	struct as_data *ad = as_data(eq);
	struct as_proc *p;

	if (ad->nr_in_flight[as_class(rq)] > 0)
		ad->nr_in_flight[as_class(rq)]--;
	if (as_class(rq) != AS_SYNC)
		return;

	/* A read batch's clock starts at its first completion. */
	if (ad->new_batch && ad->batch_dir == AS_SYNC) {
		as_update_write_batch(ad, now_ns);
		ad->batch_end_ns = now_ns + as_batch_ns(ad, AS_SYNC);
		ad->new_batch = false;
	}

	/*
	 * The process is found again by pid: the elv_ fields are ours only
	 * until dispatch.  Only an entry with reads in flight can be the
	 * one that dispatched rq (busy entries are never recycled).
	 */
	if (rq->pid != 0 && ad->hash != NULL) {
		p = as_proc_find(ad, rq->pid);
		ad->last_sync_ns = now_ns;
		if (p != NULL && p->nr_in_flight > 0) {
			p->nr_in_flight--;
			p->has_end = true;
			p->last_end_ns = now_ns;
			as_proc_touch(ad, p, now_ns);
		}
	}
	/* The think time we wait through starts when all reads are done. */
	if (ad->nr_in_flight[AS_SYNC] == 0) {
		ad->reads_done_ns = now_ns;
		if (ad->antic_status == ANTIC_WAIT_REQ)
			ad->antic_status = ANTIC_WAIT_NEXT;
	}
}

/*
 * pid exited (the kernel's exit_io_context): never wait for it again.  A
 * wait for it (in progress, or about to start after its last read) ends
 * now if exits are seldom followed by another process's close read
 * (exit_no_coop), and otherwise goes on for one until antic_expire
 * after the exit, its entry kept for as_close.  Its entry is freed now if it has nothing
 * queued or in flight and is not waited on, and otherwise kept for the requests' accounting, with their
 * completions found by pid, until the LRU recycles it or the pid comes
 * back as a new process.
 */
static void as_exit_process(struct elevator_queue *eq, pid_t pid,
			    uint64_t now_ns)
{
	struct as_data *ad = as_data(eq);
	struct as_proc *p;

	if (pid == 0 || ad->hash == NULL)
		return;
	ad->exits_told = true;
	p = as_proc_find(ad, pid);
	if (p == NULL)
		return;
	p->exited = true;
	if (p == ad->antic_proc) {
		/*
		 * Waited on, for a cooperator: the next process of a script
		 * starts only now, so its antic_expire counts from the exit
		 * (the next dispatch arms the wake-up for it).
		 */
		if (ad->exit_no_coop <= AS_AVG_ONE / 2) {
			if (ad->antic_status == ANTIC_WAIT_NEXT &&
			    now_ns > ad->reads_done_ns)
				ad->reads_done_ns = now_ns;
			return;
		}
		if (as_antic_waiting(ad))
			as_antic_stop(ad, AS_END_EXIT);
		ad->antic_proc = NULL;
	}
	if (p->nr_queued == 0 && p->nr_in_flight == 0) {
		elv_pid_del(ad->hash, AS_HASH_BITS, &p->node);
		p->node.pid = 0;
		/* The first one the LRU offers for reuse. */
		elv_list_del(&p->lru);
		elv_list_add(&p->lru, &ad->lru);
	}
}

/*
 * As as_may_queue: the process being anticipated is admitted over the
 * limit, or the wait would end with its request stuck behind a full queue.
 */
static enum elv_may_queue as_may_queue(struct elevator_queue *eq,
				       const struct elv_request *rq)
{
	struct as_data *ad = as_data(eq);

	if (as_antic_waiting(ad) && ad->antic_proc != NULL &&
	    ad->antic_proc->node.pid == rq->pid)
		return ELV_MQUEUE_MUST;
	return ELV_MQUEUE_MAY;
}

static bool as_has_work(struct elevator_queue *eq)
{
	struct as_data *ad = as_data(eq);

	return ad->nr_queued[AS_SYNC] != 0 || ad->nr_queued[AS_ASYNC] != 0;
}

/* ------------------------------------------------------------------ */
/* Tunables, shown and set under .control/iosched/.                    */

/*
 * est_time, read-only as in the kernel: the think time assumed for a
 * process not seen before, in microseconds.
 */
static int64_t as_est_time_show(struct elevator_queue *eq)
{
	return (int64_t)(as_data(eq)->new_ttime.mean / 1000);
}

static const struct elv_tunable as_tunables[] = {
	ELV_TUNABLE(struct as_data, read_expire, AS_READ_EXPIRE,
		    0, 3600000, "ms",
		    "longest a read waits before it is served out of order"),
	ELV_TUNABLE(struct as_data, write_expire, AS_WRITE_EXPIRE,
		    0, 3600000, "ms",
		    "longest a write waits before it is served out of order"),
	ELV_TUNABLE(struct as_data, read_batch_expire, AS_READ_BATCH_EXPIRE,
		    0, 3600000, "ms",
		    "how long a read batch runs while writes wait"),
	ELV_TUNABLE(struct as_data, write_batch_expire, AS_WRITE_BATCH_EXPIRE,
		    0, 3600000, "ms",
		    "how long a write batch runs while reads wait"),
	ELV_TUNABLE(struct as_data, antic_expire, AS_ANTIC_EXPIRE,
		    0, 1000, "ms",
		    "longest idle wait for a process's next read (0: never)"),
	ELV_TUNABLE_COMPUTED("est_time", as_est_time_show, "us",
			     "think time assumed for a new process"),
	{ .name = NULL },
};

static const struct elv_counter as_counters[] = {
	ELV_COUNTER(struct as_data, antic_started),
	ELV_COUNTER(struct as_data, antic_hits),
	ELV_COUNTER(struct as_data, antic_close),
	ELV_COUNTER(struct as_data, antic_timeouts),
	ELV_COUNTER(struct as_data, antic_other),
	ELV_COUNTER(struct as_data, antic_exits),
	ELV_COUNTER(struct as_data, sync_batches),
	ELV_COUNTER(struct as_data, async_batches),
	ELV_COUNTER(struct as_data, fifo_expired),
	ELV_COUNTER(struct as_data, sync_writes),
	ELV_COUNTER(struct as_data, writes_held),
	{ .name = NULL },
};

/* ------------------------------------------------------------------ */
/* The scheduler and its registration.                                 */

static struct elevator_type anticipatory_type = {
	.name = "anticipatory",
	.description = "deadline with idling for a process's next nearby read",
	.data_size = sizeof(struct as_data),
	.init_queue = as_init_queue,
	.exit_queue = as_exit_queue,
	.allow_merge = as_allow_merge,
	.merged = as_merged,
	.merged_requests = as_merged_requests,
	.add_request = as_add_request,
	.dispatch = as_dispatch,
	.completed = as_completed,
	.has_work = as_has_work,
	.may_queue = as_may_queue,
	.exit_process = as_exit_process,
	.tunables = as_tunables,
	.counters = as_counters,
};

IOSCHED_ELEVATOR(anticipatory_type);
