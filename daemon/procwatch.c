/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Process exits, told to the scheduler (queue_process_exited), as the
 * kernel's schedulers hear of them when an I/O context exits.
 *
 * A FUSE request carries the calling thread's id (the kernel sends
 * pid_nr_ns(task_pid(current)): a tid, not the tgid), and the schedulers
 * keep their per-process state by it.  So each thread seen on the read
 * and write paths gets a pidfd of its own (pidfd_open with PIDFD_THREAD,
 * Linux 6.9; before that a thread group leader's pidfd, and other threads
 * are not watched), polled by the libevent loop (timer.c): it becomes
 * readable once the thread has exited, and the loop tells the queue.
 *
 * The request path only looks the tid up: a per-thread memo of the last
 * one seen (struct pidmemo), valid while no entry has left the table,
 * else a hash under a leaf lock.  A tid not yet there gets an entry and
 * goes on a list for the loop thread, which opens, polls and closes every
 * pidfd: no session thread makes a system call here, and no event is
 * freed by one thread while another runs its callback.  A tid that has
 * already gone when its pidfd is opened (ESRCH) has exited: told at once.
 *
 * Bounded for any number of processes: at most procwatch_limit() entries
 * (from RLIMIT_NOFILE, which fs_fd.c leaves room for), allocated at start.
 * Once all are in use, a new tid is not watched (its scheduler falls back
 * to its idle timeouts) and the loop stops watching the longest watched
 * eighth, so that a user with many live processes cannot keep others'
 * from being watched for long.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <event2/event.h>

#include "daemon.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL	/* linux/pidfd.h since 6.9 */
#endif

enum procwatch_state {
	PROCWATCH_FREE,
	PROCWATCH_PENDING,	/* in the table, for the loop to open */
	PROCWATCH_WATCHED,	/* in the table; fd -1 if it cannot be */
};

struct procwatch_entry {
	struct elv_pid_node node;	/* lock: in pw_hash; pid 0: free */
	enum procwatch_state state;	/* lock */
	/* lock: on the free, pending or watched list (oldest first) */
	TAILQ_ENTRY(procwatch_entry) list;
	int fd;				/* loop thread's: the pidfd, or -1 */
	struct event *ev;		/* loop thread's */
};

/* Protects the table, the lists and the states; a leaf. */
static pthread_mutex_t pw_lock = PTHREAD_MUTEX_INITIALIZER;
static struct procwatch_entry *pw_entries;
static unsigned pw_max;		/* set before the first request; 0: off */
static struct elv_pid_node **pw_hash;
static unsigned pw_hash_bits;
TAILQ_HEAD(procwatch_list, procwatch_entry);
static struct procwatch_list pw_free, pw_pending, pw_watched;
static bool pw_evict;		/* lock: the table filled up */
static struct event *pw_kick;	/* runs procwatch_kick on the loop */
static struct queue *pw_queue;
/* lock: .control/stats's line (procwatch_show) */
static unsigned pw_nr_watched;	/* entries in the table */
static uint64_t pw_exits, pw_evicted, pw_refused;
/* Bumped whenever an entry leaves the table: per-thread caches drop. */
static atomic_uint pw_gen;

/* Take e off list and out of the table, onto the free list; pw_lock. */
static void procwatch_release(struct procwatch_list *list,
			      struct procwatch_entry *e)
{
	elv_pid_del(pw_hash, pw_hash_bits, &e->node);
	TAILQ_REMOVE(list, e, list);
	pw_nr_watched--;
	e->node.pid = 0;
	e->state = PROCWATCH_FREE;
	TAILQ_INSERT_TAIL(&pw_free, e, list);
	pidmemo_bump(&pw_gen);
}

/*
 * Thread pid has exited.  Everything that keeps state per pid hears of
 * it here, on the loop thread, with no lock held: add a call for another.
 */
static void procwatch_exited(pid_t pid)
{
	queue_process_exited(pw_queue, pid);
	/* A pid used again must not inherit the old process's group. */
	cgroup_forget_pid(pid);
}

/* Stop polling e (loop thread). */
static void procwatch_close(struct procwatch_entry *e)
{
	if (e->ev != NULL)
		event_free(e->ev);
	if (e->fd >= 0)
		close(e->fd);
	e->ev = NULL;
	e->fd = -1;
}

static void procwatch_fired(evutil_socket_t fd, short what, void *arg)
{
	struct procwatch_entry *e = arg;
	/* The loop's entry: nobody else frees it. */
	pid_t pid = e->node.pid;

	procwatch_close(e);
	pthread_mutex_lock(&pw_lock);
	procwatch_release(&pw_watched, e);
	pw_exits++;
	pthread_mutex_unlock(&pw_lock);
	procwatch_exited(pid);
}

/* Open and poll a pidfd of entry e, on pending (loop thread). */
static void procwatch_open(struct event_base *base,
			   struct procwatch_list *pending,
			   struct procwatch_entry *e)
{
	pid_t pid = e->node.pid;
	int fd, err;

	fd = (int)syscall(SYS_pidfd_open, pid, PIDFD_THREAD);
	if (fd < 0 && errno == EINVAL)	/* before 6.9: leaders only */
		fd = (int)syscall(SYS_pidfd_open, pid, 0);
	err = fd < 0 ? errno : 0;
	if (fd >= 0) {
		e->ev = event_new(base, fd, EV_READ | EV_PERSIST,
				  procwatch_fired, e);
		if (e->ev == NULL || event_add(e->ev, NULL) != 0) {
			e->fd = fd;
			procwatch_close(e);
			fd = -1;
			err = ENOMEM;
		}
	}
	pthread_mutex_lock(&pw_lock);
	if (err == ESRCH) {
		procwatch_release(pending, e);
		pw_exits++;
	} else {
		e->fd = fd;
		TAILQ_REMOVE(pending, e, list);
		e->state = PROCWATCH_WATCHED;
		TAILQ_INSERT_TAIL(&pw_watched, e, list);
	}
	pthread_mutex_unlock(&pw_lock);
	if (err == ESRCH)
		procwatch_exited(pid);
	else if (err != 0)
		log_ratelimited(LOG_WARNING, "cannot watch thread %ld for its "
				"exit: %s", (long)pid, strerror(err));
}

