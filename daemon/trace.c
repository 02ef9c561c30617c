/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Request events for readers of .control/trace, the mount's trace_pipe;
 * what a reader sees is in fuse-iosched(8), .control/trace.
 *
 * Invariants:
 * - The queue reports each request's Q, M, F, D and C to trace_rq()
 *   under its lock.  With no reader that is one relaxed load of
 *   trace_nr_readers; with readers, trace_emit stores the raw event once
 *   in the ring they share, under trace_lock: the queue lock holder's
 *   cost does not grow with the readers, and waits for at most one
 *   reader's batch copy.  Text is made outside every lock but the
 *   reader's own.
 * - A read with nothing to return is parked (its fuse_req kept in the
 *   reader) and answered later by the server thread, which runs only
 *   while a reader is open; an interrupt answers it EINTR, the daemon's
 *   stop or the mount's detaching answers it and every later read with
 *   end of file, so that `cat` exits and a lazy unmount can finish.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

#define TRACE_RING 4096		/* events kept for the readers; a power of two */
#define TRACE_READERS_MAX 8	/* readers open at once: EBUSY past it */
#define TRACE_BATCH 64		/* events copied out per hold of trace_lock */
#define TRACE_READ_MAX 1024	/* events taken for one read at most */
#define TRACE_LINE_MAX 384	/* room for the longest line: about 360 */
#define TRACE_CGROUP_MAX 120	/* a group's path, as shown, at most */
#define TRACE_COMM_SLOTS 64	/* the pid -> comm cache; a power of two */
#define TRACE_COMM_TTL_NS 1000000000ULL
#define TRACE_WATCH_NS 200000000ULL	/* mount check with parked reads */
#define TRACE_LOST 'L'		/* a ring entry that counts lost events */

atomic_uint trace_nr_readers;

struct trace_event {
	uint64_t seq;		/* global event number */
	uint64_t time_ns;	/* since the mount */
	uint64_t sector;	/* TRACE_LOST: the number lost */
	uint64_t wait_ns;	/* C only */
	uint64_t service_ns;	/* C only */
	uint64_t cgroup;	/* the group charged (cgroup.c) */
	uint32_t nr_sectors;
	int error;		/* C only: 0, or -errno */
	pid_t pid;
	char action;
	bool write;
	bool sync;		/* RWBS's S */
};

struct trace_reader {
	LIST_ENTRY(trace_reader) link;	/* trace_readers; trace_lock */
	/* Protected by trace_lock. */
	uint64_t tail;		/* the seq of the last event taken */
	fuse_req_t req;		/* a parked read, or NULL (do_trace_park) */
	size_t req_size;
	bool serving;		/* a thread is formatting for it */
	/* Only the thread that set serving touches these. */
	char *text;		/* formatted, not yet read */
	size_t text_size, text_len, text_off;
	bool header_sent;
	char *settings;		/* the mount's at open, or NULL; immutable */
};

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t trace_cv = PTHREAD_COND_INITIALIZER;	/* server */
static pthread_cond_t trace_idle_cv = PTHREAD_COND_INITIALIZER; /* release */
static LIST_HEAD(, trace_reader) trace_readers =	/* trace_lock */
	LIST_HEAD_INITIALIZER(trace_readers);
static unsigned trace_parked;	/* readers with a parked read; trace_lock */
/* Event seq is in trace_ring[seq % TRACE_RING] until TRACE_RING later. */
static struct trace_event trace_ring[TRACE_RING];	/* trace_lock */
static uint64_t trace_seq;	/* the last event's; trace_lock */
static bool trace_ended;	/* stopped or unmounted: EOF; trace_lock */
static bool trace_stopping;	/* the server must exit; trace_lock */
static pthread_t trace_thread;			/* trace_lock */
static bool trace_thread_started;		/* trace_lock */
static uint64_t trace_start_ns;	/* the mount's time 0; set before readers */
/* The header's settings line; set before readers (trace_start). */
static trace_settings_fn trace_settings;
static void *trace_settings_arg;
static char trace_mount_dev[32];	/* "major:minor" in mountinfo, or "" */

