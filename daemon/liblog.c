/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libfuse and libevent print to stderr by themselves, which goes nowhere
 * once daemonized: their messages go to log.c instead, to syslog then.
 */
#include <stdarg.h>
#include <syslog.h>

#include <event2/event.h>

#include "daemon.h"

/* libfuse's levels are syslog's. */
static void liblog_from_fuse(enum fuse_log_level level, const char *fmt,
			     va_list ap)
{
	log_vmsg((int)level, fmt, ap);
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
