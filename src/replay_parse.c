/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Reading traces for fuse-iosched-replay: our own .control/trace output,
 * blkparse's default text output, and the SNIA MSR Cambridge CSV.
 *
 * Each becomes a list of requests in issue order: time, process, direction,
 * sector and size, and the think time a closed-loop replay waits after the
 * process's previous request completed.  Completions are found by matching
 * C events to the outstanding Q events they cover (a merged request
 * completes every part); MSR lines carry their own response time.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuse-iosched.h"

#define REPLAY_LINE_MAX 4096
/* Q events waiting for their C; older ones are given up. */
#define REPLAY_OUTSTANDING_MAX 4096
/* Windows filetime: 100 ns units. */
#define REPLAY_FILETIME_NS 100

/* A Q event not yet matched to its C. */
struct replay_pending {
	size_t idx;		/* into t->rq */
};

struct replay_parser {
	struct replay_trace *t;
	const char *path;
	unsigned line;
	uint64_t *done_ns;	/* per request: completion, or UINT64_MAX */
	size_t done_cap;
	struct replay_pending pend[REPLAY_OUTSTANDING_MAX];
	size_t nr_pend;
	size_t nr_dropped;
	bool first;		/* no request yet: time origin unset */
	uint64_t t0;
	bool summary;		/* blkparse's closing summary: ignore */
};

static int replay_error(struct replay_parser *p, char *err, size_t size,
			const char *what)
{
	snprintf(err, size, "%s:%u: %s", p->path, p->line, what);
	return -1;
}

/* The process index of key (a pid, or an MSR host and disk's hash). */
static int replay_proc(struct replay_trace *t, int64_t key, uint32_t *proc)
{
	uint32_t i;

	/* Few processes: a scan from the most recent is quick enough. */
	for (i = t->nr_procs; i-- > 0;)
		if (t->procs[i] == key) {
			*proc = i;
			return 0;
		}
	if (t->nr_procs % 64 == 0) {
		int64_t *n = realloc(t->procs, (t->nr_procs + 64) *
				     sizeof *n);

		if (n == NULL)
			return -1;
		t->procs = n;
	}
	t->procs[t->nr_procs] = key;
	*proc = t->nr_procs++;
	return 0;
}

static struct replay_rq *replay_add(struct replay_parser *p, uint64_t time_ns)
{
	struct replay_trace *t = p->t;

	if (t->nr == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct replay_rq *n = realloc(t->rq, cap * sizeof *n);
		uint64_t *d = realloc(p->done_ns, cap * sizeof *d);

		if (n != NULL)
			t->rq = n;
		if (d != NULL)
			p->done_ns = d;
		if (n == NULL || d == NULL)
			return NULL;
		t->cap = cap;
	}
	if (p->first) {
		p->t0 = time_ns;
		p->first = false;
	}
	p->done_ns[t->nr] = UINT64_MAX;
	memset(&t->rq[t->nr], 0, sizeof t->rq[0]);
	/* Out-of-order times (several CPUs) count from the first seen. */
	t->rq[t->nr].time_ns = time_ns > p->t0 ? time_ns - p->t0 : 0;
	return &t->rq[t->nr++];
}

/* "123.000456789": seconds with up to 9 decimals, in ns. */
static bool replay_seconds(const char *s, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	unsigned digits = 0;

	if (!isdigit((unsigned char)*s))
		return false;
	for (; isdigit((unsigned char)*s); s++)
		sec = sec * 10 + (uint64_t)(*s - '0');
	if (*s == '.')
		for (s++; isdigit((unsigned char)*s); s++)
			if (digits++ < 9)
				frac = frac * 10 + (uint64_t)(*s - '0');
	if (*s != '\0' || sec > UINT64_MAX / 2000000000u)
		return false;
	for (; digits < 9; digits++)
		frac *= 10;
	*ns = sec * 1000000000u + frac;
	return true;
}

/* A C event of dir at sector + nr: every pending Q inside it is done. */
static void replay_complete(struct replay_parser *p, bool write,
			    uint64_t sector, uint64_t nr, uint64_t time_ns)
{
	size_t i = 0;

	while (i < p->nr_pend) {
		const struct replay_rq *rq = &p->t->rq[p->pend[i].idx];

		if (rq->write == write && rq->sector >= sector &&
		    rq->sector < sector + nr) {
			p->done_ns[p->pend[i].idx] = time_ns;
			p->pend[i] = p->pend[--p->nr_pend];
		} else {
			i++;
		}
	}
}

static void replay_pend(struct replay_parser *p, size_t idx)
{
	/*
	 * Full: some were never completed (the trace began or ended
	 * mid-way, or has no C events); give up one of them, in turn.
	 */
	if (p->nr_pend == REPLAY_OUTSTANDING_MAX)
		p->pend[p->nr_dropped++ % REPLAY_OUTSTANDING_MAX].idx = idx;
	else
		p->pend[p->nr_pend++].idx = idx;
}