/*
 * pid -> comm, filled from /proc when a traced request arrives.  Every
 * request looks here while someone reads the trace, so the look is two
 * relaxed loads and a coarse clock (a tick is plenty against a 1 s TTL);
 * a stale answer costs one more read of /proc, never a wrong name for
 * long.  comm is written and read under trace_comm_lock.
 */
struct trace_comm {
	atomic_int pid;
	atomic_uint_fast64_t stamp_ns;
	char comm[16];		/* trace_comm_lock */
};
static pthread_mutex_t trace_comm_lock = PTHREAD_MUTEX_INITIALIZER; /* leaf */
static struct trace_comm trace_comms[TRACE_COMM_SLOTS];

/* ------------------------------------------------------------------ */
/* Producer side.                                                      */

static void trace_emit(char action, const struct elv_request *rq,
		       uint64_t now_ns, uint64_t wait_ns, uint64_t service_ns,
		       int error)
{
	struct trace_event e = {
		.time_ns = now_ns > trace_start_ns ? now_ns - trace_start_ns : 0,
		.sector = rq->sector,
		.wait_ns = wait_ns,
		.service_ns = service_ns,
		.error = error,
		.nr_sectors = (uint32_t)rq->nr_sectors,
		.pid = rq->pid,
		.cgroup = rq->cgroup,
		.action = action,
		.write = rq->dir == ELV_WRITE,
		/* A write's S is the kernel's REQ_SYNC: sync_write. */
		.sync = rq->dir == ELV_WRITE ? rq->sync_write : rq->sync,
	};

	pthread_mutex_lock(&trace_lock);
	e.seq = ++trace_seq;
	trace_ring[e.seq % TRACE_RING] = e;
	/* The server answers parked reads (do_trace_ready). */
	if (trace_parked > 0)
		pthread_cond_signal(&trace_cv);
	pthread_mutex_unlock(&trace_lock);
}

void trace_rq(void *arg, char action, const struct elv_request *rq,
	      uint64_t now_ns, uint64_t wait_ns, uint64_t service_ns, int error)
{
	if (trace_on())
		trace_emit(action, rq, now_ns, wait_ns, service_ns, error);
}

/* Outside the queue lock: one small read of /proc per new pid. */
void trace_note_pid(pid_t pid)
{
	struct trace_comm *c = &trace_comms[(unsigned)pid %
					    TRACE_COMM_SLOTS];
	uint64_t now = clock_coarse_ns();
	char path[40], comm[16] = "";
	ssize_t n;
	int fd;

	if (pid <= 0)
		return;
	if (atomic_load_explicit(&c->pid, memory_order_relaxed) == pid &&
	    now - atomic_load_explicit(&c->stamp_ns, memory_order_relaxed) <
	    TRACE_COMM_TTL_NS)
		return;

	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, sizeof comm - 1);
	close(fd);
	if (n <= 0)
		return;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';

	pthread_mutex_lock(&trace_comm_lock);
	memcpy(c->comm, comm, sizeof c->comm);
	atomic_store_explicit(&c->pid, pid, memory_order_relaxed);
	atomic_store_explicit(&c->stamp_ns, now, memory_order_relaxed);
	pthread_mutex_unlock(&trace_comm_lock);
}

static void trace_comm_of(pid_t pid, char *buf, size_t size)
{
	struct trace_comm *c = &trace_comms[(unsigned)pid %
					    TRACE_COMM_SLOTS];

	if (pid == 0) {
		snprintf(buf, size, "kernel");
		return;
	}
	pthread_mutex_lock(&trace_comm_lock);
	snprintf(buf, size, "%s",
		 atomic_load_explicit(&c->pid, memory_order_relaxed) == pid ?
		 c->comm : "?");
	pthread_mutex_unlock(&trace_comm_lock);
}

/* ------------------------------------------------------------------ */
/* Formatting: blkparse's default output, with C's wait and service.   */

/*
 * The path of group id as one field: bytes other than printable ASCII,
 * and the backslash, as \xNN (a path may hold blanks); cut after
 * TRACE_CGROUP_MAX bytes with "..."; "?" for a group forgotten since.
 */
