/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The daemon's data buffers: a bound on the bytes of queued write copies,
 * above which a writer waits for room before copying (request.c), and
 * giving freed memory back to the system once no buffer has been in use
 * for MEMORY_TRIM_MS (malloc_trim, on the timer's thread), with one malloc
 * arena for all threads.  A read's buffer exists only while it is
 * performed (perform.c), so a backlog of reads holds none.
 */
#include <malloc.h>

#include "daemon.h"

/*
 * Idle this long (no buffer in use, none freed) before trimming: a busy
 * queue that goes idle between requests (depth 1) must not give back
 * memory it needs again at once (page faults on every buffer).
 */
#define MEMORY_TRIM_MS 1000
/* Allocations from this size up are mmap'd (none of the data buffers). */
#define MEMORY_MMAP_MIN (4 << 20)
/* Free memory at the heap's top that free() gives back by itself. */
#define MEMORY_TRIM_MAX (32 << 20)

/*
 * The buffers' accounting, for the whole process (one mount).  copy_bytes
 * is reserved before a write's copy and released after it is freed; the
 * lock and cond only for writers waiting for room.  busy counts parts
 * with a buffer of ours, from the write's copy or the read's submission
 * to request_end; freed counts releases, so that the trim timer sees
 * whether anything happened since it was armed.
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t room;
	_Atomic uint64_t copy_bytes, copy_peak, copy_waits, trims, freed;
	_Atomic uint64_t copy_parked;	/* the throttle's, outside the bound */
	_Atomic uint64_t adopted;
	atomic_uint waiters, busy;
	atomic_bool trim_armed;
	uint64_t trim_seen;	/* the timer thread's: freed when it last
				 * looked (so at least one period passes) */
	struct fs *fs;
} memory = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.room = PTHREAD_COND_INITIALIZER,
};

static void memory_peak(uint64_t cur)
{
	uint64_t peak = atomic_load(&memory.copy_peak);

	while (cur > peak &&
	       !atomic_compare_exchange_weak(&memory.copy_peak, &peak, cur))
		;
}

/* Wait for room for len more bytes of copies, then count them.  Above
 * the limit only when nothing else is copied (a single larger write). */
void memory_copy_reserve(size_t len)
{
	uint64_t cur = atomic_load(&memory.copy_bytes);
	bool waited = false;

	for (;;) {
		if (cur == 0 || cur + len <= MEMORY_COPY_MAX) {
			if (atomic_compare_exchange_weak(
				    &memory.copy_bytes, &cur, cur + len))
				break;
			continue;
		}
		pthread_mutex_lock(&memory.lock);
		atomic_fetch_add(&memory.waiters, 1);
		while ((cur = atomic_load(&memory.copy_bytes)) != 0 &&
		       cur + len > MEMORY_COPY_MAX)
			pthread_cond_wait(&memory.room, &memory.lock);
		atomic_fetch_sub(&memory.waiters, 1);
		pthread_mutex_unlock(&memory.lock);
		waited = true;
	}
	if (waited)
		atomic_fetch_add(&memory.copy_waits, 1);
	memory_peak(cur + len);
}

/* len bytes of copies were freed: wake the writers waiting for room. */
void memory_copy_release(size_t len)
{
	atomic_fetch_sub(&memory.copy_bytes, len);
	if (atomic_load(&memory.waiters) != 0) {
		pthread_mutex_lock(&memory.lock);
		pthread_cond_broadcast(&memory.room);
		pthread_mutex_unlock(&memory.lock);
	}
}

size_t memory_charge(const struct io_part *p)
{
	return p->own != NULL ? loop_block_size() : p->len;
}

size_t memory_copies_of(const struct io *io)
{
	size_t n = 0;

	if (io->rq.dir == ELV_WRITE)
		for (const struct io_part *p = io->parts; p != NULL;
		     p = p->next)
			if (p->lender == NULL && !p->borrowed)
				n += memory_charge(p);
	return n;
}

void memory_adopted(void)
{
	atomic_fetch_add_explicit(&memory.adopted, 1, memory_order_relaxed);
}

void memory_copy_park(size_t len)
{
	atomic_fetch_add(&memory.copy_parked, len);
	memory_copy_release(len);
}

void memory_copy_unpark(size_t len)
{
	atomic_fetch_sub(&memory.copy_parked, len);
	memory_peak(atomic_fetch_add(&memory.copy_bytes, len) + len);
}

/* On the timer's thread: trim if nothing happened since it was armed. */
static void memory_trim(void *arg)
{
	uint64_t freed = atomic_load(&memory.freed);

	if (atomic_load(&memory.busy) != 0 ||
	    freed != memory.trim_seen) {
		memory.trim_seen = freed;
		timer_defer(memory.fs->timer, MEMORY_TRIM_MS);
		return;
	}
	atomic_store(&memory.trim_armed, false);
	malloc_trim(0);
	atomic_fetch_add(&memory.trims, 1);
}

void memory_buffers_used(unsigned n)
{
	atomic_fetch_add(&memory.busy, n);
}

/* n parts' buffers were freed: arm the trim, unless it is armed. */
void memory_buffers_freed(unsigned n)
{
	atomic_fetch_add(&memory.freed, 1);
	atomic_fetch_sub(&memory.busy, n);
	if (!atomic_load_explicit(&memory.trim_armed,
				  memory_order_relaxed) &&
	    !atomic_exchange(&memory.trim_armed, true))
		timer_defer(memory.fs->timer, MEMORY_TRIM_MS);
}

int memory_start(struct fs *fs)
{
	/*
	 * One malloc arena for all threads, set before the session threads
	 * and workers start: with one per thread (glibc's default, up to 8
	 * per CPU) each arena kept up to two 1 MiB buffers at its top, which
	 * malloc_trim does not release outside the main arena; a backlog of
	 * 1 MiB direct writes peaked at 67 MB and settled at 30 MB, with one
	 * arena at 45 and 13 MB.  Small allocations come from the per-thread
	 * tcache without the arena's lock; large buffers take it once each.
	 */
	mallopt(M_ARENA_MAX, 1);
	/*
	 * Data buffers (at most 1 MiB a part, a little more for a bounce
	 * buffer) from the heap, never mmap'd, and the heap's top given back
	 * by the idle trim rather than at every free: glibc's defaults had
	 * the heap grow and shrink by brk around each 256 KiB read (361 brk
	 * for 256 reads), with the page faults that follow.  Above
	 * MEMORY_TRIM_MAX free at the top, free() still trims at once.
	 */
	mallopt(M_MMAP_THRESHOLD, MEMORY_MMAP_MIN);
	mallopt(M_TRIM_THRESHOLD, MEMORY_TRIM_MAX);
	memory.fs = fs;
	return timer_set_deferred(fs->timer, memory_trim, NULL);
}

void memory_stats(struct stats_memory *m)
{
	m->copy_bytes = atomic_load(&memory.copy_bytes);
	m->copy_peak = atomic_load(&memory.copy_peak);
	m->copy_limit = MEMORY_COPY_MAX;
	m->copy_waits = atomic_load(&memory.copy_waits);
	m->copy_parked = atomic_load(&memory.copy_parked);
	m->adopted = atomic_load(&memory.adopted);
	m->trims = atomic_load(&memory.trims);
}