/*
 * One line of blkparse's default output, or of ours (the same, with a
 * header, "lost N events" lines and C's wait and service).  Only Q and C
 * matter; other actions and the closing summary are skipped.
 */
static int replay_parse_blk(struct replay_parser *p, char *line, char *err,
			    size_t size)
{
	char time[32], action[4], rwbs[12], *rest;
	unsigned maj, min, cpu;
	uint64_t seq, sector, t_ns;
	unsigned long nr;
	int pid, used = 0;
	struct replay_rq *rq;
	uint32_t proc;
	bool write;

	if (line[0] == '#' || strncmp(line, "lost ", 5) == 0)
		return 0;
	if (p->summary || strncmp(line, "CPU", 3) == 0 ||
	    strncmp(line, "Total", 5) == 0) {
		p->summary = true;
		return 0;
	}
	if (sscanf(line, " %u,%u %u %" SCNu64 " %31s %d %3s %n", &maj, &min,
		   &cpu, &seq, time, &pid, action, &used) != 7 || used == 0 ||
	    !replay_seconds(time, &t_ns))
		return replay_error(p, err, size, "malformed line");
	rest = line + used;
	if (strcmp(action, "Q") != 0 && strcmp(action, "C") != 0)
		return 0;
	if (sscanf(rest, "%11s %" SCNu64 " + %lu", rwbs, &sector, &nr) != 3)
		return replay_error(p, err, size, "malformed Q or C event");
	/* Discards, flushes without data and the like: not ours to model. */
	if (strchr(rwbs, 'D') != NULL || nr == 0 ||
	    (strchr(rwbs, 'R') == NULL && strchr(rwbs, 'W') == NULL))
		return 0;
	write = strchr(rwbs, 'W') != NULL;
	if (action[0] == 'C') {
		replay_complete(p, write, sector, nr, t_ns);
		return 0;
	}
	if (replay_proc(p->t, pid, &proc) != 0 ||
	    (rq = replay_add(p, t_ns)) == NULL)
		return replay_error(p, err, size, "out of memory");
	rq->sector = sector;
	rq->nr_sectors = nr > UINT32_MAX ? UINT32_MAX : (uint32_t)nr;
	rq->proc = proc;
	rq->write = write;
	rq->sync = !write || strchr(rwbs, 'S') != NULL;
	rq->abs_ns = t_ns;
	replay_pend(p, p->t->nr - 1);
	return 0;
}

/*
 * Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime: times in
 * Windows filetime units of 100 ns, offsets and sizes in bytes.  Each
 * host and disk is one process: the format names no process.
 */
static int replay_parse_msr(struct replay_parser *p, char *line, char *err,
			    size_t size)
{
	char *f[7], *s = line, *end;
	uint64_t v[7], key = 1469598103934665603ull;
	struct replay_rq *rq;
	uint32_t proc;
	unsigned i;
	bool write;

	for (i = 0; i < 7; i++) {
		f[i] = s;
		s = strchr(s, ',');
		if ((s == NULL) != (i == 6))
			return replay_error(p, err, size,
					    "malformed line: want 7 fields");
		if (s != NULL)
			*s++ = '\0';
	}
	for (i = 0; i < 7; i++) {
		if (i == 1 || i == 3)
			continue;
		errno = 0;
		v[i] = strtoull(f[i], &end, 10);
		if (errno != 0 || end == f[i] || *end != '\0' ||
		    f[i][0] == '-')
			return replay_error(p, err, size,
					    "malformed line: not a number");
	}
	if (strcasecmp(f[3], "Read") == 0)
		write = false;
	else if (strcasecmp(f[3], "Write") == 0)
		write = true;
	else
		return replay_error(p, err, size,
				    "malformed line: Type is not Read or Write");
	if (v[5] == 0)
		return 0;
	/* FNV-1a of host and disk. */
	for (s = f[1]; *s != '\0'; s++)
		key = (key ^ (unsigned char)*s) * 1099511628211ull;
	key = (key ^ v[2]) * 1099511628211ull;
	if (replay_proc(p->t, (int64_t)(key >> 1), &proc) != 0 ||
	    (rq = replay_add(p, v[0] * REPLAY_FILETIME_NS)) == NULL)
		return replay_error(p, err, size, "out of memory");
	rq->sector = v[4] >> IOSCHED_SECTOR_SHIFT;
	rq->nr_sectors = (uint32_t)((v[5] + 511) >> IOSCHED_SECTOR_SHIFT);
	rq->proc = proc;
	rq->write = write;
	rq->sync = true;
	rq->abs_ns = v[0] * REPLAY_FILETIME_NS;
	p->done_ns[p->t->nr - 1] = (v[0] + v[6]) * REPLAY_FILETIME_NS;
	return 0;
}