static void trace_cgroup_field(uint64_t id, char *buf, size_t size)
{
	char path[CONFIG_GROUP_PATH_MAX];
	size_t n = 0;

	if (cgroup_path(NULL, id, path, sizeof path) < 0) {
		snprintf(buf, size, "?");
		return;
	}
	for (const char *p = path; *p != '\0' && n + 5 < size; p++) {
		unsigned char c = (unsigned char)*p;

		if (n >= TRACE_CGROUP_MAX) {
			n += (size_t)snprintf(buf + n, size - n, "...");
			break;
		}
		if (c > ' ' && c < 0x7f && c != '\\')
			buf[n++] = (char)c;
		else
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
	}
	buf[n] = '\0';
}

static int trace_format_line(const struct trace_event *e, char *buf,
			   size_t size)
{
	char comm[16], rwbs[4], cgroup[TRACE_CGROUP_MAX + 8];
	int n;

	if (e->action == TRACE_LOST)
		return snprintf(buf, size, "lost %" PRIu64 " events\n",
				e->sector);
	snprintf(rwbs, sizeof rwbs, "%c%s", e->write ? 'W' : 'R',
		 e->sync ? "S" : "");
	trace_comm_of(e->pid, comm, sizeof comm);
	n = snprintf(buf, size, "%3d,%-3d %2d %8" PRIu64 " %5" PRIu64
		     ".%09" PRIu64 " %5d  %c %3s %" PRIu64 " + %" PRIu32
		     " [%s]", 0, 0, 0, e->seq, e->time_ns / 1000000000u,
		     e->time_ns % 1000000000u, (int)e->pid, e->action, rwbs,
		     e->sector, e->nr_sectors, comm);
	if (n < 0 || (size_t)n >= size)
		return n;
	/* A failed completion: its -errno in brackets, as blkparse's. */
	if (e->action == 'C' && e->error != 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " [%d]", e->error);
	if (e->action == 'C' && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n,
			      " wait %" PRIu64 ".%09" PRIu64 " service %"
			      PRIu64 ".%09" PRIu64,
			      e->wait_ns / 1000000000u,
			      e->wait_ns % 1000000000u,
			      e->service_ns / 1000000000u,
			      e->service_ns % 1000000000u);
	if ((size_t)n >= size)
		return n;
	trace_cgroup_field(e->cgroup, cgroup, sizeof cgroup);
	n += snprintf(buf + n, size - (size_t)n, " cgroup %s\n", cgroup);
	return n;
}