/* On the loop: evict if the table filled, then open what is pending. */
static void procwatch_kick(evutil_socket_t fd, short what, void *arg)
{
	struct event_base *base = arg;
	struct procwatch_list evict = TAILQ_HEAD_INITIALIZER(evict);
	struct procwatch_list pending = TAILQ_HEAD_INITIALIZER(pending);
	struct procwatch_entry *e;
	unsigned n;

	pthread_mutex_lock(&pw_lock);
	/* The oldest eighth leaves the table; the loop alone frees events. */
	for (n = pw_evict ? pw_max / 8 + 1 : 0;
	     n > 0 && (e = TAILQ_FIRST(&pw_watched)) != NULL; n--) {
		TAILQ_REMOVE(&pw_watched, e, list);
		e->state = PROCWATCH_PENDING;	/* out of reach meanwhile */
		TAILQ_INSERT_TAIL(&evict, e, list);
	}
	pw_evict = false;
	TAILQ_CONCAT(&pending, &pw_pending, list);
	pthread_mutex_unlock(&pw_lock);

	TAILQ_FOREACH(e, &evict, list)
		procwatch_close(e);
	pthread_mutex_lock(&pw_lock);
	while ((e = TAILQ_FIRST(&evict)) != NULL) {
		procwatch_release(&evict, e);
		pw_evicted++;
	}
	pthread_mutex_unlock(&pw_lock);
	/* procwatch_open moves each to a list of the table's. */
	while ((e = TAILQ_FIRST(&pending)) != NULL)
		procwatch_open(base, &pending, e);
}

/*
 * pid sent a request: from the next one on, its exit will be told.
 * The cost when it was seen last by this thread: a relaxed load and two
 * compares.
 */
void procwatch_note(pid_t pid)
{
	static __thread struct pidmemo last;
	unsigned gen = pidmemo_gen(&pw_gen);
	struct procwatch_entry *e;
	bool kick = false, known = true;

	if (pid <= 0 || pw_max == 0 || pidmemo_hit(&last, pid, gen))
		return;
	pthread_mutex_lock(&pw_lock);
	if (elv_pid_find(pw_hash, pw_hash_bits, pid) == NULL) {
		e = TAILQ_FIRST(&pw_free);
		if (e == NULL) {
			pw_refused++;
			known = false;
			kick = !pw_evict;
			pw_evict = true;
		} else {
			TAILQ_REMOVE(&pw_free, e, list);
			e->node.pid = pid;
			e->state = PROCWATCH_PENDING;
			elv_pid_add(pw_hash, pw_hash_bits, &e->node);
			kick = TAILQ_EMPTY(&pw_pending);
			TAILQ_INSERT_TAIL(&pw_pending, e, list);
			pw_nr_watched++;
		}
	}
	pthread_mutex_unlock(&pw_lock);
	if (known)
		pidmemo_set(&last, pid, gen);
	if (kick)
		event_active(pw_kick, 0, 0);
}

int procwatch_show(char *buf, size_t size)
{
	int n;

	pthread_mutex_lock(&pw_lock);
	n = snprintf(buf, size, "procwatch watched %u max %u exits %llu "
		     "evicted %llu refused %llu\n", pw_nr_watched, pw_max,
		     (unsigned long long)pw_exits,
		     (unsigned long long)pw_evicted,
		     (unsigned long long)pw_refused);
	pthread_mutex_unlock(&pw_lock);
	return n >= 0 && (size_t)n < size ? n : -ENOSPC;
}

static void procwatch_stop(void *arg)
{
	unsigned i;

	for (i = 0; i < pw_max; i++)
		procwatch_close(&pw_entries[i]);
	event_free(pw_kick);
	free(pw_hash);
	free(pw_entries);
	pw_max = 0;
}

int procwatch_start(struct timer *t, struct queue *q)
{
	struct rlimit rl;
	unsigned i, max;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		rl.rlim_cur = 1024;
	max = procwatch_limit(rl.rlim_cur);
	for (pw_hash_bits = 1; (1u << pw_hash_bits) < 2 * max; pw_hash_bits++)
		;
	pw_entries = calloc(max, sizeof *pw_entries);
	pw_hash = calloc(1u << pw_hash_bits, sizeof *pw_hash);
	pw_kick = event_new(timer_base(t), -1, 0, procwatch_kick,
			    timer_base(t));
	if (pw_entries == NULL || pw_hash == NULL || pw_kick == NULL ||
	    timer_on_stop(t, procwatch_stop, NULL) != 0) {
		if (pw_kick != NULL)
			event_free(pw_kick);
		free(pw_hash);
		free(pw_entries);
		return -ENOMEM;
	}
	TAILQ_INIT(&pw_free);
	TAILQ_INIT(&pw_pending);
	TAILQ_INIT(&pw_watched);
	for (i = 0; i < max; i++) {
		pw_entries[i].fd = -1;
		TAILQ_INSERT_TAIL(&pw_free, &pw_entries[i], list);
	}
	pw_queue = q;
	pw_max = max;
	log_info("process exits: watching up to %u threads", max);
	return 0;
}
