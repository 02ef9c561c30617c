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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

#define REPLAY_LINE_MAX 4096
/* Q events waiting for their C; older ones are given up. */
#define REPLAY_OUTSTANDING_MAX 4096
/* Dispatches waiting for their C: the mount's workers, and more. */
#define REPLAY_DISPATCHED_MAX 256
/* Windows filetime: 100 ns units. */
#define REPLAY_FILETIME_NS 100
/* Warnings shown per file; the rest are counted. */
#define REPLAY_WARN_MAX 10
/* blkparse's actions (blktrace's act_to_str and its m for messages). */
#define REPLAY_BLK_ACTIONS "ABCDFGIMPQSTUXRm"
#define REPLAY_OUR_ACTIONS "QMFDC"

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
	bool ours, msr;		/* t->format, compared once */
	bool detected;		/* t->format from the first line */
	bool force;		/* doubts are warnings, not errors */
	bool headless;		/* said: ours without its first line */
	unsigned nr_warned;
	uint64_t last_ns;	/* the latest event seen */
	uint64_t prev_ns;	/* the previous event's */
	/* D events of ours waiting for their C, oldest first. */
	size_t dpend[REPLAY_DISPATCHED_MAX];
	size_t nr_dpend;
	/* Index + 1 of each process key in t->procs, 0 for a free slot;
	 * open addressing, at most half full. */
	uint32_t *proc_slot;
	size_t proc_cap;	/* a power of two, or 0 */
};

static int parse_error(struct replay_parser *p, char *err, size_t size,
		       const char *what)
{
	snprintf(err, size, "%s:%u: %s", p->path, p->line, what);
	return -1;
}

/* A warning with the line number, the first few of them. */
static void parse_warn(struct replay_parser *p, const char *what)
{
	if (p->nr_warned++ < REPLAY_WARN_MAX)
		fprintf(stderr, "fuse-iosched-replay: %s:%u: %s\n", p->path,
			p->line, what);
}

/*
 * Something a replay cannot be true to: an error, or under --force a
 * warning (0).
 */
static int parse_doubt(struct replay_parser *p, char *err, size_t size,
			const char *what)
{
	char msg[256];

	if (p->force) {
		parse_warn(p, what);
		return 0;
	}
	snprintf(msg, sizeof msg, "%s (--force replays it all the same)",
		 what);
	return parse_error(p, err, size, msg);
}

/* The process index of key (a pid, or an MSR host and disk's hash). */
/* The slot of key in the table: where it is, or the free one it goes in. */
static size_t parse_proc_slot(const struct replay_parser *p, int64_t key)
{
	uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ULL;
	size_t mask = p->proc_cap - 1, i = (size_t)(h >> 32) & mask;

	while (p->proc_slot[i] != 0 &&
	       p->t->procs[p->proc_slot[i] - 1] != key)
		i = (i + 1) & mask;
	return i;
}

/* Twice the slots, the keys placed again; -1 without memory. */
static int parse_proc_grow(struct replay_parser *p)
{
	size_t cap = p->proc_cap ? p->proc_cap * 2 : 256;
	uint32_t *old = p->proc_slot, i;

	p->proc_slot = calloc(cap, sizeof *p->proc_slot);
	if (p->proc_slot == NULL) {
		p->proc_slot = old;
		return -1;
	}
	p->proc_cap = cap;
	for (i = 0; i < p->t->nr_procs; i++)
		p->proc_slot[parse_proc_slot(p, p->t->procs[i])] = i + 1;
	free(old);
	return 0;
}

/* The index of process key in t->procs, added if new; -1 without memory. */
static int parse_proc(struct replay_parser *p, int64_t key, uint32_t *proc)
{
	struct replay_trace *t = p->t;
	size_t slot;

	if ((t->nr_procs + 1) * 2 > p->proc_cap && parse_proc_grow(p) != 0)
		return -1;
	slot = parse_proc_slot(p, key);
	if (p->proc_slot[slot] != 0) {
		*proc = p->proc_slot[slot] - 1;
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
	p->proc_slot[slot] = *proc + 1;
	return 0;
}

static struct replay_rq *parse_add(struct replay_parser *p, uint64_t time_ns)
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
static bool parse_seconds(const char *s, uint64_t *ns)
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
static void parse_complete(struct replay_parser *p, bool write,
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

static void parse_pend(struct replay_parser *p, size_t idx)
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

/* Digits only, into *v; false on anything else or an overflow. */
static bool parse_u64(const char *s, uint64_t *v)
{
	uint64_t n = 0;

	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (d > 9 || n > (UINT64_MAX - d) / 10)
			return false;
		n = n * 10 + d;
	}
	*v = n;
	return true;
}

/* "MAJ,MIN": blkparse's device. */
static bool parse_dev(char *s)
{
	char *comma = strchr(s, ',');
	uint64_t v;
	bool ok;

	if (comma == NULL)
		return false;
	*comma = '\0';
	ok = parse_u64(s, &v) && parse_u64(comma + 1, &v);
	*comma = ',';
	return ok;
}

/* Split line at blanks into at most max fields; how many. */
static unsigned parse_fields(char *line, char **f, unsigned max)
{
	unsigned n = 0;

	for (;;) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line == '\0' || n == max)
			return n;
		f[n++] = line;
		while (*line != ' ' && *line != '\t' && *line != '\0')
			line++;
		if (*line != '\0')
			*line++ = '\0';
	}
}

