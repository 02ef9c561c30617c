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
 *
 * ioprio_pass() hands a request's priority on to the backing file, as the
 * kernel's loop driver does (since 6.15): it sets the calling thread's own
 * I/O priority, which the kernel puts on the thread's direct I/O (the
 * kiocb's ki_ioprio, from get_current_ioprio()) and on the reads it sends
 * the disk for a page-cache miss (bio_set_ioprio()).  Writeback is done by
 * the kernel's flusher threads and carries none, in the kernel too.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

/* From linux/ioprio.h, whose class enum clashes with elevator.h's. */
#define IOPRIO_WHO_PROCESS 1

#define IOPRIO_DEFAULT IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_BE, 4)

/* Not a valid priority: a thread that has not passed one on yet. */
#define IOPRIO_UNKNOWN (-1)

#define IOPRIO_CACHE_SIZE 64		/* slots; a power of two */
#define IOPRIO_CACHE_TTL_NS 100000000ULL	/* 100 ms */

/*
 * A slot is read without a lock, as a seqlock: every request looks its
 * pid up, and a mutex there was one of the locks per request that
 * libfuse's own passthrough does not take.  Writers (a miss, at most one
 * per pid per TTL) hold ioprio_lock and make seq odd while they store.
 */
struct ioprio_slot {
	atomic_uint seq;	/* odd while a writer stores */
	_Atomic pid_t pid;	/* 0: empty */
	atomic_int ioprio;
	_Atomic uint64_t stamp_ns;	/* when it was asked */
};

static pthread_mutex_t ioprio_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ioprio_slot ioprio_cache[IOPRIO_CACHE_SIZE];

/* The cached priority of pid, asked less than a TTL before now. */
static bool ioprio_cached(struct ioprio_slot *slot, pid_t pid, uint64_t now,
			  int *prio)
{
	unsigned seq = atomic_load_explicit(&slot->seq, memory_order_acquire);
	bool hit;

	hit = atomic_load_explicit(&slot->pid, memory_order_relaxed) == pid &&
	      now - atomic_load_explicit(&slot->stamp_ns,
					 memory_order_relaxed) <
		      IOPRIO_CACHE_TTL_NS;
	*prio = atomic_load_explicit(&slot->ioprio, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	return hit && !(seq & 1) &&
	       atomic_load_explicit(&slot->seq, memory_order_relaxed) == seq;
}

static void ioprio_store(struct ioprio_slot *slot, pid_t pid, int prio,
			 uint64_t now)
{
	unsigned seq;

	pthread_mutex_lock(&ioprio_lock);
	seq = atomic_load_explicit(&slot->seq, memory_order_relaxed);
	atomic_store_explicit(&slot->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&slot->pid, pid, memory_order_relaxed);
	atomic_store_explicit(&slot->ioprio, prio, memory_order_relaxed);
	atomic_store_explicit(&slot->stamp_ns, now, memory_order_relaxed);
	atomic_store_explicit(&slot->seq, seq + 2, memory_order_release);
	pthread_mutex_unlock(&ioprio_lock);
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

	now = clock_coarse_ns();
	slot = &ioprio_cache[(unsigned)pid & (IOPRIO_CACHE_SIZE - 1)];
	if (ioprio_cached(slot, pid, now, &prio))
		return prio;
	/* No lock across the system calls: a duplicate query is harmless. */
	prio = ioprio_query(pid);
	ioprio_store(slot, pid, prio, now);
	return prio;
}

/*
 * The calling thread's I/O priority as ioprio_pass() last set it, and as
 * it was before the first time; so that a stream of requests of one class
 * costs no system call.
 */
static __thread int ioprio_thread = IOPRIO_UNKNOWN;
static __thread int ioprio_own = IOPRIO_UNKNOWN;

/* Set once, then only read (atomics): the real-time class was refused. */
static bool ioprio_rt_denied;
/* Set once (atomic): another ioprio_set(2) failure was logged. */
static bool ioprio_failed;

static int ioprio_set_thread(int prio)
{
	/* IOPRIO_WHO_PROCESS with who 0 is the calling thread (task). */
	return (int)syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, prio);
}

void ioprio_pass(int prio)
{
	bool rt;

	if (prio == ioprio_thread)
		return;
	if (ioprio_own == IOPRIO_UNKNOWN) {
		/*
		 * What the thread's I/O runs at, class NONE resolved as the
		 * kernel does: older kernels report NONE, and taking that
		 * literally would cost two ioprio_set(2) per request of the
		 * default priority that a FUSE thread performs itself.
		 */
		ioprio_own = ioprio_query((pid_t)syscall(SYS_gettid));
		ioprio_thread = ioprio_own;
	}
	/*
	 * Without CAP_SYS_ADMIN or CAP_SYS_NICE the kernel refuses the
	 * real-time class; the best-effort class at the same level is the
	 * nearest we may have.  Asked once, logged once.
	 */
	if (IOSCHED_IOPRIO_CLASS(prio) == ELV_IOPRIO_CLASS_RT &&
	    __atomic_load_n(&ioprio_rt_denied, __ATOMIC_RELAXED))
		prio = IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_BE,
				      IOSCHED_IOPRIO_LEVEL(prio));
	if (prio == ioprio_thread)
		return;
	if (ioprio_set_thread(prio) == 0) {
		ioprio_thread = prio;
		return;
	}
	rt = IOSCHED_IOPRIO_CLASS(prio) == ELV_IOPRIO_CLASS_RT;
	if (errno == EPERM && rt) {
		if (!__atomic_exchange_n(&ioprio_rt_denied, true,
					 __ATOMIC_RELAXED))
			log_info("the real-time I/O class is not permitted: "
				 "its requests reach the backing file as "
				 "best-effort");
		ioprio_pass(IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_BE,
					   IOSCHED_IOPRIO_LEVEL(prio)));
		return;
	}
	if (!__atomic_exchange_n(&ioprio_failed, true, __ATOMIC_RELAXED))
		log_warn("cannot pass an I/O priority to the backing file: "
			 "ioprio_set: %s", strerror(errno));
	ioprio_thread = prio;	/* asking again would fail again */
}

void ioprio_pass_end(void)
{
	if (ioprio_own != IOPRIO_UNKNOWN)
		ioprio_pass(ioprio_own);
}
