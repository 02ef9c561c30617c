/* SPDX-License-Identifier: GPL-2.0-or-later */
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
 *   queue busy_us 5120 depth_us 9730
 *   buckets_us 1 2 4 ... 33554432 inf
 *   wait read rt count 9 sum_us 120 p50_us 8 p90_us 32 p99_us 32 buckets 0 ...
 *   cgroup /system.slice/a.service read ios 9 bytes 36864
 *   cgroup_wait /system.slice/a.service read count 9 sum_us 120 ...
 *
 * The first word names the line; lines are only ever added, and fields
 * only appended, so that scripts keep working.  The totals of the read and
 * write lines are in milliseconds, like the kernel's io_ticks; the
 * histogram lines (wait, service) are per direction and I/O priority
 * class, in microseconds, with a fixed power-of-two scale: recording one
 * time under the queue lock is a few instructions.  The cgroup lines are
 * per control group (at most STATS_GROUPS, the most recently active) and
 * direction, the group's path with blanks, backslashes and bytes outside
 * printable ASCII as \xNN, so that it stays one word, cut after
 * STATS_GROUP_WORD_MAX bytes with "..." (.control/stats stays bounded).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fuse-iosched.h"

/* A group's path is cut after this many bytes of its word, with "...". */
#define STATS_GROUP_WORD_MAX 200

const char *const stats_class_names[STATS_CLASSES] = {
	[STATS_CLASS_RT] = "rt",
	[STATS_CLASS_BE] = "be",
	[STATS_CLASS_IDLE] = "idle",
};

enum stats_class stats_class_of(int ioprio)
{
	return elv_ioprio_class_index(ioprio);
}

/* The smallest i with ns <= 2^i us, exactly: Prometheus' "le". */
unsigned stats_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000 + (ns % 1000 != 0);
	unsigned i;

	if (us <= 1)
		return 0;
	i = 64 - (unsigned)__builtin_clzll(us - 1);
	return i < STATS_BUCKETS - 1 ? i : STATS_BUCKETS - 1;
}

uint64_t stats_bucket_us(unsigned i)
{
	return i < STATS_BUCKETS - 1 ? 1ULL << i : 0;
}

void stats_hist_add(struct stats_hist *h, uint64_t ns)
{
	h->count++;
	h->sum_ns += ns;
	h->bucket[stats_bucket(ns)]++;
}

/* The bucket where the cumulative count reaches pct% of all (rounded up). */
uint64_t stats_percentile_us(const struct stats_hist *h, unsigned pct)
{
	uint64_t rank = (h->count * pct + 99) / 100, seen = 0;
	unsigned i;

	if (h->count == 0)
		return 0;
	if (rank == 0)
		rank = 1;
	for (i = 0; i < STATS_BUCKETS - 1; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			return stats_bucket_us(i);
	}
	return UINT64_MAX;
}

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

static bool stats_format_percentile(const struct stats_hist *h, unsigned pct,
				    char *buf, size_t size, size_t *off)
{
	uint64_t us = stats_percentile_us(h, pct);

	if (us == UINT64_MAX)
		return stats_append(buf, size, off, " p%u_us inf", pct);
	return stats_append(buf, size, off, " p%u_us %llu", pct,
			    (unsigned long long)us);
}

/* "name a b count ...": a histogram line, named by its first words. */
static bool stats_format_hist(const char *kind, const char *a, const char *b,
			      const struct stats_hist *h,
			      char *buf, size_t size, size_t *off)
{
	unsigned i;

	if (!stats_append(buf, size, off, "%s %s %s count %llu sum_us %llu",
			  kind, a, b, (unsigned long long)h->count,
			  (unsigned long long)(h->sum_ns / 1000)) ||
	    !stats_format_percentile(h, 50, buf, size, off) ||
	    !stats_format_percentile(h, 90, buf, size, off) ||
	    !stats_format_percentile(h, 99, buf, size, off) ||
	    !stats_append(buf, size, off, " buckets"))
		return false;
	for (i = 0; i < STATS_BUCKETS; i++)
		if (!stats_append(buf, size, off, " %llu",
				  (unsigned long long)h->bucket[i]))
			return false;
	return stats_append(buf, size, off, "\n");
}

static bool stats_format_bounds(char *buf, size_t size, size_t *off)
{
	unsigned i;

	if (!stats_append(buf, size, off, "buckets_us"))
		return false;
	for (i = 0; i < STATS_BUCKETS - 1; i++)
		if (!stats_append(buf, size, off, " %llu",
				  (unsigned long long)stats_bucket_us(i)))
			return false;
	return stats_append(buf, size, off, " inf\n");
}

