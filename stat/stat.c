/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-iosched-stat: iostat -x for fuse-iosched mounts.
 *
 * Every interval it reads MOUNTPOINT/.control/stats and .control/scheduler
 * of each mount, and prints one line per mount with the rates of the
 * interval, computed from the differences of the counters.  It reads
 * .control/ only: whoever may read stats may run it.  With -g, a line per
 * control group follows each mount's, from the cgroup lines of stats,
 * the group's path in the last column.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STAT_BUF_SIZE 65536	/* more than .control/stats ever holds */
#define STAT_NAME_MAX 64
#define STAT_GROUPS 64		/* more than .control/stats shows */
#define STAT_WORD_MAX 256	/* a group's word there, cut at 200 */

/* One control group's counters (the cgroup lines), by its path's word. */
struct stat_group {
	char word[STAT_WORD_MAX];
	uint64_t ios[2];		/* completed: service counts */
	uint64_t bytes[2];		/* dispatched */
	uint64_t time_us[2];		/* wait + service */
};

/* The counters of one mount at one time. */
struct stat_sample {
	double t;			/* seconds, CLOCK_MONOTONIC */
	uint64_t ios[2];		/* I/Os completed: service counts */
	uint64_t time_us[2];		/* their wait + service time */
	uint64_t merges[2];
	uint64_t sectors[2];
	uint64_t busy_us;
	uint64_t depth_us;
	uint64_t switches;
	char scheduler[STAT_NAME_MAX];
	unsigned nr_groups;
	struct stat_group group[STAT_GROUPS];
};

struct stat_mount {
	const char *path;
	struct stat_sample last, now;
};

static const char *stat_prog = "fuse-iosched-stat";

static void __attribute__((noreturn)) stat_usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
		"usage: %s [-g] [-i SECONDS] [-c COUNT] MOUNTPOINT...\n"
		"  -g          a line per control group too, its path last\n"
		"  -i SECONDS  interval between reports (default 1)\n"
		"  -c COUNT    stop after COUNT reports (default: never)\n"
		"  -h          this help\n", stat_prog);
	exit(status);
}

static double stat_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read MNT/.control/NAME whole into buf (NUL-terminated); -errno. */
static int stat_read(const char *mnt, const char *name, char *buf,
		     size_t size)
{
	char path[4096];
	size_t len = 0;
	ssize_t n;
	int fd, err;

	if (snprintf(path, sizeof path, "%s/.control/%s", mnt, name) >=
	    (int)sizeof path)
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return 0;
}

/* The value after the word name on line (space-separated), or false. */
static bool stat_field(const char *line, const char *name, uint64_t *v)
{
	size_t len = strlen(name);
	const char *p = line;

	while ((p = strstr(p, name)) != NULL) {
		if ((p == line || p[-1] == ' ') && p[len] == ' ') {
			*v = strtoull(p + len + 1, NULL, 10);
			return true;
		}
		p += len;
	}
	return false;
}

static int stat_dir(const char *word)
{
	if (strcmp(word, "read") == 0)
		return 0;
	if (strcmp(word, "write") == 0)
		return 1;
	return -1;
}

/* The group of word in s, added if new; NULL when s has no room. */
static struct stat_group *stat_group(struct stat_sample *s, const char *word)
{
	unsigned i;

	for (i = 0; i < s->nr_groups; i++)
		if (strcmp(s->group[i].word, word) == 0)
			return &s->group[i];
	if (s->nr_groups == STAT_GROUPS)
		return NULL;
	snprintf(s->group[s->nr_groups].word, STAT_WORD_MAX, "%s", word);
	return &s->group[s->nr_groups++];
}

/* A cgroup, cgroup_wait or cgroup_service line: "KIND WORD DIR ...". */
static void stat_parse_group(const char *line, const char *kind,
			     struct stat_sample *s)
{
	char word[STAT_WORD_MAX], dir[8];
	struct stat_group *g;
	uint64_t v;
	int d;

	if (sscanf(line, "%*s %255s %7s", word, dir) != 2 ||
	    (d = stat_dir(dir)) < 0 || (g = stat_group(s, word)) == NULL)
		return;
	if (strcmp(kind, "cgroup") == 0 && stat_field(line, "bytes", &v))
		g->bytes[d] = v;
	if (strcmp(kind, "cgroup") != 0 && stat_field(line, "sum_us", &v))
		g->time_us[d] += v;
	if (strcmp(kind, "cgroup_service") == 0 &&
	    stat_field(line, "count", &v))
		g->ios[d] = v;
}