/* The line's length in buf, never more than size - 1. */
static size_t trace_format(const struct trace_event *e, char *buf,
			   size_t size)
{
	int n = trace_format_line(e, buf, size);

	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

/*
 * Caller has set r->serving and holds no lock.  Take up to max events
 * (at most TRACE_BATCH) into evs, in one hold of trace_lock, a loss first
 * if r fell more than the ring behind; the count.
 */
static size_t trace_take(struct trace_reader *r, struct trace_event *evs,
			 size_t max)
{
	size_t i = 0;
	uint64_t lost;

	pthread_mutex_lock(&trace_lock);
	if (trace_seq - r->tail > TRACE_RING) {
		/* Overwritten before r came for them. */
		lost = trace_seq - TRACE_RING - r->tail;
		r->tail += lost;
		memset(&evs[i], 0, sizeof evs[i]);
		evs[i].action = TRACE_LOST;
		evs[i++].sector = lost;
	}
	while (i < max && r->tail != trace_seq)
		evs[i++] = trace_ring[++r->tail % TRACE_RING];
	pthread_mutex_unlock(&trace_lock);
	return i;
}

/* Append the lines of evs to r's text, the header first; false on ENOMEM. */
static bool trace_append(struct trace_reader *r, const struct trace_event *evs,
			 size_t n)
{
	size_t need = r->text_len + (n + 2) * TRACE_LINE_MAX, i;
	char *text = r->text;

	if (need > r->text_size) {
		text = realloc(r->text, need);
		if (text == NULL)
			return false;
		r->text = text;
		r->text_size = need;
	}
	if (!r->header_sent) {
		r->text_len += (size_t)snprintf(text + r->text_len,
			TRACE_LINE_MAX, "# fuse-iosched trace 1: dev cpu seq "
			"time pid action rwbs sector + count [comm] cgroup "
			"PATH\n");
		/* What fuse-iosched-replay takes for its defaults. */
		if (r->settings != NULL)
			r->text_len += (size_t)snprintf(text + r->text_len,
				TRACE_LINE_MAX, "# fuse-iosched mount: %s\n",
				r->settings);
		r->header_sent = true;
	}
	for (i = 0; i < n; i++)
		r->text_len += trace_format(&evs[i], text + r->text_len,
					    TRACE_LINE_MAX);
	return true;
}

/*
 * Serve one read of r: caller has set r->serving and holds no lock.
 * Replies to req with what is ready, taking events as needed (a line
 * takes 64 bytes or more); returns false (no reply) when there is
 * nothing to say.  Events are taken a batch at a time and formatted in
 * between, so that emitters get trace_lock while this reader works.
 */
static bool trace_serve(struct trace_reader *r, fuse_req_t req, size_t size)
{
	struct trace_event evs[TRACE_BATCH];
	size_t want = size / 64 + 1, n;

	if (r->text_len == r->text_off) {
		r->text_len = r->text_off = 0;
		if (want > TRACE_READ_MAX)
			want = TRACE_READ_MAX;
		do {
			n = trace_take(r, evs, want < TRACE_BATCH ?
				       want : TRACE_BATCH);
			if (!trace_append(r, evs, n)) {
				fuse_reply_err(req, ENOMEM);
				return true;
			}
			want -= n;
		} while (n > 0 && want > 0);
		if (r->text_len == 0)
			return false;
	}
	n = r->text_len - r->text_off;
	if (n > size)
		n = size;
	fuse_reply_buf(req, r->text + r->text_off, n);
	r->text_off += n;
	return true;
}

/* ------------------------------------------------------------------ */
/* Readers.                                                            */

static void *trace_server(void *arg);

/* Caller holds trace_lock: the server thread runs; 0 or -errno. */
static int do_trace_thread(void)
{
	int err;

	if (trace_thread_started)
		return 0;
	if (trace_stopping)
		return -ESHUTDOWN;
	/* The thread waits for trace_lock, which we hold, to start. */
	err = pthread_create(&trace_thread, NULL, trace_server, NULL);
	if (err != 0) {
		log_err("trace: cannot start its thread: %s", strerror(err));
		return -err;
	}
	pthread_setname_np(trace_thread, "iosched-trace");
	trace_thread_started = true;
	return 0;
}

int trace_open(struct trace_reader **rp)
{
	struct trace_reader *r = calloc(1, sizeof *r);
	char buf[TRACE_LINE_MAX - 32];	/* the line has 23 more */
	int err;

	if (r == NULL)
		return -ENOMEM;
	/* Taken now, with no lock held: the callback takes the queue's. */
	if (trace_settings != NULL &&
	    trace_settings(trace_settings_arg, buf, sizeof buf) > 0) {
		r->settings = strdup(buf);
		if (r->settings == NULL) {
			free(r);
			return -ENOMEM;
		}
	}
	pthread_mutex_lock(&trace_lock);
	err = atomic_load_explicit(&trace_nr_readers, memory_order_relaxed) >=
	      TRACE_READERS_MAX ? -EBUSY : do_trace_thread();
	if (err != 0) {
		pthread_mutex_unlock(&trace_lock);
		free(r->settings);
		free(r);
		return err;
	}
	r->tail = trace_seq;	/* events from now on */
	LIST_INSERT_HEAD(&trace_readers, r, link);
	atomic_fetch_add_explicit(&trace_nr_readers, 1, memory_order_relaxed);
	pthread_mutex_unlock(&trace_lock);
	*rp = r;
	return 0;
}

/* Caller holds trace_lock: park req, a read of size bytes, in r. */
static void do_trace_park(struct trace_reader *r, fuse_req_t req, size_t size)
{
	r->req = req;
	r->req_size = size;
	trace_parked++;
}

/* Caller holds trace_lock: r's parked read, no longer parked, or NULL. */
static fuse_req_t do_trace_unpark(struct trace_reader *r)
{
	fuse_req_t req = r->req;

	if (req != NULL) {
		r->req = NULL;
		trace_parked--;
	}
	return req;
}

/* Caller holds trace_lock: the serving thread is done with r. */
static void do_trace_unserve(struct trace_reader *r)
{
	r->serving = false;
	pthread_cond_broadcast(&trace_idle_cv);
}

/*
 * libfuse calls this with req's own lock held when the reading process is
 * signalled, possibly at once from fuse_req_interrupt_func.  Only a read
 * still parked is ours to answer.  Its reader is looked for, not taken
 * from data: libfuse 3.14 (find_interrupted) takes the handler under its
 * session lock but calls it after dropping that lock, by when the server
 * may have answered the read and the reader's release freed the reader.
 */
static void trace_interrupt(fuse_req_t req, void *data)
{
	struct trace_reader *r;

	pthread_mutex_lock(&trace_lock);
	LIST_FOREACH(r, &trace_readers, link)
		if (r->req == req)
			break;
	if (r != NULL)
		do_trace_unpark(r);
	pthread_mutex_unlock(&trace_lock);
	if (r != NULL)
		fuse_reply_err(req, EINTR);
}

void trace_read(struct trace_reader *r, fuse_req_t req, size_t size)
{
	bool ended;

	pthread_mutex_lock(&trace_lock);
	/* The server may be finishing the answer to our previous read. */
	while (r->serving && r->req == NULL)
		pthread_cond_wait(&trace_idle_cv, &trace_lock);
	if (r->req != NULL || r->serving) {
		/* One read at a time per open file. */
		pthread_mutex_unlock(&trace_lock);
		fuse_reply_err(req, EBUSY);
		return;
	}
	ended = trace_ended;
	r->serving = true;
	pthread_mutex_unlock(&trace_lock);

	if (ended) {
		fuse_reply_buf(req, NULL, 0);
	} else if (!trace_serve(r, req, size)) {
		/*
		 * Park it.  The interrupt handler must be set before the
		 * request is visible to the server, which may answer (and
		 * so free) it at once; an interrupt that came before shows
		 * as fuse_req_interrupted under trace_lock.
		 */
		fuse_req_interrupt_func(req, trace_interrupt, NULL);
		pthread_mutex_lock(&trace_lock);
		if (fuse_req_interrupted(req)) {
			pthread_mutex_unlock(&trace_lock);
			fuse_reply_err(req, EINTR);
			pthread_mutex_lock(&trace_lock);
		} else if (trace_ended) {
			pthread_mutex_unlock(&trace_lock);
			fuse_reply_buf(req, NULL, 0);
			pthread_mutex_lock(&trace_lock);
		} else {
			do_trace_park(r, req, size);
			/*
			 * The server answers it if an event came since we
			 * looked, and starts watching the mount.
			 */
			pthread_cond_signal(&trace_cv);
		}
		do_trace_unserve(r);
		pthread_mutex_unlock(&trace_lock);
		return;
	}
	pthread_mutex_lock(&trace_lock);
	do_trace_unserve(r);
	pthread_mutex_unlock(&trace_lock);
}

void trace_release(struct trace_reader *r)
{
	fuse_req_t req;

	pthread_mutex_lock(&trace_lock);
	/* The server may still be on its way out of r after replying. */
	while (r->serving)
		pthread_cond_wait(&trace_idle_cv, &trace_lock);
	LIST_REMOVE(r, link);
	atomic_fetch_sub_explicit(&trace_nr_readers, 1, memory_order_relaxed);
	/* None is parked: the kernel holds the file while a read waits. */
	req = do_trace_unpark(r);
	pthread_mutex_unlock(&trace_lock);
	if (req != NULL)
		fuse_reply_err(req, EBADF);
	free(r->text);
	free(r->settings);
	free(r);
}

/* ------------------------------------------------------------------ */
/* The server thread, and the end of the trace.                        */

/* Caller holds trace_lock.  Answer every parked read with end of file. */
static void do_trace_end(void)
{
	struct trace_reader *r;
	fuse_req_t req;

	trace_ended = true;
	/* The list may change while unlocked: look again each time. */
	for (;;) {
		LIST_FOREACH(r, &trace_readers, link)
			if (r->req != NULL)
				break;
		if (r == NULL)
			return;
		req = do_trace_unpark(r);
		pthread_mutex_unlock(&trace_lock);
		fuse_reply_buf(req, NULL, 0);
		pthread_mutex_lock(&trace_lock);
	}
}

/* Is our mount still in our namespace's table? */
static bool trace_mount_present(void)
{
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	char line[4096], dev[32];
	bool found = false;

	if (fp == NULL)
		return true;
	while (!found && fgets(line, sizeof line, fp) != NULL)
		if (sscanf(line, "%*s %*s %31s", dev) == 1 &&
		    strcmp(dev, trace_mount_dev) == 0)
			found = true;
	fclose(fp);
	return found;
}

/* Caller holds trace_lock: a reader whose parked read can be answered. */
static struct trace_reader *do_trace_ready(void)
{
	struct trace_reader *r;

	LIST_FOREACH(r, &trace_readers, link)
		if (r->req != NULL && !r->serving && r->tail != trace_seq)
			return r;
	return NULL;
}

static void *trace_server(void *arg)
{
	struct trace_reader *r;
	struct timespec ts;
	fuse_req_t req;
	size_t size;

	pthread_mutex_lock(&trace_lock);
	while (!trace_stopping) {
		r = do_trace_ready();
		if (r == NULL) {
			if (trace_parked == 0 || trace_mount_dev[0] == '\0') {
				pthread_cond_wait(&trace_cv, &trace_lock);
				continue;
			}
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += (long)TRACE_WATCH_NS;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			if (pthread_cond_timedwait(&trace_cv, &trace_lock,
						   &ts) == ETIMEDOUT &&
			    !trace_ended) {
				pthread_mutex_unlock(&trace_lock);
				if (!trace_mount_present()) {
					pthread_mutex_lock(&trace_lock);
					log_info("trace: the mount is gone: "
						 "end of trace for readers");
					do_trace_end();
					continue;
				}
				pthread_mutex_lock(&trace_lock);
			}
			continue;
		}
		size = r->req_size;
		req = do_trace_unpark(r);
		r->serving = true;
		pthread_mutex_unlock(&trace_lock);
		trace_serve(r, req, size);	/* there are events */
		pthread_mutex_lock(&trace_lock);
		do_trace_unserve(r);
	}
	pthread_mutex_unlock(&trace_lock);
	return NULL;
}

/* The "major:minor" of the mount at mountpoint, from mountinfo. */
static void trace_find_mount(const char *mountpoint)
{
	char path[PATH_MAX], line[4096], dev[32], mnt[PATH_MAX];
	FILE *fp;

	if (realpath(mountpoint, path) == NULL)
		return;
	fp = fopen("/proc/self/mountinfo", "re");
	if (fp == NULL)
		return;
	/* The last mount on the path is ours, just made. */
	while (fgets(line, sizeof line, fp) != NULL) {
		char *s, *d;

		if (sscanf(line, "%*s %*s %31s %*s %4095s", dev, mnt) != 2)
			continue;
		/* Undo mountinfo's octal escapes (\040 for a space...). */
		for (s = d = mnt; *s != '\0'; d++) {
			if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3') {
				*d = (char)((s[1] - '0') * 64 +
					    (s[2] - '0') * 8 + (s[3] - '0'));
				s += 4;
			} else {
				*d = *s++;
			}
		}
		*d = '\0';
		if (strcmp(mnt, path) == 0)
			snprintf(trace_mount_dev, sizeof trace_mount_dev,
				 "%s", dev);
	}
	fclose(fp);
}

/* Before the session serves: the mount is just made, the last on its
 * path in mountinfo. */
void trace_start(const char *mountpoint, uint64_t start_ns,
		 trace_settings_fn settings, void *arg)
{
	trace_start_ns = start_ns;
	trace_settings = settings;
	trace_settings_arg = arg;
	if (mountpoint != NULL)
		trace_find_mount(mountpoint);
}

void trace_stop(void)
{
	bool started;

	pthread_mutex_lock(&trace_lock);
	do_trace_end();
	trace_stopping = true;
	started = trace_thread_started;
	pthread_cond_signal(&trace_cv);
	pthread_mutex_unlock(&trace_lock);
	if (started)
		pthread_join(trace_thread, NULL);
}