#define REPLAY_FIELDS 10

/*
 * The wait our C events report after the process name, "[comm] wait
 * SECONDS service SECONDS", in ns; UINT64_MAX if rest has none.
 */
static uint64_t parse_c_wait(const char *rest)
{
	const char *w = strstr(rest, "] wait ");
	char num[32];
	size_t len;
	uint64_t ns;

	if (w == NULL)
		return UINT64_MAX;
	w += 7;
	len = strcspn(w, " \t");
	if (len == 0 || len >= sizeof num)
		return UINT64_MAX;
	memcpy(num, w, len);
	num[len] = '\0';
	return parse_seconds(num, &ns) ? ns : UINT64_MAX;
}

/*
 * A failed completion: "[-5]" where blkparse has "[0]" after the count,
 * after the process name in ours.
 */
static bool parse_c_failed(const char *rest, bool ours)
{
	const char *s = rest;
	char *end;
	long v;

	if (s == NULL)
		return false;
	s += strspn(s, " \t");
	if (ours) {
		if (*s != '[' || (s = strchr(s, ']')) == NULL)
			return false;
		s += 1 + strspn(s + 1, " \t");
	}
	if (*s != '[')
		return false;
	v = strtol(s + 1, &end, 10);
	return end != s + 1 && *end == ']' && v != 0;
}

/* A D event of ours: a dispatch whose C will tell its service time. */
static int parse_dispatched(struct replay_parser *p, bool write,
			    uint64_t sector, uint32_t nr, uint64_t time_ns)
{
	struct replay_trace *t = p->t;
	struct replay_disp *d;

	if (t->nr_disp == t->cap_disp) {
		size_t cap = t->cap_disp ? t->cap_disp * 2 : 1024;

		d = realloc(t->disp, cap * sizeof *d);
		if (d == NULL)
			return -1;
		t->disp = d;
		t->cap_disp = cap;
	}
	d = &t->disp[t->nr_disp];
	*d = (struct replay_disp){
		.d_ns = time_ns > p->t0 ? time_ns - p->t0 : 0,
		.service_ns = UINT64_MAX,
		.wait_ns = UINT64_MAX,
		.sector = sector,
		.nr_sectors = nr,
		.write = write,
	};
	/* Full: the oldest never completed; forget it. */
	if (p->nr_dpend == REPLAY_DISPATCHED_MAX)
		memmove(p->dpend, p->dpend + 1,
			--p->nr_dpend * sizeof *p->dpend);
	p->dpend[p->nr_dpend++] = t->nr_disp++;
	return 0;
}

/*
 * A C event: the service time of the dispatch it ends, and its wait from
 * rest, the line after the count (NULL: none).
 */
static void parse_dispatch_done(struct replay_parser *p, bool write,
				uint64_t sector, uint32_t nr, uint64_t time_ns,
				const char *rest)
{
	uint64_t at = time_ns > p->t0 ? time_ns - p->t0 : 0;
	size_t i;

	for (i = 0; i < p->nr_dpend; i++) {
		struct replay_disp *d = &p->t->disp[p->dpend[i]];

		if (d->write == write && d->sector == sector &&
		    d->nr_sectors == nr) {
			d->service_ns = at > d->d_ns ? at - d->d_ns : 0;
			d->wait_ns = rest ? parse_c_wait(rest) : UINT64_MAX;
			memmove(p->dpend + i, p->dpend + i + 1,
				(--p->nr_dpend - i) * sizeof *p->dpend);
			return;
		}
	}
}

#define PARSE_MOUNT "# fuse-iosched mount:"

/*
 * The mount's settings, "name value" pairs after PARSE_MOUNT.  Names not
 * known here (a later daemon's) are skipped, and one missing (an earlier
 * daemon's) is not seen; a value out of range, or a disk model not
 * known, leaves the line unused: the replay's defaults stand.
 */
