/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The Prometheus endpoint (-o metrics=ADDRESS:PORT): /metrics in the text
 * exposition format, served by libevent's evhttp on the timer thread's
 * event loop.
 *
 * The socket is bound before the filesystem is mounted, so that a bad
 * address or a port in use fails the mount with a clear message instead
 * of leaving a mount without its metrics; the daemon keeps the socket
 * across fuse_daemonize and hands it to evhttp once the loop runs.  A
 * scrape copies the counters under the queue lock (queue_get_stats) and
 * formats them without it.
 */
#include <errno.h>
#include <netdb.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "daemon.h"

#define METRICS_TIMEOUT_S 10		/* per connection, for reading or writing */
#define METRICS_HEADERS_MAX 8192	/* bytes of request headers */
#define METRICS_BODY_MAX 1024		/* a GET has none */

struct metrics {
	struct evhttp *http;	/* the timer thread's, after metrics_start */
	struct queue *q;
	struct evbuffer *info;	/* fuse_iosched_mount_info's sample */
};

static const char *const metrics_dirs[] = { "read", "write" };

int metrics_listen(const char *addr, char *err, size_t size)
{
	char host[METRICS_ADDR_HOST_MAX], port[6];
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	}, *res, *ai;
	int fd = -1, one = 1, ret, saved = 0;

	if (!metrics_addr_split(addr, host, port)) {
		snprintf(err, size, "metrics=%s: not HOST:PORT, [HOST]:PORT "
			 "or :PORT with a port from 1 to 65535", addr);
		return -1;
	}
	/* No host: the loopback only, never every interface. */
	ret = getaddrinfo(host[0] != '\0' ? host : "127.0.0.1", port, &hints,
			  &res);
	if (ret != 0) {
		snprintf(err, size, "metrics=%s: %s", addr, gai_strerror(ret));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
			    SOCK_NONBLOCK, ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, 16) == 0)
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(err, size, "metrics=%s: cannot listen: %s", addr,
			 strerror(saved));
	return fd;
}

/* ------------------------------------------------------------------ */
/* The exposition.                                                     */

static void metrics_head(struct evbuffer *b, const char *name,
			 const char *type, const char *help)
{
	evbuffer_add_printf(b, "# HELP fuse_iosched_%s %s\n"
			    "# TYPE fuse_iosched_%s %s\n",
			    name, help, name, type);
}

/* The counters and gauges per direction: fields of struct stats_dir. */
static const struct metrics_dir_field {
	const char *name, *type, *help;
	size_t offset;
} metrics_dir_fields[] = {
#define METRICS_DIR_FIELD(f) offsetof(struct stats_dir, f)
	{ "requests_total", "counter", "FUSE read or write requests received.",
	  METRICS_DIR_FIELD(requests) },
	{ "merges_total", "counter", "Requests merged into a queued I/O.",
	  METRICS_DIR_FIELD(merges) },
	{ "dispatched_total", "counter",
	  "I/O operations performed, after merging.",
	  METRICS_DIR_FIELD(dispatched) },
	{ "completed_total", "counter", "FUSE requests answered.",
	  METRICS_DIR_FIELD(completed) },
	{ "sectors_total", "counter", "512-byte sectors completed.",
	  METRICS_DIR_FIELD(sectors) },
	{ "errors_total", "counter", "FUSE requests answered with an error.",
	  METRICS_DIR_FIELD(errors) },
	{ "queue_depth", "gauge", "I/Os waiting in the scheduler now.",
	  METRICS_DIR_FIELD(queued) },
	{ "in_flight", "gauge", "I/Os being performed now.",
	  METRICS_DIR_FIELD(in_flight) },
#undef METRICS_DIR_FIELD
};

static void metrics_per_dir(struct evbuffer *b, const struct stats *st,
			    const struct metrics_dir_field *f)
{
	unsigned d;

	metrics_head(b, f->name, f->type, f->help);
	for (d = 0; d < 2; d++)
		evbuffer_add_printf(b, "fuse_iosched_%s{direction=\"%s\"} "
				    "%llu\n", f->name, metrics_dirs[d],
				    (unsigned long long)*(const uint64_t *)
				    ((const char *)&st->dir[d] + f->offset));
}

