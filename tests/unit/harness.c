/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The unit-test harness: see harness.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

uint64_t h_now;
unsigned h_wakeups;
uint64_t h_wakeup_ns;
int h_failures;
uint32_t (*h_weight)(uint64_t cgroup);

/* A part with the test's id attached. */
struct h_part {
	struct io_part part;
	int id;
};

static unsigned h_done[H_MAX_IDS];

static uint64_t h_clock(void *arg)
{
	return __atomic_load_n(&h_now, __ATOMIC_RELAXED);
}

static void h_wakeup(void *arg, uint64_t at_ns)
{
	h_wakeups++;
	h_wakeup_ns = at_ns;
}

static uint32_t h_cgroup_weight(void *arg, uint64_t cgroup)
{
	return h_weight(cgroup);
}

struct queue *h_queue(const struct elevator_type *type, unsigned nr_requests)
{
	struct queue_params p = {
		.nr_requests = nr_requests,
		.clock = h_clock,
		.wakeup_at = h_wakeup,
		.cgroup_weight = h_weight != NULL ? h_cgroup_weight : NULL,
	};
	struct queue *q;

	/* Switch messages are info: keep the output to what matters. */
	log_set_level(LOG_WARNING);
	q = queue_new(&p, type);
	if (q == NULL) {
		fprintf(stderr, "cannot make a queue with %s\n", type->name);
		exit(1);
	}
	return q;
}

struct io *h_io(int id, enum elv_dir dir, uint64_t file, uint64_t offset,
		uint64_t bytes, uint64_t sector)
{
	struct io *io = malloc(sizeof *io);
	struct h_part *hp = calloc(1, sizeof *hp);

	if (io == NULL || hp == NULL || id < 0 || id >= H_MAX_IDS) {
		fprintf(stderr, "h_io: out of memory or bad id %d\n", id);
		exit(1);
	}
	io_init(io, &hp->part, dir, file, offset, bytes);
	hp->id = id;
	hp->part.result = -EINPROGRESS;
	io->rq.sync = dir == ELV_READ;
	io->rq.sector = sector;
	io->rq.pid = 1000 + id;
	io->rq.ioprio = IOSCHED_IOPRIO(ELV_IOPRIO_CLASS_BE, 4);
	return io;
}

void h_rd(struct queue *q, int id, uint64_t sector)
{
	queue_submit(q, h_io(id, ELV_READ, 100 + (uint64_t)id, 0, 4096,
			     sector));
}

void h_wr(struct queue *q, int id, uint64_t sector)
{
	queue_submit(q, h_io(id, ELV_WRITE, 100 + (uint64_t)id, 0, 4096,
			     sector));
}

void h_fire(struct queue *q)
{
	h_now = h_wakeup_ns;
	queue_kick(q);
}

int h_part_id(const struct io *io, unsigned n)
{
	const struct io_part *p = io->parts;

	while (p != NULL && n-- > 0)
		p = p->next;
	if (p == NULL)
		return -1;
	return elv_container_of(p, struct h_part, part)->id;
}

unsigned h_completions(int id)
{
	return __atomic_load_n(&h_done[id], __ATOMIC_RELAXED);
}

void h_check_done(int n, const char *file, int line)
{
	unsigned want;
	int id;

	for (id = 0; id < H_MAX_IDS; id++) {
		want = id >= 1 && id <= n ? 1 : 0;
		if (h_completions(id) != want) {
			fprintf(stderr, "%s:%d: io %d completed %u times, "
				"expected %u\n", file, line, id,
				h_completions(id), want);
			h_failures++;
		}
		h_done[id] = 0;
	}
}

unsigned h_complete(struct queue *q, struct io *io)
{
	struct io_part *p, *next;
	unsigned n = 0;

	/* Count before queue_done: a drain may end the moment it returns. */
	for (p = io->parts; p != NULL; p = p->next) {
		p->result = (ssize_t)p->len;
		__atomic_add_fetch(&h_done[elv_container_of(p, struct h_part,
				   part)->id], 1, __ATOMIC_RELAXED);
	}
	queue_done(q, io);
	for (p = io->parts; p != NULL; p = next) {
		next = p->next;
		free(elv_container_of(p, struct h_part, part));
		n++;
	}
	free(io);
	return n;
}

int h_next_id(struct queue *q)
{
	struct io *io = queue_try_next(q);
	int id;

	if (io == NULL)
		return -1;
	id = h_part_id(io, 0);
	h_complete(q, io);
	return id;
}

const char *h_order(struct queue *q, unsigned max)
{
	static char buf[4096];
	size_t len = 0;
	unsigned n, i;
	struct io *io;

	buf[0] = '\0';
	for (n = 0; max == 0 || n < max; n++) {
		io = queue_try_next(q);
		if (io == NULL)
			break;
		for (i = 0; i < io->nr_parts && len < sizeof buf - 16; i++)
			len += (size_t)snprintf(buf + len, sizeof buf - len,
						"%s%d", i > 0 ? "+" :
						len > 0 ? " " : "",
						h_part_id(io, i));
		h_complete(q, io);
	}
	return buf;
}

