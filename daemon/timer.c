/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The libevent loop thread that serves scheduler wake-ups.
 *
 * A scheduler that idles (anticipation, time slices) or waits for a FIFO
 * expiry asks for a wake-up; the queue arms our one timer for the earliest
 * time asked and we call back into the queue when it fires.  The loop runs
 * in a thread of its own so that no FUSE or dispatch thread ever sleeps on
 * behalf of a scheduler; nothing on it may block (a signal's work that
 * might runs in a thread of its own, timer_on_signal).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "daemon.h"

/*
 * A signal turned into work off the loop, then a call on the loop thread
 * (timer_on_signal).  running and again belong to the loop thread (and to
 * timer_stop once the loop has ended).
 */
struct timer_signal {
	SLIST_ENTRY(timer_signal) link;	/* timer.signals */
	struct event *ev;
	struct event *done_ev;	/* the worker activates it when done */
	timer_fn work, done;
	void *arg;
	pthread_t thread;	/* the worker, while running */
	bool running;
	bool again;		/* the signal came while running */
};

/* A call made by timer_stop (timer_on_stop). */
struct timer_stop_fn {
	SLIST_ENTRY(timer_stop_fn) link;	/* timer.stops */
	timer_fn fn;
	void *arg;
};

struct timer {
	struct event_base *base;
	struct event *ev;
	pthread_t thread;
	timer_fn fn;
	void *arg;
	/* Set up before use, then fixed. */
	SLIST_HEAD(, timer_signal) signals;
	struct event *deferred_ev;	/* timer_set_deferred; set once */
	timer_fn deferred_fn;
	void *deferred_arg;
	SLIST_HEAD(, timer_stop_fn) stops;	/* likewise; the last first */
};

static void timer_fire(evutil_socket_t fd, short what, void *arg)
{
	struct timer *t = arg;

	t->fn(t->arg);
}

static void *timer_loop(void *arg)
{
	struct timer *t = arg;

	event_base_loop(t->base, EVLOOP_NO_EXIT_ON_EMPTY);
	return NULL;
}

struct timer *timer_start(timer_fn fn, void *arg)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct timer *t;
	int err;

	/* Other threads arm the timer: libevent must lock its base. */
	pthread_once(&once, (void (*)(void))evthread_use_pthreads);
	t = calloc(1, sizeof *t);
	if (t == NULL)
		return NULL;
	t->fn = fn;
	t->arg = arg;
	t->base = event_base_new();
	if (t->base == NULL)
		goto fail;
	t->ev = evtimer_new(t->base, timer_fire, t);
	if (t->ev == NULL)
		goto fail_base;
	err = pthread_create(&t->thread, NULL, timer_loop, t);
	if (err != 0) {
		log_err("cannot start the timer thread: %s", strerror(err));
		goto fail_ev;
	}
	pthread_setname_np(t->thread, "iosched-timer");
	return t;

fail_ev:
	event_free(t->ev);
fail_base:
	event_base_free(t->base);
fail:
	free(t);
	return NULL;
}

/* Fire at at_ns on clock_now_ns()'s clock; replaces an earlier arming. */
void timer_arm(struct timer *t, uint64_t at_ns)
{
	uint64_t now = clock_now_ns();
	uint64_t delta = at_ns > now ? at_ns - now : 0;
	struct timeval tv = {
		.tv_sec = (time_t)(delta / 1000000000u),
		.tv_usec = (suseconds_t)(delta % 1000000000u / 1000u),
	};

	evtimer_add(t->ev, &tv);
}

static void timer_deferred_fire(evutil_socket_t fd, short what, void *arg)
{
	struct timer *t = arg;

	t->deferred_fn(t->deferred_arg);
}

int timer_set_deferred(struct timer *t, timer_fn fn, void *arg)
{
	t->deferred_fn = fn;
	t->deferred_arg = arg;
	t->deferred_ev = evtimer_new(t->base, timer_deferred_fire, t);
	return t->deferred_ev == NULL ? -ENOMEM : 0;
}

void timer_defer(struct timer *t, unsigned ms)
{
	struct timeval tv = {
		.tv_sec = (time_t)(ms / 1000),
		.tv_usec = (suseconds_t)(ms % 1000 * 1000),
	};

	evtimer_add(t->deferred_ev, &tv);
}