static void metrics_hist(struct evbuffer *b, const char *name,
			 const char *dir, enum stats_class c,
			 const struct stats_hist *h)
{
	uint64_t cum = 0;
	unsigned i;

	for (i = 0; i < STATS_BUCKETS - 1; i++) {
		cum += h->bucket[i];
		evbuffer_add_printf(b, "fuse_iosched_%s_bucket{direction=\"%s\","
				    "class=\"%s\",le=\"%.6f\"} %llu\n", name,
				    dir, stats_class_names[c],
				    (double)stats_bucket_us(i) / 1e6,
				    (unsigned long long)cum);
	}
	evbuffer_add_printf(b, "fuse_iosched_%s_bucket{direction=\"%s\","
			    "class=\"%s\",le=\"+Inf\"} %llu\n"
			    "fuse_iosched_%s_sum{direction=\"%s\",class=\"%s\"} "
			    "%.9f\n"
			    "fuse_iosched_%s_count{direction=\"%s\","
			    "class=\"%s\"} %llu\n",
			    name, dir, stats_class_names[c],
			    (unsigned long long)h->count,
			    name, dir, stats_class_names[c],
			    (double)h->sum_ns / 1e9,
			    name, dir, stats_class_names[c],
			    (unsigned long long)h->count);
}

static void metrics_hists(struct evbuffer *b, const struct stats *st,
			  bool service)
{
	const char *name = service ? "service_seconds" : "wait_seconds";
	unsigned d, c;

	metrics_head(b, name, "histogram", service ?
		     "Time from dispatch to completion of an I/O." :
		     "Time an I/O waited in the queue, from arrival to "
		     "dispatch.");
	for (d = 0; d < 2; d++)
		for (c = 0; c < STATS_CLASSES; c++)
			metrics_hist(b, name, metrics_dirs[d], c, service ?
				     &st->dir[d].service[c] :
				     &st->dir[d].wait[c]);
}

/* The active scheduler's own counters, one family with a label each. */
static void metrics_counters(struct evbuffer *b, const struct stats_counters *c)
{
	unsigned i;

	if (c->n == 0)
		return;
	metrics_head(b, "scheduler_events_total", "counter",
		     "The active scheduler's own counters, since it became "
		     "active (see SCHEDULERS in fuse-iosched(8)).");
	for (i = 0; i < c->n; i++)
		evbuffer_add_printf(b, "fuse_iosched_scheduler_events_total"
				    "{scheduler=\"%s\",counter=\"%s\"} %llu\n",
				    c->scheduler, c->name[i],
				    (unsigned long long)c->value[i]);
}

/* The length of the valid UTF-8 sequence at s, or 0. */
static size_t metrics_utf8_len(const unsigned char *s)
{
	uint32_t cp, min;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, cp = s[0] & 0x1f, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, cp = s[0] & 0x0f, min = 0x800;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, cp = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)	/* the NUL too */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * A label value as the text format wants it: backslash, double quote and
 * newline escaped, and valid UTF-8, so a byte of a path that is not
 * becomes U+FFFD (a scraper refuses the whole page otherwise).
 */
static void metrics_label(struct evbuffer *b, const char *value)
{
	const unsigned char *s = (const unsigned char *)value;

	while (*s != '\0') {
		size_t n = metrics_utf8_len(s);

		if (*s == '\\' || *s == '"')
			evbuffer_add_printf(b, "\\%c", *s);
		else if (*s == '\n')
			evbuffer_add(b, "\\n", 2);
		else if (n == 0)
			evbuffer_add(b, "\xef\xbf\xbd", 3);
		else
			evbuffer_add(b, s, n);
		s += n > 0 ? n : 1;
	}
}