const struct elevator_type *h_load(const char *name)
{
	const char *dir = getenv("MODULE_DIR"), *top = getenv("top_builddir");
	const struct elevator_type *type;
	char buf[4096];
	int err;

	if (dir == NULL || *dir == '\0') {
		snprintf(buf, sizeof buf, "%s/schedulers/.libs",
			 top != NULL ? top : ".");
		dir = buf;
	}
	module_set_dir(dir);
	err = module_load(name);
	if (err != 0 && err != -EEXIST) {
		fprintf(stderr, "cannot load %s from %s: %s\n", name, dir,
			strerror(-err));
		exit(1);
	}
	type = elv_find(name);
	if (type == NULL) {
		fprintf(stderr, "%s did not register\n", name);
		exit(1);
	}
	return type;
}

static void h_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

struct h_submitter {
	pthread_t thread;
	struct queue *q;
	struct io *io;
	bool done;		/* atomic */
};

static void *h_submitter_main(void *arg)
{
	struct h_submitter *s = arg;

	queue_submit(s->q, s->io);
	__atomic_store_n(&s->done, true, __ATOMIC_RELEASE);
	return NULL;
}

struct h_submitter *h_submit_start(struct queue *q, struct io *io)
{
	struct h_submitter *s = calloc(1, sizeof *s);

	if (s == NULL) {
		fprintf(stderr, "h_submit_start: out of memory\n");
		exit(1);
	}
	s->q = q;
	s->io = io;
	if (pthread_create(&s->thread, NULL, h_submitter_main, s) != 0) {
		fprintf(stderr, "h_submit_start: cannot start a thread\n");
		exit(1);
	}
	return s;
}

bool h_submitted(struct h_submitter *s, unsigned ms)
{
	for (unsigned i = 0; i < ms; i++) {
		if (__atomic_load_n(&s->done, __ATOMIC_ACQUIRE))
			return true;
		h_sleep_ms(1);
	}
	return __atomic_load_n(&s->done, __ATOMIC_ACQUIRE);
}

void h_submit_join(struct h_submitter *s)
{
	pthread_join(s->thread, NULL);
	free(s);
}

/* The helper thread of h_switch_held. */
struct h_switcher {
	struct queue *q;
	struct io **held;
	unsigned nr_held;
	unsigned serve_first;
	unsigned served_first;	/* served while the held were in flight */
	bool stop;		/* atomic */
};

/* Serves q, completing at once, until told to stop. */
static void *h_switcher_main(void *arg)
{
	struct h_switcher *s = arg;
	struct io *io;
	unsigned i, tries;

	h_sleep_ms(50);
	for (tries = 0; tries < 5000 && s->served_first < s->serve_first;
	     tries++) {
		io = queue_try_next(s->q);
		if (io != NULL) {
			h_complete(s->q, io);
			s->served_first++;
		} else {
			h_sleep_ms(1);
		}
	}
	for (i = 0; i < s->nr_held; i++)
		if (s->held[i] != NULL)
			h_complete(s->q, s->held[i]);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		io = queue_try_next(s->q);
		if (io != NULL)
			h_complete(s->q, io);
		else
			h_sleep_ms(1);
	}
	return NULL;
}

unsigned h_switch_held(struct queue *q, const struct elevator_type *type,
		       struct io **held, unsigned nr_held,
		       unsigned serve_first)
{
	struct h_switcher s = {
		.q = q,
		.held = held,
		.nr_held = nr_held,
		.serve_first = serve_first,
	};
	struct stats st;
	pthread_t t;

	if (pthread_create(&t, NULL, h_switcher_main, &s) != 0) {
		fprintf(stderr, "h_switch_held: pthread_create failed\n");
		exit(1);
	}
	CHECK_EQ(elv_switch(q, type), 0);
	CHECK(queue_elevator_type(q) == type);
	/* The drain dispatched everything and waited for its completion. */
	queue_get_stats(q, &st);
	CHECK_EQ(st.dir[ELV_READ].queued + st.dir[ELV_WRITE].queued, 0);
	CHECK_EQ(st.dir[ELV_READ].in_flight + st.dir[ELV_WRITE].in_flight, 0);
	__atomic_store_n(&s.stop, true, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	return s.served_first;
}

struct h_tunable_arg {
	const char *name;
	int64_t value;
};

static int h_set_tunable_fn(struct elevator_queue *eq, void *arg)
{
	struct h_tunable_arg *a = arg;
	const struct elv_tunable *t;

	for (t = eq->type->tunables; t != NULL && t->name != NULL; t++) {
		if (strcmp(t->name, a->name) != 0)
			continue;
		/* As the host does: through store, side effects and all. */
		if (t->store != NULL)
			return t->store(eq, a->value);
		*(int64_t *)(void *)((char *)eq->elevator_data +
				     t->offset) = a->value;
		return 0;
	}
	return -ENOENT;
}

void h_set_tunable(struct queue *q, const char *name, int64_t value)
{
	struct h_tunable_arg a = { name, value };

	if (queue_with_elevator(q, h_set_tunable_fn, &a) != 0) {
		fprintf(stderr, "no tunable %s\n", name);
		exit(1);
	}
}

uint64_t h_counter(struct queue *q, const char *name)
{
	struct stats st;
	unsigned i;

	queue_get_stats(q, &st);
	for (i = 0; i < st.sched.n; i++)
		if (strcmp(st.sched.name[i], name) == 0)
			return st.sched.value[i];
	fprintf(stderr, "no counter %s in %s\n", name, st.sched.scheduler);
	h_failures++;
	return UINT64_MAX;
}

int h_exit(const char *test)
{
	if (h_failures != 0) {
		fprintf(stderr, "%s: %d check(s) failed\n", test, h_failures);
		return 1;
	}
	printf("%s: all checks passed\n", test);
	return 0;
}
