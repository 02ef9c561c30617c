/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Scenarios for every scheduler built on schedulers/pidq.c: merging stays
 * within a process's queue, draining (force) empties it at once, and a
 * switch away loses no request; and the simulated device and processes
 * that their tests of fair shares run.
 */
#include <stdlib.h>

#include "pidq_cases.h"

struct pq_sim pq_sim;

struct queue *pq_queue(const struct elevator_type *type)
{
	h_now = 0;
	h_wakeups = 0;
	h_wakeup_ns = 0;
	return h_queue(type, 1024);
}

struct io *pq_io(int id, pid_t pid, int ioprio, enum elv_dir dir,
		 uint64_t sector)
{
	struct io *io = h_io(id, dir, 100000 + (uint64_t)id, 0, 4096, sector);

	io->rq.pid = pid;
	io->rq.ioprio = ioprio;
	return io;
}

void pq_rd(struct queue *q, int id, pid_t pid, int ioprio, uint64_t sector)
{
	queue_submit(q, pq_io(id, pid, ioprio, ELV_READ, sector));
}

void pq_wr(struct queue *q, int id, pid_t pid, int ioprio, uint64_t sector)
{
	queue_submit(q, pq_io(id, pid, ioprio, ELV_WRITE, sector));
}

/* pq_io of file 7 at offset. */
static struct io *pq_io7(int id, pid_t pid, uint64_t offset, uint64_t sector)
{
	struct io *io = pq_io(id, pid, BE(4), ELV_READ, sector);

	io->rq.file = 7;
	io->rq.offset = offset;
	return io;
}

/* Drain q, which must serve a or b (n parts in all), and free it. */
static void pq_drained_as(struct queue *q, const char *a, const char *b,
			  int n)
{
	const char *order;

	queue_stop(q);
	order = h_order(q, 0);
	CHECK(strcmp(order, a) == 0 || strcmp(order, b) == 0);
	CHECK_DONE(n);
	queue_free(q);
}

void pq_test_merge(const struct elevator_type *type, bool fifo_across)
{
	struct queue *q = pq_queue(type);
	struct io *io;

	queue_submit(q, pq_io7(1, 1001, 4096, 208));
	queue_submit(q, pq_io7(2, 1001, 0, 200));
	CHECK_STR(h_order(q, 0), "2+1");
	CHECK_DONE(2);

	/* The same two from different processes stay apart. */
	h_now = 500 * H_MS;
	queue_submit(q, pq_io7(1, 1001, 4096, 208));
	queue_submit(q, pq_io7(2, 1002, 0, 200));
	pq_drained_as(q, "1 2", fifo_across ? "1 2" : "2 1", 2);

	/* allow_merge: no back merge across processes either. */
	q = pq_queue(type);
	queue_submit(q, pq_io7(1, 1001, 0, 200));
	queue_submit(q, pq_io7(2, 1002, 4096, 208));
	pq_drained_as(q, "1 2", "2 1", 2);

	/* Synchronous data never joins an asynchronous request. */
	q = pq_queue(type);
	io = pq_io7(1, 1001, 0, 200);
	io->rq.dir = ELV_WRITE;
	io->rq.sync = false;
	queue_submit(q, io);
	io = pq_io7(2, 0, 4096, 208);	/* the kernel's: the same pool */
	io->rq.dir = ELV_WRITE;
	queue_submit(q, io);
	pq_drained_as(q, "1 2", "2 1", 2);

	/* Nor do two queued requests of different processes, gap filled. */
	q = pq_queue(type);
	h_set_tunable(q, "slice_idle", 0);
	queue_submit(q, pq_io7(1, 1001, 0, 3000));
	queue_submit(q, pq_io7(2, 1002, 8192, 3016));
	queue_submit(q, pq_io7(3, 1001, 4096, 3008));
	pq_drained_as(q, "1+3 2", "2 1+3", 3);

	/* Filling a gap joins three queued requests into one. */
	q = pq_queue(type);
	h_set_tunable(q, "slice_idle", 0);
	pq_rd(q, 4, 1001, BE(4), 0);
	CHECK_STR(h_order(q, 0), "4");
	queue_submit(q, pq_io7(1, 1001, 0, 3000));
	h_now = 10 * H_MS;
	queue_submit(q, pq_io7(2, 1001, 8192, 3016));
	queue_submit(q, pq_io7(3, 1001, 4096, 3008));
	CHECK_STR(h_order(q, 0), "1+3+2");
	CHECK_DONE(4);
	queue_free(q);
}

