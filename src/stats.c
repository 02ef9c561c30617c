/*
 * Formatting of the queue's counters for .control/stats.
 *
 * The counters themselves live in the queue and are updated under its lock
 * (queue.c); this file only turns a snapshot into text.  The layout follows
 * /sys/block/DEV/stat in spirit, one line per direction, but every number
 * is preceded by its name so that a person can read it and a script can
 * pick a field without counting columns:
 *
 *   read requests 12 merges 3 dispatched 9 completed 12 sectors 96 ...
 *   write requests 4 ...
 *   switches 2
 *
 * Times are in milliseconds, like the kernel's io_ticks and friends.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "fuse-iosched.h"

/* Append to buf at *off; false once it does not fit. */
static bool stats_append(char *buf, size_t size, size_t *off,
			 const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool stats_append(char *buf, size_t size, size_t *off,
			 const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf + *off, size - *off, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size - *off)
		return false;
	*off += (size_t)n;
	return true;
}

static bool stats_format_dir(const char *name, const struct stats_dir *d,
			     char *buf, size_t size, size_t *off)
{
	return stats_append(buf, size, off,
	    "%s requests %llu merges %llu dispatched %llu completed %llu "
	    "sectors %llu errors %llu in_flight %llu queued %llu "
	    "wait_ms %llu service_ms %llu\n", name,
	    (unsigned long long)d->requests,
	    (unsigned long long)d->merges,
	    (unsigned long long)d->dispatched,
	    (unsigned long long)d->completed,
	    (unsigned long long)d->sectors,
	    (unsigned long long)d->errors,
	    (unsigned long long)d->in_flight,
	    (unsigned long long)d->queued,
	    (unsigned long long)(d->wait_ns / 1000000),
	    (unsigned long long)(d->service_ns / 1000000));
}

/* Returns the length written (without the NUL), or -ENOSPC. */
int stats_format(const struct stats *s, char *buf, size_t size)
{
	size_t off = 0;

	if (size == 0 || size > INT32_MAX)
		return -ENOSPC;
	if (!stats_format_dir("read", &s->dir[ELV_READ], buf, size, &off) ||
	    !stats_format_dir("write", &s->dir[ELV_WRITE], buf, size, &off) ||
	    !stats_append(buf, size, &off, "switches %llu\n",
			  (unsigned long long)s->switches))
		return -ENOSPC;
	return (int)off;
}