static void parse_mount(struct replay_mount *m, char *line)
{
	static const struct {
		const char *name;
		size_t off;
		unsigned min, max;
	} fields[] = {
#define PARSE_FIELD(f, lo, hi) { #f, offsetof(struct replay_mount, f), lo, hi }
		PARSE_FIELD(seek_ms, 0, 1000),
		PARSE_FIELD(rpm, 1, 100000),
		PARSE_FIELD(mb_per_s, 1, 100000),
		PARSE_FIELD(ssd_channels, 1, 1024),
		PARSE_FIELD(ssd_read_us, 0, 1000000),
		PARSE_FIELD(ssd_mb_per_s, 1, 100000),
		PARSE_FIELD(ssd_buffer_mib, 0, 1048576),
		PARSE_FIELD(ssd_drain_mb_per_s, 1, 100000),
		PARSE_FIELD(threads, 1, 1024),
		PARSE_FIELD(nr_requests, 1, 65536),
#undef PARSE_FIELD
	};
	struct replay_mount got = { .set = true };
	char *save = NULL, *name, *value, *end;
	unsigned long v;
	size_t i;

	while ((name = strtok_r(line, " \t\r\n", &save)) != NULL &&
	       (value = strtok_r(NULL, " \t\r\n", &save)) != NULL) {
		line = NULL;
		if (strcmp(name, "disk_model") == 0 ||
		    strcmp(name, "backing_io") == 0) {
			char *dst = name[0] == 'd' ? got.disk_model :
				    got.backing_io;
			size_t n = name[0] == 'd' ? sizeof got.disk_model :
				   sizeof got.backing_io;

			if (strlen(value) >= n)
				return;
			strcpy(dst, value);
			continue;
		}
		for (i = 0; i < ARRAY_SIZE(fields); i++)
			if (strcmp(name, fields[i].name) == 0)
				break;
		if (i == ARRAY_SIZE(fields))
			continue;
		errno = 0;
		v = strtoul(value, &end, 10);
		if (errno != 0 || *end != '\0' || value[0] == '-' ||
		    v < fields[i].min || v > fields[i].max)
			return;
		*(unsigned *)((char *)&got + fields[i].off) = (unsigned)v;
		got.seen |= 1u << i;
	}
	if (strcmp(got.disk_model, "none") != 0 &&
	    strcmp(got.disk_model, "hdd") != 0 &&
	    strcmp(got.disk_model, "ssd") != 0)
		return;
	*m = got;
}

/*
 * One line of blkparse's default output, or of ours (the same, with a
 * header, "lost N events" lines and C's wait and service):
 *
 *	MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS SECTOR + COUNT [COMM] ...
 *
 * Q and C make the requests; D, in our format, the dispatches whose
 * service times give the host overhead; other actions and blkparse's
 * closing summary are skipped.  Split by hand: sscanf was most of the
 * time of a replay.
 */
