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

#include "fuse-iosched.h"

static bool log_to_syslog;
static int log_max_level = LOG_INFO;

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
	if (log_to_syslog)
		syslog(level, "%s", line);
	else
		fprintf(stderr, "fuse-iosched: %s: %s\n", log_names[level], line);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}