/* Parse the text of .control/stats; false if it is not one. */
static bool stat_parse(char *text, struct stat_sample *s)
{
	unsigned seen = 0;
	char *line, *save, first[16], second[16];
	uint64_t v;
	int d;

	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%15s %15s", first, second) != 2)
			continue;
		d = stat_dir(first);
		if (d >= 0 && stat_field(line, "merges", &s->merges[d]) &&
		    stat_field(line, "sectors", &s->sectors[d])) {
			seen |= 1u << d;
		} else if (strcmp(first, "switches") == 0) {
			s->switches = strtoull(second, NULL, 10);
			seen |= 4;
		} else if (strcmp(first, "queue") == 0 &&
			   stat_field(line, "busy_us", &s->busy_us) &&
			   stat_field(line, "depth_us", &s->depth_us)) {
			seen |= 8;
		} else if ((strcmp(first, "wait") == 0 ||
			    strcmp(first, "service") == 0) &&
			   (d = stat_dir(second)) >= 0 &&
			   stat_field(line, "sum_us", &v)) {
			s->time_us[d] += v;
			if (first[0] == 's' && stat_field(line, "count", &v))
				s->ios[d] += v;
			seen |= 16;
		} else if (strncmp(first, "cgroup", 6) == 0) {
			stat_parse_group(line, first, s);
		}
	}
	return seen == 31;
}

/* "noop [deadline] cfq": the name in brackets. */
static bool stat_parse_scheduler(const char *text, char *name, size_t size)
{
	const char *open = strchr(text, '['), *close;

	if (open == NULL || (close = strchr(open, ']')) == NULL ||
	    (size_t)(close - open - 1) >= size)
		return false;
	memcpy(name, open + 1, (size_t)(close - open - 1));
	name[close - open - 1] = '\0';
	return true;
}

/* Take a sample of mnt; on failure print why and return false. */
static bool stat_sample(const char *mnt, struct stat_sample *s)
{
	static char buf[STAT_BUF_SIZE];
	int err;

	memset(s, 0, sizeof *s);
	s->t = stat_now();
	err = stat_read(mnt, "stats", buf, sizeof buf);
	if (err == -ENOENT || err == -ENOTDIR) {
		fprintf(stderr, "%s: %s: not a fuse-iosched mount "
			"(no %s/.control/stats)\n", stat_prog, mnt, mnt);
		return false;
	}
	if (err != 0) {
		fprintf(stderr, "%s: %s/.control/stats: %s\n", stat_prog, mnt,
			strerror(-err));
		return false;
	}
	if (!stat_parse(buf, s)) {
		fprintf(stderr, "%s: %s: not a fuse-iosched mount (%s/.control/"
			"stats is not in its format)\n", stat_prog, mnt, mnt);
		return false;
	}
	err = stat_read(mnt, "scheduler", buf, sizeof buf);
	if (err != 0) {
		fprintf(stderr, "%s: %s/.control/scheduler: %s\n", stat_prog,
			mnt, strerror(-err));
		return false;
	}
	if (!stat_parse_scheduler(buf, s->scheduler, sizeof s->scheduler)) {
		fprintf(stderr, "%s: %s: no active scheduler in "
			"%s/.control/scheduler\n", stat_prog, mnt, mnt);
		return false;
	}
	return true;
}

/* The Mount column: as wide as the longest mount point, 20 at least. */
static int stat_width = 20;
static bool stat_groups;	/* -g */

static void stat_header(void)
{
	printf("%-*s %9s %9s %10s %10s %8s %8s %8s %8s %7s %6s %s%s\n",
	       stat_width, "Mount", "r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s",
	       "wrqm/s", "r_await", "w_await", "aqu-sz", "%util", "scheduler",
	       stat_groups ? " cgroup" : "");
}

/* Average time of an I/O in milliseconds; 0 without I/O. */
static double stat_await(uint64_t dtime_us, uint64_t dios)
{
	return dios == 0 ? 0 : (double)dtime_us / 1000 / (double)dios;
}

static void stat_report(const char *mnt, const struct stat_sample *a,
			const struct stat_sample *b)
{
	double dt = b->t - a->t, util;
	uint64_t dios[2], dtime[2];
	int d;

	if (dt <= 0)
		dt = 1e-9;
	for (d = 0; d < 2; d++) {
		dios[d] = b->ios[d] - a->ios[d];
		dtime[d] = b->time_us[d] - a->time_us[d];
	}
	util = (double)(b->busy_us - a->busy_us) / (dt * 1e6) * 100;
	if (util > 100)
		util = 100;	/* busy time is read a little after t */
	printf("%-*s %9.2f %9.2f %10.2f %10.2f %8.2f %8.2f %8.2f %8.2f "
	       "%7.2f %6.2f %s%s\n", stat_width, mnt,
	       (double)dios[0] / dt, (double)dios[1] / dt,
	       (double)(b->sectors[0] - a->sectors[0]) / 2 / dt,
	       (double)(b->sectors[1] - a->sectors[1]) / 2 / dt,
	       (double)(b->merges[0] - a->merges[0]) / dt,
	       (double)(b->merges[1] - a->merges[1]) / dt,
	       stat_await(dtime[0], dios[0]), stat_await(dtime[1], dios[1]),
	       (double)(b->depth_us - a->depth_us) / (dt * 1e6),
	       util, b->scheduler,
	       b->switches != a->switches ? "*" : "");
}