void pq_test_exit_process(const struct elevator_type *type)
{
	struct queue *q = pq_queue(type);
	struct io *io;
	unsigned w;

	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1002, BE(4), 900000);
	CHECK_STR(h_order(q, 0), "1");
	queue_process_exited(q, 1003);
	CHECK_STR(h_order(q, 0), "");
	queue_process_exited(q, 1001);
	CHECK_STR(h_order(q, 0), "2");
	queue_process_exited(q, 1002);

	/* The timers armed above have fired. */
	h_now = 100 * H_MS;
	queue_kick(q);
	pq_rd(q, 3, 1005, BE(4), 200);
	io = queue_try_next(q);
	CHECK(io != NULL && h_part_id(io, 0) == 3);
	pq_rd(q, 7, 1005, BE(4), 208);
	pq_rd(q, 4, 1006, BE(4), 800000);
	queue_process_exited(q, 1005);
	w = h_wakeups;
	if (io != NULL)
		h_complete(q, io);
	CHECK_STR(h_order(q, 1), "7");
	CHECK_EQ(h_wakeups, w);
	CHECK_STR(h_order(q, 0), "4");
	queue_process_exited(q, 1006);

	h_now = 200 * H_MS;
	queue_kick(q);
	w = h_wakeups;
	pq_rd(q, 5, 1001, BE(4), 300);
	pq_rd(q, 6, 1002, BE(4), 700000);
	CHECK_STR(h_order(q, 0), "5");
	CHECK_STR(h_order(q, 0), "");
	CHECK_EQ(h_wakeups, w + 1);
	h_now = h_wakeup_ns;
	queue_kick(q);
	CHECK_STR(h_order(q, 0), "6");
	CHECK_DONE(7);
	queue_free(q);
}


void pq_test_force(const struct elevator_type *type)
{
	struct queue *q = pq_queue(type);
	struct io *held[20];
	int i;

	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1002, BE(4), 200);
	pq_rd(q, 3, 1003, IDLE, 300);
	CHECK_STR(h_order(q, 0), "1");
	/* Idling for 1001 now; force serves the rest at once. */
	queue_stop(q);
	CHECK_STR(h_order(q, 0), "2 3");
	CHECK_DONE(3);
	queue_free(q);

	/* 20 from one process and 1 from another: all 21 go in flight. */
	q = pq_queue(type);
	for (i = 1; i <= 20; i++)
		pq_rd(q, i, 1001, BE(4), (uint64_t)i * 8);
	pq_rd(q, 21, 1002, BE(4), 900000);
	queue_stop(q);
	for (i = 0; i < 20; i++) {
		held[i] = queue_try_next(q);
		CHECK(held[i] != NULL);
	}
	CHECK_STR(h_order(q, 0), "21");
	for (i = 0; i < 20; i++)
		if (held[i] != NULL)
			h_complete(q, held[i]);
	CHECK_DONE(21);
	queue_free(q);
}

#define HELD 5
#define QUEUED 40

void pq_test_switch(const struct elevator_type *type)
{
	static const int prios[] = { BE(4), BE(0), IDLE, BE(7), RT(5) };
	struct io *held[HELD];
	struct queue *q = pq_queue(type);
	int i;

	/*
	 * An RT reader first, so that HELD requests can be dispatched
	 * before the switch; then readers and writers of every class, some
	 * changing class between requests, and the kernel (pid 0).
	 */
	for (i = 1; i <= 10; i++)
		pq_rd(q, i, 1001, RT(3), (uint64_t)i * 8);
	for (i = 11; i <= QUEUED; i++) {
		if (i % 4 == 0)
			pq_wr(q, i, 1000 + i % 3, prios[i % 5],
			      (uint64_t)i * 1000);
		else
			pq_rd(q, i, i % 7 == 0 ? 0 : 1002 + i % 6,
			      prios[i % 5], (uint64_t)(QUEUED - i) * 1000);
	}
	for (i = 0; i < HELD; i++) {
		held[i] = queue_try_next(q);
		CHECK(held[i] != NULL);
	}
	h_switch_held(q, elv_noop(), held, HELD, 0);
	CHECK_DONE(QUEUED);

	/* And back: the scheduler serves again, pid by pid. */
	CHECK_EQ(elv_switch(q, type), 0);
	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1002, BE(4), 50);
	pq_rd(q, 3, 1001, BE(4), 200);
	CHECK_STR(h_order(q, 0), "1 3");
	queue_stop(q);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(3);
	queue_free(q);
}

/* The order of a backward seek of 40 and a forward one of 60 after 1. */
static const char *pq_back_or_forward(struct queue *q)
{
	h_now += 100 * H_MS;
	/* The head at 1000 after 1. */
	pq_rd(q, 1, 1001, BE(4), 992);
	CHECK_STR(h_order(q, 0), "1");
	pq_rd(q, 2, 1001, BE(4), 960);
	pq_rd(q, 3, 1001, BE(4), 1060);
	return h_order(q, 0);
}