static bool replay_is_msr_line(const char *line)
{
	unsigned commas = 0;

	if (!isdigit((unsigned char)line[0]))
		return false;
	for (; *line != '\0'; line++)
		commas += *line == ',';
	return commas == 6;
}

/* The format of a file from its first meaningful line, or NULL. */
static const char *replay_detect(const char *line)
{
	unsigned a, b, c;

	if (strncmp(line, "# fuse-iosched trace", 20) == 0)
		return "fuse-iosched";
	if (replay_is_msr_line(line))
		return "msr";
	if (sscanf(line, " %u,%u %u", &a, &b, &c) == 3)
		return "blkparse";
	return NULL;
}

bool replay_format_valid(const char *name)
{
	return strcmp(name, "auto") == 0 || strcmp(name, "fuse-iosched") == 0 ||
	       strcmp(name, "blkparse") == 0 || strcmp(name, "msr") == 0;
}

/*
 * Closed loop: a request waits for the completion of its process's
 * previous one plus the gap the trace shows between them.  Where the
 * previous one completed after this one was issued (several in flight),
 * there is no wait; where its completion is unknown, the gap between
 * issues stands in.
 */
static void replay_think_times(struct replay_parser *p)
{
	struct replay_trace *t = p->t;
	size_t *last = malloc((t->nr_procs ? t->nr_procs : 1) * sizeof *last);
	size_t i;

	if (last == NULL)
		return;
	for (i = 0; i < t->nr_procs; i++)
		last[i] = SIZE_MAX;
	for (i = 0; i < t->nr; i++) {
		struct replay_rq *rq = &t->rq[i];
		size_t prev = last[rq->proc];

		if (prev != SIZE_MAX) {
			uint64_t ref = p->done_ns[prev];

			if (ref == UINT64_MAX)
				ref = t->rq[prev].abs_ns;
			rq->think_ns = rq->abs_ns > ref ? rq->abs_ns - ref : 0;
		}
		last[rq->proc] = i;
	}
	free(last);
}

static int replay_cmp_time(const void *a, const void *b)
{
	const struct replay_rq *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	/* Stable: the order of the file. */
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int replay_parse(const char *path, const char *format,
		 struct replay_trace *t, char *err, size_t size)
{
	struct replay_parser *p;
	char line[REPLAY_LINE_MAX];
	FILE *fp;
	int ret = 0;
	size_t i;

	memset(t, 0, sizeof *t);
	p = calloc(1, sizeof *p);
	if (p == NULL) {
		snprintf(err, size, "%s: out of memory", path);
		return -1;
	}
	p->t = t;
	p->path = path;
	p->first = true;
	fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	if (fp == NULL) {
		snprintf(err, size, "%s: %s", path, strerror(errno));
		free(p);
		return -1;
	}
	t->format = strcmp(format, "auto") == 0 ? NULL : format;
	while (ret == 0 && fgets(line, sizeof line, fp) != NULL) {
		size_t len = strlen(line);

		p->line++;
		if (len == sizeof line - 1 && line[len - 1] != '\n') {
			ret = replay_error(p, err, size, "line too long");
			break;
		}
		while (len > 0 && (line[len - 1] == '\n' ||
				   line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		if (t->format == NULL) {
			t->format = replay_detect(line);
			if (t->format == NULL) {
				ret = replay_error(p, err, size,
						   "unknown trace format");
				break;
			}
		}
		/* MSR files may start with the column names. */
		if (strcmp(t->format, "msr") == 0 &&
		    strncmp(line, "Timestamp,", 10) == 0)
			continue;
		if (strcmp(t->format, "msr") == 0)
			ret = replay_parse_msr(p, line, err, size);
		else
			ret = replay_parse_blk(p, line, err, size);
	}
	if (ret == 0 && ferror(fp))
		ret = replay_error(p, err, size, strerror(errno));
	if (fp != stdin)
		fclose(fp);
	if (ret == 0 && t->nr == 0) {
		snprintf(err, size, "%s: no requests", path);
		ret = -1;
	}
	if (ret == 0) {
		replay_think_times(p);
		for (i = 0; i < t->nr; i++)
			t->rq[i].seq = i;
		qsort(t->rq, t->nr, sizeof t->rq[0], replay_cmp_time);
	}
	free(p->done_ns);
	free(p);
	if (ret != 0)
		replay_trace_free(t);
	return ret;
}

void replay_trace_free(struct replay_trace *t)
{
	free(t->rq);
	free(t->procs);
	memset(t, 0, sizeof *t);
}
