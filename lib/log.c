/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging: one line per event, to stderr in the foreground and to syslog
 * once daemonized.  The level filter is shared by every thread and may be
 * changed at run time, hence the atomic.
 *
 * Every line that passes the filter also goes to the mount's own log, a
 * ring of the last LOG_RING_SIZE bytes of whole lines that
 * .control/log shows (as dmesg shows the kernel's), and to -o log_file if
 * set: without /dev/log (a container, a minimal system) syslog loses
 * everything, and these two do not.
 *
 * Two defences against a log that another user can fill: call sites that
 * a user or the I/O can repeat at will log with log_ratelimited (as the
 * kernel's printk_ratelimited: LOG_BURST lines per LOG_INTERVAL_NS, then
 * one line counting what was left out), and a value that came from a user
 * is logged through log_value, cut short and escaped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <paths.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "fuse-iosched.h"

/* At most this many lines per call site per interval, as the kernel's. */
#define LOG_BURST 10
#define LOG_INTERVAL_NS (5 * 1000000000ULL)
/* A message, as vsnprintf cuts it. */
#define LOG_MSG_MAX 1024
/* A line of the ring or the file: time, pid, level and the message. */
#define LOG_LINE_MAX (LOG_MSG_MAX + 64)

static bool log_to_syslog;
static int log_max_level = LOG_INFO;

/*
 * The log lock protects the ring, the log file's descriptor and the rate
 * limits' counts.  It is a leaf: nothing else is taken while it is held,
 * and it is taken under any lock a caller holds (the queue lock, when a
 * scheduler logs).  It is held across the write(2) to the log file, which
 * keeps the file's lines in the ring's order.
 */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_ring[LOG_RING_SIZE];	/* protected by log_lock */
static size_t log_ring_head;		/* oldest byte; log_lock */
static size_t log_ring_len;		/* bytes held; log_lock */
static int log_file_fd = -1;		/* log_lock */
static char *log_file_path;		/* set before threads start */

/*
 * Before mounting, a problem is reported in one line (main.c): messages
 * are held, not printed, until log_release prints them because the mount
 * goes ahead, or log_held_find picks the one that explains the failure.
 * Only the main thread runs then.  Past LOG_HELD_MAX they print at once.
 */
#define LOG_HELD_MAX 32
static bool log_holding;
static unsigned log_nr_held;
static struct {
	int level;
	char line[LOG_MSG_MAX];
} log_held[LOG_HELD_MAX];

static const char *const log_names[] = {
	[LOG_EMERG] = "emerg", [LOG_ALERT] = "alert", [LOG_CRIT] = "crit",
	[LOG_ERR] = "error", [LOG_WARNING] = "warning",
	[LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

/* Messages from the daemon's libraries come here too (liblog.c). */
void log_open(bool to_syslog, int max_level)
{
	log_to_syslog = to_syslog;
	log_set_level(max_level);
	if (to_syslog)
		openlog("fuse-iosched", LOG_PID, LOG_DAEMON);
}

void log_set_level(int max_level)
{
	__atomic_store_n(&log_max_level, max_level, __ATOMIC_RELAXED);
}

const char *log_level_name(int level)
{
	if (level < 0 || (size_t)level >= ARRAY_SIZE(log_names))
		return NULL;
	return log_names[level];
}

int log_level_parse(const char *name)
{
	return names_index(log_names, ARRAY_SIZE(log_names), name);
}

/* Levels come from modules and libraries too: keep to the table. */
static int log_clamp(int level)
{
	if (level < LOG_EMERG)
		return LOG_EMERG;
	if (level > LOG_DEBUG)
		return LOG_DEBUG;
	return level;
}

static bool log_passes(int level)
{
	return level <= __atomic_load_n(&log_max_level, __ATOMIC_RELAXED);
}

/* Append one line (ending in a newline) to the ring; log_lock held. */
static void do_log_ring_add(const char *line, size_t n)
{
	size_t tail, first;

	/* Make room: drop whole lines from the front. */
	while (log_ring_len + n > LOG_RING_SIZE) {
		char c;

		do {
			c = log_ring[log_ring_head];
			log_ring_head = (log_ring_head + 1) % LOG_RING_SIZE;
			log_ring_len--;
		} while (c != '\n' && log_ring_len > 0);
	}
	tail = (log_ring_head + log_ring_len) % LOG_RING_SIZE;
	first = n < LOG_RING_SIZE - tail ? n : LOG_RING_SIZE - tail;
	memcpy(log_ring + tail, line, first);
	memcpy(log_ring, line + first, n - first);
	log_ring_len += n;
}

size_t log_ring_read(char *buf, size_t size)
{
	size_t start, n, first;

	pthread_mutex_lock(&log_lock);
	start = log_ring_head;
	n = log_ring_len;
	/* What does not fit goes, whole lines from the oldest. */
	while (n > size) {
		char c = log_ring[start];

		start = (start + 1) % LOG_RING_SIZE;
		n--;
		while (c != '\n' && n > 0) {
			c = log_ring[start];
			start = (start + 1) % LOG_RING_SIZE;
			n--;
		}
	}
	first = n < LOG_RING_SIZE - start ? n : LOG_RING_SIZE - start;
	memcpy(buf, log_ring + start, first);
	memcpy(buf + first, log_ring, n - first);
	pthread_mutex_unlock(&log_lock);
	return n;
}

/* "2026-12-04T21:24:52.123+0000": local time, as syslog's, but dated. */
static void log_timestamp(char *buf, size_t size)
{
	struct timespec ts;
	struct tm tm;
	char zone[8];

	clock_gettime(CLOCK_REALTIME, &ts);
	if (localtime_r(&ts.tv_sec, &tm) == NULL ||
	    strftime(zone, sizeof zone, "%z", &tm) == 0) {
		snprintf(buf, size, "%lld.%03ld", (long long)ts.tv_sec,
			 ts.tv_nsec / 1000000);
		return;
	}
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03ld%s",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		 tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000, zone);
}

/* The mount's own log: the ring, and the log file if there is one. */
static void log_keep(int level, const char *msg)
{
	char stamp[64], line[LOG_LINE_MAX];
	int n;

	log_timestamp(stamp, sizeof stamp);
	n = snprintf(line, sizeof line, "%s %s: %s\n", stamp,
		     log_names[level], msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof line) {
		n = sizeof line - 1;
		line[n - 1] = '\n';
	}
	pthread_mutex_lock(&log_lock);
	do_log_ring_add(line, (size_t)n);
	if (log_file_fd >= 0) {
		/* Several mounts may share a file: say whose line it is. */
		char file_line[LOG_LINE_MAX + 32];
		int m;

		m = snprintf(file_line, sizeof file_line,
			     "%s fuse-iosched[%ld]: %s", stamp, (long)getpid(),
			     line + strlen(stamp) + 1);
		if (m > 0 && (size_t)m < sizeof file_line &&
		    write(log_file_fd, file_line, (size_t)m) < 0) {
			/* A failing log file has nowhere to say so. */
		}
	}
	pthread_mutex_unlock(&log_lock);
}

/* Format, then out to every place the line goes; level already clamped. */
static void do_log_vmsg(int level, const char *fmt, va_list ap)
{
	char line[LOG_MSG_MAX];
	size_t n;

	n = (size_t)vsnprintf(line, sizeof line, fmt, ap);
	/* Library messages end in a newline; ours do not. */
	if (n > sizeof line - 1)
		n = sizeof line - 1;
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	log_keep(level, line);
	if (log_to_syslog) {
		syslog(level, "%s", line);
	} else if (log_holding && log_nr_held < LOG_HELD_MAX) {
		log_held[log_nr_held].level = level;
		snprintf(log_held[log_nr_held].line,
			 sizeof log_held[0].line, "%s", line);
		log_nr_held++;
	} else {
		fprintf(stderr, "fuse-iosched: %s: %s\n", log_names[level], line);
	}
}

void log_hold(void)
{
	log_holding = true;
}

void log_release(void)
{
	for (unsigned i = 0; i < log_nr_held; i++)
		fprintf(stderr, "fuse-iosched: %s: %s\n",
			log_names[log_held[i].level], log_held[i].line);
	log_nr_held = 0;
	log_holding = false;
}

const char *log_held_find(const char *text)
{
	const char *found = NULL;

	for (unsigned i = 0; i < log_nr_held; i++)
		if (strstr(log_held[i].line, text) != NULL)
			found = log_held[i].line;
	return found;
}

void log_vmsg(int level, const char *fmt, va_list ap)
{
	level = log_clamp(level);
	if (log_passes(level))
		do_log_vmsg(level, fmt, ap);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

void log_msg_ratelimited(struct log_ratelimit *rl, const char *where,
			 int level, const char *fmt, ...)
{
	unsigned missed = 0;
	bool print;
	uint64_t now;
	va_list ap;

	level = log_clamp(level);
	if (!log_passes(level))
		return;
	now = clock_coarse_ns();
	pthread_mutex_lock(&log_lock);
	if (rl->begin_ns == 0 || now - rl->begin_ns >= LOG_INTERVAL_NS) {
		missed = rl->missed;
		rl->begin_ns = now;
		rl->printed = 0;
		rl->missed = 0;
	}
	print = rl->printed < LOG_BURST;
	if (print)
		rl->printed++;
	else
		rl->missed++;
	pthread_mutex_unlock(&log_lock);
	if (missed > 0)
		log_msg(level, "%s: %u similar messages suppressed", where,
			missed);
	if (print) {
		va_start(ap, fmt);
		do_log_vmsg(level, fmt, ap);
		va_end(ap);
	}
}

/* A byte as log_value shows it: itself, or \xNN. */
static size_t log_value_width(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '\\' ? 1 : 4;
}

const char *log_value(char *buf, size_t size, const void *value, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	/* Room for the longest "...(N bytes)" and the NUL. */
	const size_t tail = 32;
	const unsigned char *v = value;
	size_t i, o = 0, all = 0, room = size - 1;

	if (size <= tail)
		return "";
	for (i = 0; i < len && all <= room; i++)
		all += log_value_width(v[i]);
	if (all > room)
		room = size - tail;
	for (i = 0; i < len && o + log_value_width(v[i]) <= room; i++) {
		if (log_value_width(v[i]) == 1) {
			buf[o++] = (char)v[i];
			continue;
		}
		buf[o++] = '\\';
		buf[o++] = 'x';
		buf[o++] = hex[v[i] >> 4];
		buf[o++] = hex[v[i] & 15];
	}
	if (i < len)
		o += (size_t)snprintf(buf + o, size - o, "...(%zu bytes)", len);
	buf[o] = '\0';
	return buf;
}

/*
 * Absolute: the daemon moves to / when it detaches, and opens the file
 * again on SIGHUP.
 */
bool log_file_name_valid(const char *value)
{
	return strcmp(value, "none") == 0 || value[0] == '/';
}

int log_file_open(const char *path, char *err, size_t size)
{
	struct stat st;
	int fd;

	if (path == NULL || strcmp(path, "none") == 0)
		return 0;
	/*
	 * Not through a symbolic link, nor into a FIFO or a device, which
	 * could block every thread that logs (O_NONBLOCK keeps the open
	 * itself from waiting for a FIFO's reader; it means nothing to a
	 * regular file): a regular file or nothing.  0600: the lines name
	 * files and users, and .control/log is the owner's only too.
	 */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY |
		  O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0) {
		snprintf(err, size, "log_file %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, size, "log_file %s: not a regular file", path);
		close(fd);
		return -1;
	}
	pthread_mutex_lock(&log_lock);
	if (log_file_fd >= 0)
		close(log_file_fd);
	log_file_fd = fd;
	pthread_mutex_unlock(&log_lock);
	if (log_file_path != path) {
		free(log_file_path);
		log_file_path = strdup(path);
	}
	return 0;
}

void log_file_reopen(void)
{
	char err[PATH_MAX + 64];

	if (log_file_path == NULL)
		return;
	if (log_file_open(log_file_path, err, sizeof err) != 0)
		log_err("cannot reopen %s; still writing to the file opened "
			"before", err);
}

/* Connect to syslog's socket as syslog(3) does: datagram, else stream. */
static int log_syslog_probe(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int types[] = { SOCK_DGRAM, SOCK_STREAM };
	int err = 0;

	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", _PATH_LOG);
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		int fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return errno;
		err = connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0 ?
		      0 : errno;
		close(fd);
		if (err != EPROTOTYPE)
			break;
	}
	return err;
}

void log_syslog_check(const char *mountpoint, const char *ring)
{
	int err = log_syslog_probe();

	if (err == 0)
		return;
	log_warn("syslog cannot be reached (%s: %s): once detached, the "
		 "daemon logs only to %s/%s%s%s", _PATH_LOG, strerror(err),
		 mountpoint, ring,
		 log_file_path != NULL ? " and " : "",
		 log_file_path != NULL ? log_file_path : "");
}
