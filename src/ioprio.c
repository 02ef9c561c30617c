/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The I/O priority of the process behind a FUSE request.
 *
 * FUSE does not carry the caller's I/O priority, so we ask the kernel with
 * ioprio_get(2) on the pid fuse_req_ctx() gives us.  A process that never
 * called ioprio_set(2) (class NONE) gets what the kernel's
 * task_nice_ioprio() would give it: the best-effort level (nice + 20) / 5,
 * or the real-time class for a SCHED_FIFO/SCHED_RR process.  Requests the
 * kernel makes on its own (pid 0: writeback, some readahead) and processes
 * that are already gone get the default, best-effort level 4.
 *
 * This is called for every request, and a sequential reader sends
 * thousands per second: three system calls each time would cost more than
 * the scheduling gains.  A small direct-mapped cache keyed by pid holds
 * each answer for IOPRIO_CACHE_TTL_NS; an `ionice -p` on a running process
 * is therefore seen within that time, which is good enough for a
 * priority.  A recycled pid may inherit a stale entry for as long, too.
 */
#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fuse-iosched.h"

/* From linux/ioprio.h, whose class enum clashes with elevator.h's. */
#define IOPRIO_WHO_PROCESS 1

#define IOPRIO_DEFAULT IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_BE, 4)

#define IOPRIO_CACHE_SIZE 64		/* slots; a power of two */
#define IOPRIO_CACHE_TTL_NS 100000000ULL	/* 100 ms */

struct ioprio_slot {
	pid_t pid;		/* 0: empty */
	int ioprio;
	uint64_t stamp_ns;	/* when it was asked */
};

static pthread_mutex_t ioprio_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ioprio_slot ioprio_cache[IOPRIO_CACHE_SIZE]; /* ioprio_lock */

/*
 * The coarse clock costs no system call and ticks every few milliseconds,
 * plenty for a 100 ms lifetime.
 */
static uint64_t ioprio_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Ask the kernel; never fails. */
static int ioprio_query(pid_t pid)
{
	int prio, class, policy, nice;

	prio = (int)syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, (int)pid);
	if (prio < 0)
		return IOPRIO_DEFAULT;	/* gone (ESRCH) or not ours to ask */
	class = IOSCHED_IOPRIO_CLASS(prio);
	if (class == ELV_IOPRIO_CLASS_RT || class == ELV_IOPRIO_CLASS_BE) {
		int level = IOSCHED_IOPRIO_LEVEL(prio);

		if (level >= IOSCHED_IOPRIO_LEVELS)
			level = IOSCHED_IOPRIO_LEVELS - 1;
		return IOSCHED_IOPRIO(class, level);
	}
	if (class == ELV_IOPRIO_CLASS_IDLE)
		return IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_IDLE, 0);

	/* Class NONE: the I/O priority follows the CPU priority. */
	errno = 0;
	nice = getpriority(PRIO_PROCESS, (id_t)pid);
	if (nice == -1 && errno != 0)
		return IOPRIO_DEFAULT;
	if (nice < -20)
		nice = -20;
	if (nice > 19)
		nice = 19;
	policy = sched_getscheduler(pid);
	class = ELV_IOPRIO_CLASS_BE;
	if (policy == SCHED_FIFO || policy == SCHED_RR)
		class = ELV_IOPRIO_CLASS_RT;
	return IOSCHED_IOPRIO(class, (nice + 20) / 5);
}

int ioprio_of_pid(pid_t pid)
{
	struct ioprio_slot *slot;
	uint64_t now;
	int prio;

	if (pid <= 0)
		return IOPRIO_DEFAULT;

	now = ioprio_now_ns();
	slot = &ioprio_cache[(unsigned)pid & (IOPRIO_CACHE_SIZE - 1)];
	pthread_mutex_lock(&ioprio_lock);
	if (slot->pid == pid && now - slot->stamp_ns < IOPRIO_CACHE_TTL_NS) {
		prio = slot->ioprio;
		pthread_mutex_unlock(&ioprio_lock);
		return prio;
	}
	pthread_mutex_unlock(&ioprio_lock);

	/* No lock across the system calls: a duplicate query is harmless. */
	prio = ioprio_query(pid);

	pthread_mutex_lock(&ioprio_lock);
	slot->pid = pid;
	slot->ioprio = prio;
	slot->stamp_ns = now;
	pthread_mutex_unlock(&ioprio_lock);
	return prio;
}