void pq_test_back_seek_penalty(const struct elevator_type *type)
{
	struct queue *q = pq_queue(type);

	CHECK_STR(pq_back_or_forward(q), "3 2");
	CHECK_DONE(3);
	h_set_tunable(q, "back_seek_penalty", 1);
	CHECK_STR(pq_back_or_forward(q), "2 3");
	CHECK_DONE(3);
	queue_free(q);
}

uint64_t pq_fifo_served_ms(struct queue *q, enum elv_dir dir)
{
	uint64_t served_at = 0;
	struct io *io;
	int i;

	queue_submit(q, pq_io(1, 1001, BE(4), dir, 100000));
	CHECK_STR(h_order(q, 0), "1");
	queue_submit(q, pq_io(2, 1001, BE(4), dir, 0));
	for (i = 3; i <= 400; i++)
		queue_submit(q, pq_io(i, 1001, BE(4), dir,
				      100000 + (uint64_t)i * 8));
	while ((io = queue_try_next(q)) != NULL) {
		if (h_part_id(io, 0) == 2)
			served_at = h_now;
		h_now += H_MS;
		h_complete(q, io);
	}
	queue_stop(q);
	while (h_next_id(q) > 0)
		;
	CHECK_DONE(400);
	queue_free(q);
	return served_at / H_MS;
}

/* fifo_served_ms under a fifo expiry of expire_ms for dir. */
static uint64_t pq_fifo_case(const struct elevator_type *type,
			     enum elv_dir dir, int64_t expire_ms)
{
	struct queue *q = pq_queue(type);

	h_set_tunable(q, dir == ELV_READ ? "fifo_expire_sync" :
		      "fifo_expire_async", expire_ms);
	return pq_fifo_served_ms(q, dir);
}

void pq_test_fifo_expiry(const struct elevator_type *type)
{
	uint64_t at;

	at = pq_fifo_case(type, ELV_READ, 50);
	CHECK(at >= 50 && at < 300);
	at = pq_fifo_case(type, ELV_READ, 150);
	CHECK(at >= 150 && at < 350);
	at = pq_fifo_case(type, ELV_WRITE, 100);
	CHECK(at >= 100 && at < 350);
}

void pq_idle_window(struct queue *q)
{
	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1002, BE(4), 900000);
	CHECK_STR(h_order(q, 0), "1");
	CHECK_EQ(h_wakeup_ns, 8 * H_MS);
	h_now = 3 * H_MS;
	pq_rd(q, 3, 1001, BE(4), 108);
	CHECK_STR(h_order(q, 0), "3");
	/* Waiting again until 11 ms; the 8 ms timer finds it still on. */
	h_fire(q);
	CHECK_EQ(h_now, 8 * H_MS);
	CHECK_STR(h_order(q, 0), "");
	CHECK_EQ(h_wakeup_ns, 11 * H_MS);
	h_now = 11 * H_MS - 1;
	CHECK_STR(h_order(q, 0), "");
	/* Timed out: the other process gets the device. */
	h_fire(q);
	CHECK_STR(h_order(q, 0), "2");
	CHECK_DONE(3);
}

const char *pq_no_idle_order(struct queue *q)
{
	const char *order;
	unsigned w;

	h_set_tunable(q, "slice_idle", 0);
	h_now = 500 * H_MS;
	w = h_wakeups;
	pq_rd(q, 1, 1001, BE(4), 100);
	pq_rd(q, 2, 1002, BE(4), 900000);
	order = h_order(q, 0);
	CHECK_EQ(h_wakeups, w);
	CHECK_DONE(2);
	return order;
}

/* ------------------------------------------------------------------ */
/* The simulated device and processes.                                 */

static bool pq_sim_may_issue(const struct pq_proc *p)
{
	return p->outstanding < p->depth &&
		(p->limit == 0 || p->issued < p->limit);
}

static void pq_sim_feed(struct queue *q, struct pq_proc *procs, int n)
{
	struct pq_proc *p;
	struct io *io;
	unsigned size;
	int i;

	for (i = 0; i < n; i++) {
		p = &procs[i];
		size = p->size ? p->size : 8;
		while (pq_sim_may_issue(p) && h_now >= p->next_at) {
			p->sector += p->stride ? p->stride : size;
			p->issued++;
			p->outstanding++;
			pq_sim.pending++;
			pq_sim.ids++;
			io = h_io(pq_sim.ids, p->dir,
				  100000 + (uint64_t)pq_sim.ids, 0,
				  (uint64_t)size << 9, p->sector);
			io->rq.pid = p->pid;
			io->rq.ioprio = p->ioprio;
			io->rq.cgroup = p->cgroup;
			queue_submit(q, io);
		}
	}
}