static void *timer_signal_work(void *arg)
{
	struct timer_signal *s = arg;

	s->work(s->arg);
	/* Thread-safe: evthread_use_pthreads; it wakes the loop. */
	event_active(s->done_ev, 0, 0);
	return NULL;
}

static void timer_signal_run(struct timer_signal *s)
{
	int err;

	err = pthread_create(&s->thread, NULL, timer_signal_work, s);
	if (err != 0) {
		log_err("cannot start a thread for signal %s: %s",
			strsignal(event_get_signal(s->ev)), strerror(err));
		return;
	}
	pthread_setname_np(s->thread, "iosched-signal");
	s->running = true;
}

static void timer_signal_fire(evutil_socket_t signo, short what, void *arg)
{
	struct timer_signal *s = arg;

	/* Signals do not queue either: one more run covers them all. */
	if (s->running)
		s->again = true;
	else
		timer_signal_run(s);
}

static void timer_signal_done(evutil_socket_t fd, short what, void *arg)
{
	struct timer_signal *s = arg;

	pthread_join(s->thread, NULL);
	s->running = false;
	s->done(s->arg);
	if (s->again) {
		s->again = false;
		timer_signal_run(s);
	}
}

/*
 * Whenever signo arrives, run work(arg) in a thread of its own and then
 * done(arg) on the loop thread.  The work may block (it reads files: a
 * FIFO, a hung network file system) without stalling the wake-ups and
 * the metrics served here; done applies its result where the loop's
 * state lives.  One run at a time, so work and done never overlap.
 * libevent's handler only writes to a socket, so both run as ordinary
 * functions, free to take locks and allocate.  It replaces the signal's
 * previous handler until timer_stop, which waits for a run under way but
 * does not call its done.
 */
int timer_on_signal(struct timer *t, int signo, timer_fn work, timer_fn done,
		    void *arg)
{
	struct timer_signal *s = calloc(1, sizeof *s);

	if (s == NULL)
		return -ENOMEM;
	s->work = work;
	s->done = done;
	s->arg = arg;
	s->done_ev = event_new(t->base, -1, 0, timer_signal_done, s);
	s->ev = evsignal_new(t->base, signo, timer_signal_fire, s);
	if (s->ev == NULL || s->done_ev == NULL ||
	    evsignal_add(s->ev, NULL) != 0) {
		if (s->ev != NULL)
			event_free(s->ev);
		if (s->done_ev != NULL)
			event_free(s->done_ev);
		free(s);
		return -EINVAL;
	}
	SLIST_INSERT_HEAD(&t->signals, s, link);
	return 0;
}

struct event_base *timer_base(struct timer *t)
{
	return t->base;
}

/*
 * Call fn(arg) from timer_stop, once the loop has ended and before its
 * base is freed: what lives on the loop (the metrics server, the process
 * watch) goes then, the last registered first.  0 or -ENOMEM.
 */
int timer_on_stop(struct timer *t, timer_fn fn, void *arg)
{
	struct timer_stop_fn *s = malloc(sizeof *s);

	if (s == NULL)
		return -ENOMEM;
	s->fn = fn;
	s->arg = arg;
	SLIST_INSERT_HEAD(&t->stops, s, link);
	return 0;
}

void timer_stop(struct timer *t)
{
	struct timer_signal *s;
	struct timer_stop_fn *f;

	if (t == NULL)
		return;
	event_base_loopbreak(t->base);
	pthread_join(t->thread, NULL);
	while ((f = SLIST_FIRST(&t->stops)) != NULL) {
		SLIST_REMOVE_HEAD(&t->stops, link);
		f->fn(f->arg);
		free(f);
	}
	/* Freeing the event gives the signal its old handler back. */
	while ((s = SLIST_FIRST(&t->signals)) != NULL) {
		SLIST_REMOVE_HEAD(&t->signals, link);
		if (s->running)
			pthread_join(s->thread, NULL);
		event_free(s->ev);
		event_free(s->done_ev);
		free(s);
	}
	if (t->deferred_ev != NULL)
		event_free(t->deferred_ev);
	event_free(t->ev);
	event_base_free(t->base);
	free(t);
}