static int parse_blk(struct replay_parser *p, char *line, size_t len,
		     char *err, size_t size)
{
	const char *end = line + len;
	char *f[REPLAY_FIELDS], *rwbs;
	uint64_t v, sector, nr, t_ns;
	struct replay_rq *rq;
	uint32_t proc;
	unsigned n;
	char action;
	bool write = false, has_d = false, has_r = false, has_s = false;
	int64_t pid;

	/* First characters first: strncmp on every line costs. */
	if (line[0] == '#') {
		if (p->ours && strncmp(line, PARSE_MOUNT, strlen(PARSE_MOUNT)) == 0)
			parse_mount(&p->t->mount, line + strlen(PARSE_MOUNT));
		return 0;
	}
	if (line[0] == 'l' && strncmp(line, "lost ", 5) == 0) {
		char what[96];

		snprintf(what, sizeof what, "%.40s: the trace misses them",
			 line);
		return parse_doubt(p, err, size, what);
	}
	if (p->summary || (line[0] == 'C' && strncmp(line, "CPU", 3) == 0) ||
	    (line[0] == 'T' && strncmp(line, "Total", 5) == 0)) {
		p->summary = true;
		return 0;
	}
	n = parse_fields(line, f, REPLAY_FIELDS);
	if (n < 6 || !parse_dev(f[0]) || !parse_u64(f[1], &v) ||
	    !parse_u64(f[2], &v) || !parse_seconds(f[3], &t_ns) ||
	    !parse_u64(f[4] + (f[4][0] == '-'), &v) || v > INT32_MAX)
		return parse_error(p, err, size, "malformed line");
	pid = f[4][0] == '-' ? -(int64_t)v : (int64_t)v;
	action = f[5][0];
	/* Requests are replayed in time order all the same: a warning. */
	if (t_ns < p->prev_ns) {
		char what[128];

		snprintf(what, sizeof what, "time goes back from %" PRIu64
			 ".%09" PRIu64 " to %s s", p->prev_ns / 1000000000u,
			 p->prev_ns % 1000000000u, f[3]);
		parse_warn(p, what);
	}
	p->prev_ns = t_ns;
	if (f[5][1] != '\0' || action == '\0' ||
	    strchr(p->ours ? REPLAY_OUR_ACTIONS : REPLAY_BLK_ACTIONS,
		   action) == NULL) {
		char what[64];

		snprintf(what, sizeof what, "unknown action %.8s: skipped",
			 f[5]);
		parse_warn(p, what);
		return 0;
	}
	if (action != 'Q' && action != 'C' && action != 'D')
		return 0;
	if (n < 10 || strlen(f[6]) > 11 || !parse_u64(f[7], &sector) ||
	    strcmp(f[8], "+") != 0 || !parse_u64(f[9], &nr))
		return parse_error(p, err, size, "malformed Q or C event");
	for (rwbs = f[6]; *rwbs != '\0'; rwbs++) {
		has_d |= *rwbs == 'D';
		has_r |= *rwbs == 'R';
		write |= *rwbs == 'W';
		has_s |= *rwbs == 'S';
	}
	/* Discards, flushes without data and the like: not ours to model. */
	if (has_d || nr == 0 || (!has_r && !write))
		return 0;
	if (nr > UINT32_MAX)
		nr = UINT32_MAX;
	if (t_ns > p->last_ns)
		p->last_ns = t_ns;
	if (p->first && action != 'Q')
		return 0;
	if (action == 'D') {
		if (p->ours && parse_dispatched(p, write, sector, (uint32_t)nr,
				      t_ns) != 0)
			return parse_error(p, err, size, "out of memory");
		return 0;
	}
	if (action == 'C') {
		/* What follows the count: the fields split off end there. */
		const char *rest = f[9] + strlen(f[9]);

		/* blkparse's C has "[0]" after the count, ours "[comm]". */
		if (p->detected && !p->ours && !p->headless &&
		    rest < end && parse_c_wait(rest + 1) != UINT64_MAX) {
			p->headless = true;
			if (parse_doubt(p, err, size, "a fuse-iosched trace "
					 "without its first line, read as "
					 "blkparse (--format fuse-iosched "
					 "reads it as ours)") != 0)
				return -1;
		}
		parse_complete(p, write, sector, nr, t_ns);
		parse_dispatch_done(p, write, sector, (uint32_t)nr, t_ns,
				     rest < end ? rest + 1 : NULL);
		if (parse_c_failed(rest < end ? rest + 1 : NULL, p->ours))
			p->t->nr_failed++;
		return 0;
	}
	if (parse_proc(p, pid, &proc) != 0 ||
	    (rq = parse_add(p, t_ns)) == NULL)
		return parse_error(p, err, size, "out of memory");
	rq->sector = sector;
	rq->nr_sectors = (uint32_t)nr;
	rq->proc = proc;
	rq->write = write;
	/*
	 * A write's S is the kernel's REQ_SYNC: O_SYNC, O_DSYNC, O_DIRECT
	 * (sync_write).  Ours also waits, as the mount's request_is_sync() says,
	 * for a process's write without S: writeback_cache sends the others
	 * from the kernel, pid 0.
	 */
	rq->sync_write = write && has_s;
	rq->sync = !write || rq->sync_write ||
		   (pid > 0 && p->ours);
	rq->abs_ns = t_ns;
	parse_pend(p, p->t->nr - 1);
	return 0;
}

/*
 * Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime: times in
 * Windows filetime units of 100 ns, offsets and sizes in bytes.  Each
 * host and disk is one process: the format names no process.
 */