static void metrics_format(struct evbuffer *b, const struct metrics *m)
{
	struct queue *q = m->q;
	struct stats st;
	size_t i;

	queue_get_stats(q, &st);
	for (i = 0; i < ARRAY_SIZE(metrics_dir_fields); i++)
		metrics_per_dir(b, &st, &metrics_dir_fields[i]);
	metrics_hists(b, &st, false);
	metrics_hists(b, &st, true);
	metrics_head(b, "io_time_seconds_total", "counter",
		     "Time with at least one I/O queued or in flight.");
	evbuffer_add_printf(b, "fuse_iosched_io_time_seconds_total %.9f\n",
			    (double)st.busy_ns / 1e9);
	metrics_head(b, "io_time_weighted_seconds_total", "counter",
		     "Integral of the number of I/Os queued or in flight "
		     "over time.");
	evbuffer_add_printf(b, "fuse_iosched_io_time_weighted_seconds_total "
			    "%.9f\n", (double)st.depth_ns / 1e9);
	metrics_head(b, "nr_requests", "gauge", "The queue depth limit.");
	evbuffer_add_printf(b, "fuse_iosched_nr_requests %u\n",
			    queue_nr_requests(q));
	metrics_head(b, "scheduler_switches_total", "counter",
		     "Scheduler switches since mounting.");
	evbuffer_add_printf(b, "fuse_iosched_scheduler_switches_total %llu\n",
			    (unsigned long long)st.switches);
	metrics_counters(b, &st.sched);
	metrics_head(b, "scheduler_info", "gauge",
		     "The active scheduler, in the label scheduler.");
	evbuffer_add_printf(b, "fuse_iosched_scheduler_info{scheduler=\"%s\"} "
			    "1\n", queue_elevator_type(q)->name);
	metrics_head(b, "mount_info", "gauge",
		     "Always 1: the mount point and backing directory, in the "
		     "labels mountpoint and backing.");
	evbuffer_add_buffer_reference(b, m->info);
}

/* On the timer thread, for GET /metrics. */
static void metrics_serve(struct evhttp_request *req, void *arg)
{
	struct metrics *m = arg;
	struct evbuffer *b;

	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET &&
	    evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
		evhttp_send_error(req, 405, "Method Not Allowed");
		return;
	}
	b = evbuffer_new();
	if (b == NULL) {
		evhttp_send_error(req, 500, "Out of memory");
		return;
	}
	metrics_format(b, m);
	evhttp_add_header(evhttp_request_get_output_headers(req),
			  "Content-Type", "text/plain; version=0.0.4; "
			  "charset=utf-8");
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

static void metrics_free(void *arg)
{
	struct metrics *m = arg;

	evhttp_free(m->http);
	evbuffer_free(m->info);
	free(m);
}

int metrics_start(struct timer *t, int fd, struct queue *q,
		  const char *mountpoint, const char *backing)
{
	struct metrics *m = calloc(1, sizeof *m);

	if (m == NULL)
		goto fail;
	m->q = q;
	/* The paths do not change: their sample is made once. */
	m->info = evbuffer_new();
	if (m->info == NULL)
		goto fail;
	evbuffer_add_printf(m->info, "fuse_iosched_mount_info{mountpoint=\"");
	metrics_label(m->info, mountpoint);
	evbuffer_add_printf(m->info, "\",backing=\"");
	metrics_label(m->info, backing);
	evbuffer_add_printf(m->info, "\"} 1\n");
	m->http = evhttp_new(timer_base(t));
	if (m->http == NULL)
		goto fail;
	evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	/* A scrape is one small request: a client that dawdles or sends
	 * more holds a connection and memory on the loop for nothing. */
	evhttp_set_timeout(m->http, METRICS_TIMEOUT_S);
	evhttp_set_max_headers_size(m->http, METRICS_HEADERS_MAX);
	evhttp_set_max_body_size(m->http, METRICS_BODY_MAX);
	if (evhttp_set_cb(m->http, "/metrics", metrics_serve, m) != 0 ||
	    evhttp_accept_socket_with_handle(m->http, fd) == NULL)
		goto fail_http;
	/* evhttp now owns fd; it is freed with the loop's base. */
	if (timer_on_stop(t, metrics_free, m) != 0) {
		evhttp_free(m->http);	/* and fd with it */
		free(m);
		log_err("metrics: cannot serve: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	return 0;

fail_http:
	evhttp_free(m->http);
fail:
	if (m != NULL && m->info != NULL)
		evbuffer_free(m->info);
	free(m);
	close(fd);
	log_err("metrics: cannot serve: %s", strerror(ENOMEM));
	return -ENOMEM;
}
