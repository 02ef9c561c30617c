/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libfuse and libevent print to stderr by themselves, which goes nowhere
 * once daemonized: their messages go to log.c instead, to syslog then.
 * Before mounting, libfuse's errors are the one line of a failure, in
 * the program's form (liblog_start).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include <event2/event.h>

#include "daemon.h"

/* libfuse's levels are syslog's. */
static void liblog_from_fuse(enum fuse_log_level level, const char *fmt,
			     va_list ap)
{
	log_vmsg((int)level, fmt, ap);
}

/* libfuse said why it failed (liblog_start): ours would be a second line. */
static bool liblog_failed;

/*
 * Before mounting: libfuse's errors print at once as our one line; the
 * rest is held with ours (log_hold).  It writes an error in pieces
 * ("unknown option(s): `", "-o x", "'\n"): gathered up to the newline.
 */
static void __attribute__((format(printf, 2, 0)))
liblog_from_fuse_early(enum fuse_log_level level, const char *fmt,
		       va_list ap)
{
	static char line[512];
	size_t n = strlen(line);
	const char *text = line;

	if ((int)level > LOG_ERR) {
		log_vmsg((int)level, fmt, ap);
		return;
	}
	vsnprintf(line + n, sizeof line - n, fmt, ap);
	n = strlen(line);
	if (n == 0 || (line[n - 1] != '\n' && n < sizeof line - 1))
		return;
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	if (strncmp(text, "fuse: ", 6) == 0)
		text += 6;
	fprintf(stderr, "fuse-iosched: %s\n", text);
	line[0] = '\0';
	liblog_failed = true;
}

void liblog_start(void)
{
	fuse_set_log_func(liblog_from_fuse_early);
}

bool liblog_fuse_failed(void)
{
	return liblog_failed;
}

static void liblog_from_libevent(int severity, const char *msg)
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

void liblog_open(void)
{
	fuse_set_log_func(liblog_from_fuse);
	event_set_log_callback(liblog_from_libevent);
}