static int parse_msr(struct replay_parser *p, char *line, char *err,
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
			return parse_error(p, err, size,
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
			return parse_error(p, err, size,
					   "malformed line: not a number");
	}
	if (strcasecmp(f[3], "Read") == 0)
		write = false;
	else if (strcasecmp(f[3], "Write") == 0)
		write = true;
	else
		return parse_error(p, err, size,
				   "malformed line: Type is not Read or Write");
	if (v[5] == 0)
		return 0;
	/* FNV-1a of host and disk. */
	for (s = f[1]; *s != '\0'; s++)
		key = (key ^ (unsigned char)*s) * 1099511628211ull;
	key = (key ^ v[2]) * 1099511628211ull;
	if (parse_proc(p, (int64_t)(key >> 1), &proc) != 0 ||
	    (rq = parse_add(p, v[0] * REPLAY_FILETIME_NS)) == NULL)
		return parse_error(p, err, size, "out of memory");
	rq->sector = v[4] >> IOSCHED_SECTOR_SHIFT;
	rq->nr_sectors = (uint32_t)((v[5] + 511) >> IOSCHED_SECTOR_SHIFT);
	rq->proc = proc;
	rq->write = write;
	rq->sync = true;
	rq->abs_ns = v[0] * REPLAY_FILETIME_NS;
	p->done_ns[p->t->nr - 1] = (v[0] + v[6]) * REPLAY_FILETIME_NS;
	if (p->done_ns[p->t->nr - 1] > p->last_ns)
		p->last_ns = p->done_ns[p->t->nr - 1];
	return 0;
}

static bool parse_is_msr_line(const char *line)
{
	unsigned commas = 0;

	if (!isdigit((unsigned char)line[0]))
		return false;
	for (; *line != '\0'; line++)
		commas += *line == ',';
	return commas == 6;
}

/* The format of a file from its first meaningful line, or NULL. */
static const char *parse_detect(const char *line)
{
	unsigned a, b, c;

	if (strncmp(line, "# fuse-iosched trace", 20) == 0)
		return "fuse-iosched";
	if (parse_is_msr_line(line))
		return "msr";
	if (sscanf(line, " %u,%u %u", &a, &b, &c) == 3)
		return "blkparse";
	return NULL;
}

static void parse_set_format(struct replay_parser *p)
{
	p->ours = strcmp(p->t->format, "fuse-iosched") == 0;
	p->msr = strcmp(p->t->format, "msr") == 0;
}

bool parse_format_valid(const char *name)
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
static void parse_think_times(struct replay_parser *p)
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

static int parse_cmp_time(const void *a, const void *b)
{
	const struct replay_rq *x = a, *y = b;

	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	/* Stable: the order of the file. */
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int parse_trace(const char *path, const char *format, bool force,
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
	p->force = force;
	fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	if (fp == NULL) {
		snprintf(err, size, "%s: %s", path, strerror(errno));
		free(p);
		return -1;
	}
	t->format = strcmp(format, "auto") == 0 ? NULL : format;
	if (t->format != NULL)
		parse_set_format(p);
	while (ret == 0 && fgets(line, sizeof line, fp) != NULL) {
		size_t len = strlen(line);

		p->line++;
		if (len == sizeof line - 1 && line[len - 1] != '\n') {
			ret = parse_error(p, err, size, "line too long");
			break;
		}
		while (len > 0 && (line[len - 1] == '\n' ||
				   line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		if (t->format == NULL) {
			t->format = parse_detect(line);
			p->detected = true;
			if (t->format == NULL) {
				ret = parse_error(p, err, size,
						  "unknown trace format");
				break;
			}
			parse_set_format(p);
		}
		/* MSR files may start with the column names. */
		if (p->msr && strncmp(line, "Timestamp,", 10) == 0)
			continue;
		if (p->msr)
			ret = parse_msr(p, line, err, size);
		else
			ret = parse_blk(p, line, len, err, size);
	}
	if (p->nr_warned > REPLAY_WARN_MAX)
		fprintf(stderr, "fuse-iosched-replay: %s: %u more warnings\n",
			path, p->nr_warned - REPLAY_WARN_MAX);
	if (ret == 0 && ferror(fp))
		ret = parse_error(p, err, size, strerror(errno));
	if (fp != stdin)
		fclose(fp);
	if (ret == 0 && t->nr == 0) {
		snprintf(err, size, "%s: no requests", path);
		ret = -1;
	}
	if (ret == 0) {
		bool sorted = true;

		parse_think_times(p);
		t->span_ns = p->last_ns > p->t0 ? p->last_ns - p->t0 : 0;
		for (i = 0; i < t->nr; i++) {
			t->rq[i].seq = i;
			if (i > 0 && t->rq[i].time_ns < t->rq[i - 1].time_ns)
				sorted = false;
		}
		/* Traces are nearly always in order already. */
		if (!sorted)
			qsort(t->rq, t->nr, sizeof t->rq[0], parse_cmp_time);
	}
	free(p->done_ns);
	free(p->proc_slot);
	free(p);
	if (ret != 0)
		parse_trace_free(t);
	return ret;
}

void parse_trace_free(struct replay_trace *t)
{
	free(t->rq);
	free(t->disp);
	free(t->procs);
	memset(t, 0, sizeof *t);
}