/*
 * -g: a line per group of b, its rates since a (from zero for a group
 * new since then); what has no per-group counter is "-".
 */
static void stat_report_groups(const char *mnt, const struct stat_sample *a,
			       const struct stat_sample *b)
{
	static const struct stat_group none;
	const struct stat_group *g, *was;
	double dt = b->t - a->t;
	uint64_t dios[2];
	unsigned i, j;
	int d;

	if (dt <= 0)
		dt = 1e-9;
	for (i = 0; i < b->nr_groups; i++) {
		g = &b->group[i];
		was = &none;
		for (j = 0; j < a->nr_groups; j++)
			if (strcmp(a->group[j].word, g->word) == 0)
				was = &a->group[j];
		/* A group that lost its slot and came back starts again. */
		if (g->ios[0] < was->ios[0] || g->ios[1] < was->ios[1] ||
		    g->bytes[0] < was->bytes[0] || g->bytes[1] < was->bytes[1])
			was = &none;
		for (d = 0; d < 2; d++)
			dios[d] = g->ios[d] - was->ios[d];
		printf("%-*s %9.2f %9.2f %10.2f %10.2f %8s %8s %8.2f %8.2f "
		       "%7s %6s %s %s\n", stat_width, mnt,
		       (double)dios[0] / dt, (double)dios[1] / dt,
		       (double)(g->bytes[0] - was->bytes[0]) / 1024 / dt,
		       (double)(g->bytes[1] - was->bytes[1]) / 1024 / dt,
		       "-", "-",
		       stat_await(g->time_us[0] - was->time_us[0], dios[0]),
		       stat_await(g->time_us[1] - was->time_us[1], dios[1]),
		       "-", "-", "-", g->word);
	}
}

/* A positive number of seconds, at most a day. */
static bool stat_parse_interval(const char *arg, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	return errno == 0 && end != arg && *end == '\0' && *v >= 0.01 &&
	       *v <= 86400;
}

static bool stat_parse_count(const char *arg, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(arg, &end, 10);
	return errno == 0 && end != arg && *end == '\0' && arg[0] != '-' &&
	       *v > 0;
}

static void stat_sleep(double seconds)
{
	struct timespec ts = {
		.tv_sec = (time_t)seconds,
		.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9),
	};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	struct stat_mount *mounts;
	unsigned long count = 0, n;
	double interval = 1;
	int c, i, nr, status = 1;

	while ((c = getopt(argc, argv, "gi:c:h")) != -1) {
		switch (c) {
		case 'g':
			stat_groups = true;
			break;
		case 'i':
			if (!stat_parse_interval(optarg, &interval)) {
				fprintf(stderr, "%s: -i %s: not a number of "
					"seconds from 0.01 to 86400\n",
					stat_prog, optarg);
				return 2;
			}
			break;
		case 'c':
			if (!stat_parse_count(optarg, &count)) {
				fprintf(stderr, "%s: -c %s: not a positive "
					"count\n", stat_prog, optarg);
				return 2;
			}
			break;
		case 'h':
			stat_usage(0);
		default:
			stat_usage(2);
		}
	}
	nr = argc - optind;
	if (nr < 1)
		stat_usage(2);
	mounts = calloc((size_t)nr, sizeof *mounts);
	if (mounts == NULL) {
		fprintf(stderr, "%s: out of memory\n", stat_prog);
		return 1;
	}
	/* Check every mount before the first interval. */
	for (i = 0; i < nr; i++) {
		mounts[i].path = argv[optind + i];
		if (!stat_sample(mounts[i].path, &mounts[i].last))
			goto out;
		if (strlen(mounts[i].path) > (size_t)stat_width)
			stat_width = (int)strlen(mounts[i].path);
	}
	for (n = 0; count == 0 || n < count; n++) {
		stat_sleep(interval);
		/* Every mount first: a report is whole, or not printed. */
		for (i = 0; i < nr; i++)
			if (!stat_sample(mounts[i].path, &mounts[i].now))
				goto out;
		stat_header();
		for (i = 0; i < nr; i++) {
			stat_report(mounts[i].path, &mounts[i].last,
				    &mounts[i].now);
			if (stat_groups)
				stat_report_groups(mounts[i].path,
						   &mounts[i].last,
						   &mounts[i].now);
			mounts[i].last = mounts[i].now;
		}
		printf("\n");
		fflush(stdout);
	}
	status = 0;
out:
	free(mounts);
	return status;
}