void pq_sim_start(struct queue *q, struct pq_proc *procs, int n)
{
	int i;

	pq_sim.ids = 0;
	pq_sim.seen = h_wakeups;
	pq_sim.armed = false;
	pq_sim.stalls = 0;
	pq_sim.pending = 0;
	pq_sim.switches = 0;
	pq_sim.last_pid = -1;
	for (i = 0; i < n; i++) {
		procs[i].first_ns = UINT64_MAX;
		procs[i].next_at = procs[i].start_ns;
	}
}

void pq_sim_timer(struct queue *q)
{
	if (h_wakeups != pq_sim.seen) {
		pq_sim.seen = h_wakeups;
		pq_sim.armed = true;
	}
	if (pq_sim.armed && h_now >= h_wakeup_ns) {
		pq_sim.armed = false;
		queue_kick(q);
	}
}

/* Nothing dispatched: move the clock to the next event. */
static void pq_sim_wait(struct pq_proc *procs, int n)
{
	uint64_t next = UINT64_MAX;
	int i;

	if (pq_sim.pending != 0 && !pq_sim.armed)
		pq_sim.stalls++;
	if (pq_sim.armed && h_wakeup_ns > h_now)
		next = h_wakeup_ns;
	for (i = 0; i < n; i++)
		if (pq_sim_may_issue(&procs[i]) && procs[i].next_at > h_now &&
		    procs[i].next_at < next)
			next = procs[i].next_at;
	h_now = next != UINT64_MAX ? next : h_now + H_MS;
}

static void pq_sim_serve(struct queue *q, struct pq_proc *procs, int n,
			 struct io *io)
{
	struct pq_proc *p;
	int i;

	for (p = NULL, i = 0; i < n && p == NULL; i++)
		if (procs[i].pid == io->rq.pid)
			p = &procs[i];
	if (p == NULL) {
		fprintf(stderr, "io of unknown pid %d\n", (int)io->rq.pid);
		exit(1);
	}
	pq_sim.pending--;
	if (pq_sim.last_pid != -1 && io->rq.pid != pq_sim.last_pid)
		pq_sim.switches++;
	p->run = io->rq.pid == pq_sim.last_pid ? p->run + 1 : 1;
	if (p->run > p->max_run)
		p->max_run = p->run;
	pq_sim.last_pid = io->rq.pid;
	if (io->rq.arrival_ns >= p->measure_from &&
	    h_now - io->rq.arrival_ns > p->max_wait_ns)
		p->max_wait_ns = h_now - io->rq.arrival_ns;
	if (io->rq.arrival_ns >= p->measure_from && p->burst != 0 &&
	    p->served % p->burst == 0 &&
	    h_now - io->rq.arrival_ns > p->max_resume_ns)
		p->max_resume_ns = h_now - io->rq.arrival_ns;
	if (p->first_ns == UINT64_MAX)
		p->first_ns = h_now;
	else if (h_now - p->last_ns > p->max_gap_ns)
		p->max_gap_ns = h_now - p->last_ns;
	p->last_ns = h_now;
	p->served++;
	p->sectors += io->rq.nr_sectors;
	h_now += (p->cost_ms ? p->cost_ms : 1) * H_MS;
	h_complete(q, io);
	p->outstanding--;
	p->next_at = h_now + (p->burst != 0 && p->served % p->burst == 0 ?
			      p->pause_ms : p->think_ms) * H_MS;
	if (p->limit != 0 && p->issued == p->limit && p->outstanding == 0)
		p->done_ns = h_now;
}

void pq_sim_run(struct queue *q, struct pq_proc *procs, int n,
		uint64_t until_ns)
{
	struct io *io;

	while (h_now < until_ns) {
		pq_sim_feed(q, procs, n);
		pq_sim_timer(q);
		io = queue_try_next(q);
		if (io == NULL) {
			pq_sim_timer(q);
			pq_sim_wait(procs, n);
			continue;
		}
		pq_sim_serve(q, procs, n, io);
	}
}

void pq_drain_end(struct queue *q, int n)
{
	queue_stop(q);
	while (h_next_id(q) > 0)
		;
	CHECK_DONE(n);
	queue_free(q);
}

void pq_sim_end(struct queue *q)
{
	CHECK_EQ(pq_sim.stalls, 0);
	pq_drain_end(q, pq_sim.ids);
}

bool pq_within(double a, double b, double pct)
{
	double d = a > b ? a - b : b - a, m = a > b ? a : b;

	return m > 0 && d * 100 <= m * pct;
}

