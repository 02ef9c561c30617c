/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Differential replay: one seeded workload through one scheduler on the
 * virtual clock, printing every dispatch (time, parts, extent).  Not a
 * test by itself: run it on two commits and diff the outputs to show that
 * a refactoring leaves schedules unchanged.
 *
 *   tests/unit/replay SCHEDULER SEED [NR_IOS] > before.txt
 *
 * The workload mixes four files, six processes of several priorities,
 * reads and writes, sync and async, sequential streams forwards (back
 * merges) and backwards (front merges) and random requests, and completes
 * dispatched requests after a seeded service time.
 */
#include <stdlib.h>

#include "harness.h"

#define R_FILES 4
#define R_PIDS 6
#define R_MAX_FLIGHT 4
#define R_FILE_BYTES (64ULL << 20)

static uint64_t r_state;

static uint64_t r_rand(void)
{
	/* xorshift64*: the same numbers on every machine. */
	r_state ^= r_state >> 12;
	r_state ^= r_state << 25;
	r_state ^= r_state >> 27;
	return r_state * 2685821657736338717ULL;
}

static unsigned r_below(unsigned n)
{
	return (unsigned)(r_rand() % n);
}

/* Per process: where its stream is, in which file. */
struct r_proc {
	uint64_t file, next;
	int ioprio;
};

static struct r_proc r_procs[R_PIDS];

struct r_flight {
	struct io *io;
	uint64_t done_ns;
};

static struct r_flight r_flight[R_MAX_FLIGHT];
static unsigned r_nr_flight;

static struct io *r_new_io(int id)
{
	struct r_proc *p = &r_procs[r_below(R_PIDS)];
	uint64_t bytes = 4096ULL * (1 + r_below(16)), off;
	enum elv_dir dir = r_below(10) < 7 ? ELV_READ : ELV_WRITE;
	unsigned kind = r_below(20);
	struct io *io;

	if (kind < 10) {		/* forwards: a back merge */
		off = p->next;
	} else if (kind < 13 && p->next >= 2 * bytes) {
		off = p->next - 2 * bytes;	/* backwards: a front merge */
	} else {
		p->file = r_below(R_FILES);
		off = 4096ULL * r_below((unsigned)(R_FILE_BYTES / 4096 - 16));
	}
	p->next = off + bytes;
	io = h_io(id, dir, p->file, off, bytes,
		  p->file * (R_FILE_BYTES >> 9) + (off >> 9));
	io->rq.pid = 100 + (pid_t)(p - r_procs);
	io->rq.sync = dir == ELV_READ || r_below(5) == 0;
	io->rq.ioprio = p->ioprio;
	return io;
}

static void r_print(const struct io *io)
{
	printf("%llu", (unsigned long long)h_now);
	for (unsigned n = 0; h_part_id(io, n) >= 0; n++)
		printf("%c%d", n == 0 ? ' ' : '+', h_part_id(io, n));
	printf(" %c f%llu @%llu +%llu s%d p%d\n",
	       io->rq.dir == ELV_READ ? 'R' : 'W',
	       (unsigned long long)io->rq.file,
	       (unsigned long long)io->rq.offset,
	       (unsigned long long)io->rq.bytes, io->rq.sync, io->rq.pid);
}

/* Complete what is due by now. */
static void r_complete_due(struct queue *q)
{
	for (unsigned i = 0; i < r_nr_flight;) {
		if (r_flight[i].done_ns <= h_now) {
			h_complete(q, r_flight[i].io);
			r_flight[i] = r_flight[--r_nr_flight];
		} else {
			i++;
		}
	}
}

/* Dispatch while there is room in flight; true if anything came out. */
static bool r_dispatch(struct queue *q)
{
	bool any = false;
	struct io *io;

	/* A wake-up that is due: the timer thread's queue_kick. */
	if (h_wakeup_ns != 0 && h_wakeup_ns <= h_now) {
		h_wakeup_ns = 0;
		queue_kick(q);
	}

	while (r_nr_flight < R_MAX_FLIGHT && (io = queue_try_next(q)) != NULL) {
		r_print(io);
		r_flight[r_nr_flight].io = io;
		r_flight[r_nr_flight].done_ns = h_now + H_MS / 10 +
			(io->rq.nr_sectors << 10) + r_below(2 * H_MS);
		r_nr_flight++;
		any = true;
	}
	return any;
}

/* The earliest future event: a completion or an asked-for wake-up. */
static uint64_t r_next_event(void)
{
	uint64_t t = UINT64_MAX;

	for (unsigned i = 0; i < r_nr_flight; i++)
		if (r_flight[i].done_ns < t)
			t = r_flight[i].done_ns;
	if (h_wakeup_ns != 0 && h_wakeup_ns < t)
		t = h_wakeup_ns;
	return t;
}

int main(int argc, char **argv)
{
	const struct elevator_type *type;
	struct queue *q;
	struct stats st;
	int nr, id = 1;
	uint64_t t;

	if (argc < 3) {
		fprintf(stderr, "usage: replay SCHEDULER SEED [NR_IOS]\n");
		return 2;
	}
	r_state = strtoull(argv[2], NULL, 0) * 2 + 1;
	nr = argc > 3 ? atoi(argv[3]) : 2000;
	if (nr < 1 || nr >= H_MAX_IDS)
		nr = 2000;
	elv_register(elv_noop(), "built-in");
	type = strcmp(argv[1], "noop") == 0 ? elv_noop() :
		h_load(argv[1]);
	for (unsigned i = 0; i < R_PIDS; i++) {
		static const int classes[] = { ELV_IOPRIO_CLASS_BE,
			ELV_IOPRIO_CLASS_BE, ELV_IOPRIO_CLASS_BE,
			ELV_IOPRIO_CLASS_RT, ELV_IOPRIO_CLASS_IDLE,
			ELV_IOPRIO_CLASS_BE };

		r_procs[i].file = i % R_FILES;
		r_procs[i].next = 4096ULL * r_below(1000);
		r_procs[i].ioprio = IOSCHED_IOPRIO(classes[i],
			classes[i] == ELV_IOPRIO_CLASS_IDLE ? 0 : r_below(8));
	}
	h_now = H_MS;
	q = h_queue(type, 4096);
	while (id <= nr) {
		for (unsigned k = 1 + r_below(3); k > 0 && id <= nr; k--)
			queue_submit(q, r_new_io(id++));
		h_now += r_below(H_MS);
		r_complete_due(q);
		r_dispatch(q);
	}
	/* Drain: move the clock to each next event until nothing is left. */
	for (;;) {
		r_complete_due(q);
		if (r_dispatch(q))
			continue;
		queue_get_stats(q, &st);
		if (st.dir[ELV_READ].queued + st.dir[ELV_WRITE].queued == 0 &&
		    r_nr_flight == 0)
			break;
		t = r_next_event();
		if (t == UINT64_MAX) {
			fprintf(stderr, "replay: stuck with requests queued\n");
			return 1;
		}
		h_now = t;
	}
	queue_get_stats(q, &st);
	printf("merges R%llu W%llu\n",
	       (unsigned long long)st.dir[ELV_READ].merges,
	       (unsigned long long)st.dir[ELV_WRITE].merges);
	queue_free(q);
	return 0;
}
