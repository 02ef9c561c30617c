/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Logging: one line per event, to stderr in the foreground and to syslog
 * once daemonized.  The level filter is shared by every thread and may be
 * changed at run time, hence the atomic.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include <event2/event.h>

#include "fuse-iosched.h"

static bool log_to_syslog;
static int log_max_level = LOG_INFO;

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
	char line[1024];	/* as log_vmsg's */
} log_held[LOG_HELD_MAX];

static const char *const log_names[] = {
	[LOG_EMERG] = "emerg", [LOG_ALERT] = "alert", [LOG_CRIT] = "crit",
	[LOG_ERR] = "error", [LOG_WARNING] = "warning",
	[LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

/* libfuse's levels are syslog's. */
static void log_from_fuse(enum fuse_log_level level, const char *fmt,
			  va_list ap)
{
	log_vmsg((int)level, fmt, ap);
}

static void log_from_libevent(int severity, const char *msg)
{
	int level;

	switch (severity) {
	case EVENT_LOG_DEBUG:
		level = LOG_DEBUG;
		break;
	case EVENT_LOG_MSG:
		level = LOG_INFO;
		break;
	case EVENT_LOG_WARN:
		level = LOG_WARNING;
		break;
	default:
		level = LOG_ERR;
		break;
	}
	log_msg(level, "libevent: %s", msg);
}

/*
 * libfuse and libevent print to stderr by themselves, which goes nowhere
 * once daemonized: their messages come here instead, to syslog then.
 */
void log_open(bool to_syslog, int max_level)
{
	log_to_syslog = to_syslog;
	log_set_level(max_level);
	if (to_syslog)
		openlog("fuse-iosched", LOG_PID, LOG_DAEMON);
	fuse_set_log_func(log_from_fuse);
	event_set_log_callback(log_from_libevent);
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
	for (size_t i = 0; i < ARRAY_SIZE(log_names); i++)
		if (log_names[i] != NULL && strcmp(name, log_names[i]) == 0)
			return (int)i;
	return -1;
}

void log_vmsg(int level, const char *fmt, va_list ap)
{
	char line[1024];
	size_t n;

	/* Levels come from modules and libraries too: keep to the table. */
	if (level < LOG_EMERG)
		level = LOG_EMERG;
	else if (level > LOG_DEBUG)
		level = LOG_DEBUG;
	if (level > __atomic_load_n(&log_max_level, __ATOMIC_RELAXED))
		return;
	n = (size_t)vsnprintf(line, sizeof line, fmt, ap);
	/* Library messages end in a newline; ours do not. */
	if (n > sizeof line - 1)
		n = sizeof line - 1;
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
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

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}
