/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The libevent loop thread that serves scheduler wake-ups.
 *
 * A scheduler that idles (anticipation, time slices) or waits for a FIFO
 * expiry asks for a wake-up; the queue arms our one timer for the earliest
 * time asked and we call back into the queue when it fires.  The loop runs
 * in a thread of its own so that no FUSE or dispatch thread ever sleeps on
 * behalf of a scheduler.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "daemon.h"

/* A signal turned into a call on the loop thread (timer_on_signal). */
struct timer_signal {
	struct timer_signal *next;
	struct event *ev;
	timer_fn fn;
	void *arg;
};

/* A call made by timer_stop (timer_on_stop). */
struct timer_stop_fn {
	struct timer_stop_fn *next;
	timer_fn fn;
	void *arg;
};

struct timer {
	struct event_base *base;
	struct event *ev;
	pthread_t thread;
	timer_fn fn;
	void *arg;
	struct timer_signal *signals;	/* set up before use, then fixed */
	struct timer_stop_fn *stops;	/* set up before use, then fixed */
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

static void timer_signal_fire(evutil_socket_t signo, short what, void *arg)
{
	struct timer_signal *s = arg;

	s->fn(s->arg);
}

/*
 * Call fn on the loop thread whenever signo arrives.  libevent's handler
 * only writes to a socket, so fn runs as an ordinary function, free to
 * take locks and allocate, which a signal handler may not.  It replaces
 * the signal's previous handler until timer_stop.
 */
int timer_on_signal(struct timer *t, int signo, timer_fn fn, void *arg)
{
	struct timer_signal *s = calloc(1, sizeof *s);

	if (s == NULL)
		return -ENOMEM;
	s->fn = fn;
	s->arg = arg;
	s->ev = evsignal_new(t->base, signo, timer_signal_fire, s);
	if (s->ev == NULL || evsignal_add(s->ev, NULL) != 0) {
		if (s->ev != NULL)
			event_free(s->ev);
		free(s);
		return -EINVAL;
	}
	s->next = t->signals;
	t->signals = s;
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
	s->next = t->stops;
	t->stops = s;
	return 0;
}

void timer_stop(struct timer *t)
{
	struct timer_signal *s, *next;
	struct timer_stop_fn *f, *fnext;

	if (t == NULL)
		return;
	event_base_loopbreak(t->base);
	pthread_join(t->thread, NULL);
	for (f = t->stops; f != NULL; f = fnext) {
		fnext = f->next;
		f->fn(f->arg);
		free(f);
	}
	/* Freeing the event gives the signal its old handler back. */
	for (s = t->signals; s != NULL; s = next) {
		next = s->next;
		event_free(s->ev);
		free(s);
	}
	event_free(t->ev);
	event_base_free(t->base);
	free(t);
}