static bool stats_format_hists(const struct stats *s, char *buf, size_t size,
			       size_t *off)
{
	static const char *const dirs[] = { "read", "write" };
	unsigned d, c;

	for (d = 0; d < 2; d++)
		for (c = 0; c < STATS_CLASSES; c++)
			if (!stats_format_hist("wait", dirs[d],
					       stats_class_names[c],
					       &s->dir[d].wait[c], buf, size,
					       off))
				return false;
	for (d = 0; d < 2; d++)
		for (c = 0; c < STATS_CLASSES; c++)
			if (!stats_format_hist("service", dirs[d],
					       stats_class_names[c],
					       &s->dir[d].service[c], buf,
					       size, off))
				return false;
	return true;
}

static bool stats_format_counters(const struct stats_counters *c, char *buf,
				  size_t size, size_t *off)
{
	unsigned i;

	for (i = 0; i < c->n; i++)
		if (!stats_append(buf, size, off, "scheduler %s %s %llu\n",
				  c->scheduler, c->name[i],
				  (unsigned long long)c->value[i]))
			return false;
	return true;
}

struct stats_group *stats_group(struct stats *s, uint64_t id, bool add,
				uint64_t now)
{
	struct stats_group *g, *lru = NULL;
	unsigned i;

	for (i = 0; i < s->nr_groups; i++) {
		g = &s->group[i];
		if (g->id == id)
			return g;
		if (lru == NULL || g->last_ns < lru->last_ns)
			lru = g;
	}
	if (!add)
		return NULL;
	if (s->nr_groups < STATS_GROUPS)
		lru = &s->group[s->nr_groups++];
	memset(lru, 0, sizeof *lru);
	lru->id = id;
	lru->last_ns = now;
	return lru;
}

/* A group's path as one word: see the top of this file. */
static void stats_group_word(const char *path, char *out, size_t size)
{
	size_t n = 0;

	for (; *path != '\0' && n + 5 < size; path++) {
		unsigned char c = (unsigned char)*path;

		if (n >= STATS_GROUP_WORD_MAX) {
			n += (size_t)snprintf(out + n, size - n, "...");
			break;
		}
		if (c > ' ' && c < 0x7f && c != '\\')
			out[n++] = (char)c;
		else
			n += (size_t)snprintf(out + n, size - n, "\\x%02x", c);
	}
	out[n] = '\0';
}

static bool stats_format_groups(const struct stats *s, char *buf,
				size_t size, size_t *off)
{
	static const char *const dirs[] = { "read", "write" };
	char word[STATS_GROUP_WORD_MAX + 8];
	const struct stats_group *g;
	unsigned i, d;

	for (i = 0; i < s->nr_groups; i++) {
		g = &s->group[i];
		stats_group_word(g->path, word, sizeof word);
		for (d = 0; d < 2; d++)
			if (!stats_append(buf, size, off,
					  "cgroup %s %s ios %llu bytes %llu\n",
					  word, dirs[d],
					  (unsigned long long)g->dir[d].ios,
					  (unsigned long long)g->dir[d].bytes) ||
			    !stats_format_hist("cgroup_wait", word, dirs[d],
					       &g->dir[d].wait, buf, size,
					       off) ||
			    !stats_format_hist("cgroup_service", word,
					       dirs[d], &g->dir[d].service,
					       buf, size, off))
				return false;
	}
	return true;
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
			  (unsigned long long)s->switches) ||
	    !stats_append(buf, size, &off, "queue busy_us %llu depth_us %llu\n",
			  (unsigned long long)(s->busy_ns / 1000),
			  (unsigned long long)(s->depth_ns / 1000)) ||
	    !stats_format_counters(&s->sched, buf, size, &off) ||
	    !stats_format_bounds(buf, size, &off) ||
	    !stats_format_hists(s, buf, size, &off) ||
	    /* Lines added later come after the older ones. */
	    !stats_append(buf, size, &off, "memory copy_bytes %llu copy_peak "
			  "%llu copy_limit %llu copy_waits %llu trims %llu "
			  "copy_parked %llu adopted %llu\n",
			  (unsigned long long)s->mem.copy_bytes,
			  (unsigned long long)s->mem.copy_peak,
			  (unsigned long long)s->mem.copy_limit,
			  (unsigned long long)s->mem.copy_waits,
			  (unsigned long long)s->mem.trims,
			  (unsigned long long)s->mem.copy_parked,
			  (unsigned long long)s->mem.adopted) ||
	    !stats_format_groups(s, buf, size, &off))
		return -ENOSPC;
	return (int)off;
}
