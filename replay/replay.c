/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-iosched-replay: put a recorded workload through each scheduler, in
 * simulated time, and compare them (see fuse-iosched-replay(1)).
 *
 * main() reads the options (the mount's own -o settings for the module
 * directory, the disk model and nr_requests, through config.c, so that a
 * replay sees what a mount would), loads the modules, parses each trace
 * and prints one row per scheduler: as a table, as JSON, and with --plot
 * as gnuplot data and PNGs.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "replay.h"

extern char **environ;

#define REPLAY_MAX_SCHEDS 64

struct replay_main {
	struct config cfg;
	struct replay_opts o;
	const char *scheds;	/* -s, or NULL: every scheduler */
	const char *format;
	const char *plot;
	const char *model;	/* -m, or NULL: -o disk_model, else hdd */
	const char *overhead;	/* --overhead: "auto" or microseconds */
	bool json;
	bool force;		/* --force: replay a doubtful trace */
	bool has_lat[2];	/* --plot: some reads, some writes */
	const struct elevator_type *types[REPLAY_MAX_SCHEDS];
	unsigned nr_types;
};

static void replay_usage(FILE *fp)
{
	fprintf(fp,
"usage: fuse-iosched-replay [-s SCHED[,SCHED...]] [-m none|hdd|ssd]\n"
"           [-o TUNABLE=VALUE]... [--closed-loop [--time-based[=SECONDS]]]\n"
"           [--overhead=auto|US] [--json] [--plot PREFIX]\n"
"           [--format auto|fuse-iosched|blkparse|msr] [--cost] [--force]\n"
"           TRACE...\n\n"
"Replay each TRACE through each scheduler in simulated time and print, per\n"
"scheduler: requests, merges, MiB/s, read and write latency p50/p99/max,\n"
"Jain's fairness index over processes.\n\n"
"    -s, --scheduler=LIST   schedulers to compare (default: all)\n"
"    -m, --model=MODEL      disk model: hdd (default), ssd or none\n"
"    -o NAME=VALUE          a scheduler tunable, or a mount option:\n"
"                           seek_ms, rpm, mb_per_s, ssd_channels,\n"
"                           ssd_read_us, ssd_mb_per_s, ssd_buffer_mib,\n"
"                           ssd_drain_mb_per_s, nr_requests, threads,\n"
"                           disk_model, module_dir, config\n"
"        --closed-loop      issue a process's next request when its\n"
"                           previous one completed, plus its think time\n"
"        --time-based[=S]   closed loop for S seconds (default: as long\n"
"                           as the trace), each process starting again\n"
"                           from its first request at its last\n"
"        --overhead=US      host time per request after its service\n"
"                           (default auto: from a trace of ours, else 0)\n"
"        --json             one JSON object per scheduler\n"
"        --plot=PREFIX      latency CDFs and throughput, gnuplot PNGs\n"
"        --format=FORMAT    trace format (default: auto)\n"
"        --cost             add the scheduler's CPU time per request\n"
"                           (measured: not the same from run to run)\n"
"        --force            replay a trace with lost events, or ours\n"
"                           without its first line\n"
"    -h, --help             this help\n");
}

/* The mount's settings a replay uses; --help and the page list them. */
static const char *const replay_settings[] = {
	"seek_ms", "rpm", "mb_per_s", "ssd_channels", "ssd_read_us",
	"ssd_mb_per_s", "ssd_buffer_mib", "ssd_drain_mb_per_s", "nr_requests",
	"threads", "disk_model", "module_dir", "config",
};

/*
 * -o: the mount's settings go to config.c, the rest are tunables.  A
 * setting the replay does not use (log, scheduler, ...) is refused
 * rather than ignored, so that nobody believes it took effect.
 */
static int replay_option_one(struct replay_main *m, const char *opt)
{
	char err[CONFIG_ERR_MAX];
	size_t len = strcspn(opt, "=");
	bool used = false;
	char **n;
	unsigned i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(replay_settings); i++)
		used |= strlen(replay_settings[i]) == len &&
			strncmp(opt, replay_settings[i], len) == 0;
	if (!used && strncmp(opt, "scheduler=", 10) == 0) {
		fprintf(stderr, "fuse-iosched-replay: -o %s: not a replay "
			"option: -s %s names the schedulers to compare\n", opt,
			opt + 10);
		return -1;
	}
	ret = config_option(&m->cfg, opt, err, sizeof err);
	if (ret < 0) {
		fprintf(stderr, "fuse-iosched-replay: %s\n", err);
		return -1;
	}
	if (ret == 0 && !used) {
		fprintf(stderr, "fuse-iosched-replay: -o %s: a mount option "
			"the replay does not use\n", opt);
		return -1;
	}
	if (ret == 0)
		return 0;
	if (strchr(opt, '=') == NULL || opt[0] == '=') {
		fprintf(stderr, "fuse-iosched-replay: -o %s: want "
			"TUNABLE=VALUE\n", opt);
		return -1;
	}
	n = realloc(m->o.tunables, (m->o.nr_tunables + 1) * sizeof *n);
	if (n == NULL)
		return -1;
	m->o.tunables = n;
	n[m->o.nr_tunables++] = (char *)opt;
	return 0;
}

/* -o A,B,...: each in turn, as the mount takes them. */
static int replay_option(struct replay_main *m, char *opts)
{
	char *opt, *save;

	for (opt = strtok_r(opts, ",", &save); opt != NULL;
	     opt = strtok_r(NULL, ",", &save))
		if (replay_option_one(m, opt) != 0)
			return -1;
	return 0;
}

/* Every registered scheduler, in the registry's order. */
static void replay_all_types(struct replay_main *m)
{
	const struct elevator_type *type;

	while (m->nr_types < REPLAY_MAX_SCHEDS &&
	       (type = elv_nth(m->nr_types)) != NULL)
		m->types[m->nr_types++] = type;
}

static int replay_pick_types(struct replay_main *m)
{
	char *list, *name, *save;

	if (m->scheds == NULL) {
		replay_all_types(m);
		return 0;
	}
	list = strdup(m->scheds);
	if (list == NULL)
		return -1;
	for (name = strtok_r(list, ",", &save); name != NULL;
	     name = strtok_r(NULL, ",", &save)) {
		const struct elevator_type *type = elv_get(name);

		if (type == NULL) {
			fprintf(stderr, "fuse-iosched-replay: no scheduler "
				"%s in %s\n", name, m->cfg.module_dir);
			free(list);
			return -1;
		}
		if (m->nr_types < REPLAY_MAX_SCHEDS)
			m->types[m->nr_types++] = type;
	}
	free(list);
	return 0;
}

/*
 * Every -o tunable must belong to one of the schedulers compared, with a
 * value in its range there: refused before any output, with the range.
 */
static int replay_check_tunables(const struct replay_main *m)
{
	unsigned i, j;

	for (i = 0; i < m->o.nr_tunables; i++) {
		const char *opt = m->o.tunables[i], *eq = strchr(opt, '=');
		char name[64], *end;
		bool known = false;
		long long v;

		snprintf(name, sizeof name, "%.*s", (int)(eq - opt), opt);
		errno = 0;
		v = strtoll(eq + 1, &end, 10);
		for (j = 0; j < m->nr_types; j++) {
			const struct elv_tunable *t =
				elv_tunable_find(m->types[j], name);

			if (t == NULL)
				continue;
			known = true;
			if (errno == 0 && end != eq + 1 && *end == '\0' &&
			    v >= t->min && v <= t->max)
				continue;
			fprintf(stderr, "fuse-iosched-replay: -o %s: %s's %s "
				"is an integer from %" PRId64 " to %" PRId64
				"%s%s\n", opt, m->types[j]->name, name, t->min,
				t->max, t->unit != NULL ? " " : "",
				t->unit != NULL ? t->unit : "");
			return -1;
		}
		if (!known) {
			fprintf(stderr, "fuse-iosched-replay: -o %s: no such "
				"option or tunable of the schedulers "
				"compared\n", opt);
			return -1;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Output.                                                             */

/* The latency at quantile num/den, in ms. */
static double replay_quantile(const struct replay_result *r, int dir,
			      unsigned num, unsigned den)
{
	size_t n = r->nr_lat[dir], i;

	if (n == 0)
		return 0;
	i = (n * num + den - 1) / den;
	return (double)r->lat[dir][i > 0 ? i - 1 : 0] / 1e6;
}

static double replay_mib_s(const struct replay_result *r)
{
	uint64_t span = r->end_ns - r->start_ns;

	return span == 0 ? 0 : (double)r->bytes / 1048576.0 /
			       ((double)span / 1e9);
}

static const char *const replay_columns[] = {
	"scheduler", "requests", "merges", "mib_s",
	"read_p50_ms", "read_p99_ms", "read_max_ms",
	"write_p50_ms", "write_p99_ms", "write_max_ms", "jain", "cost_ns",
};

/* The length of the UTF-8 sequence at s (RFC 3629), or 0 if it is not one. */
static size_t replay_utf8_len(const unsigned char *s)
{
	static const struct {
		unsigned char lead_min, lead_max, len, next_min, next_max;
	} seqs[] = {
		{ 0xc2, 0xdf, 2, 0x80, 0xbf },
		{ 0xe0, 0xe0, 3, 0xa0, 0xbf },	/* no overlong forms */
		{ 0xe1, 0xec, 3, 0x80, 0xbf },
		{ 0xed, 0xed, 3, 0x80, 0x9f },	/* no surrogates */
		{ 0xee, 0xef, 3, 0x80, 0xbf },
		{ 0xf0, 0xf0, 4, 0x90, 0xbf },
		{ 0xf1, 0xf3, 4, 0x80, 0xbf },
		{ 0xf4, 0xf4, 4, 0x80, 0x8f },	/* up to U+10FFFF */
	};

	for (size_t i = 0; i < ARRAY_SIZE(seqs); i++) {
		if (s[0] < seqs[i].lead_min || s[0] > seqs[i].lead_max)
			continue;
		if (s[1] < seqs[i].next_min || s[1] > seqs[i].next_max)
			return 0;
		for (size_t j = 2; j < seqs[i].len; j++)
			if ((s[j] & 0xc0) != 0x80)
				return 0;
		return seqs[i].len;
	}
	return 0;
}

/*
 * s as a JSON string.  A path is bytes, not text: a byte that is not part
 * of UTF-8 is written as the lone surrogate U+DC00 + byte, as Python's
 * "surrogateescape" does, so os.fsencode() gives the path back intact.
 */
static void replay_json_string(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	putchar('"');
	while (*p != '\0') {
		size_t len = *p < 0x80 ? 1 : replay_utf8_len(p);

		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20)
			printf("\\u%04x", *p);
		else if (len == 0)
			printf("\\u%04x", 0xdc00 + *p);
		else
			fwrite(p, 1, len, stdout);
		p += len == 0 ? 1 : len;
	}
	putchar('"');
}

static void replay_row(const struct replay_main *m, const char *trace,
		       const struct replay_trace *t, const char *name,
		       const struct replay_result *r, bool first)
{
	double v[] = {
		replay_mib_s(r),
		replay_quantile(r, 0, 1, 2), replay_quantile(r, 0, 99, 100),
		replay_quantile(r, 0, 1, 1),
		replay_quantile(r, 1, 1, 2), replay_quantile(r, 1, 99, 100),
		replay_quantile(r, 1, 1, 1),
	};
	unsigned i;

	if (m->json) {
		printf("%s{\"trace\": ", first ? "" : ",\n");
		replay_json_string(trace);
		/* A scheduler's name is a C identifier (elv_name_valid). */
		printf(", \"%s\": \"%s\", \"%s\": %" PRIu64 ", \"%s\": %"
		       PRIu64, replay_columns[0], name, replay_columns[1],
		       r->requests, replay_columns[2], r->merges);
		printf(", \"failed\": %zu", t->nr_failed);
		printf(", \"%s\": %.2f", replay_columns[3], v[0]);
		for (i = 1; i < ARRAY_SIZE(v); i++)
			printf(", \"%s\": %.3f", replay_columns[3 + i], v[i]);
		printf(", \"%s\": %.4f", replay_columns[10], r->jain);
		printf(", \"read_overhead_ms\": %.3f, "
		       "\"write_overhead_ms\": %.3f, \"head_lag_ms\": %.3f, "
		       "\"idle_lag_ms\": %.3f",
		       (double)m->o.overhead_ns[0] / 1e6,
		       (double)m->o.overhead_ns[1] / 1e6,
		       (double)m->o.lag_ns[REPLAY_LAG_HEAD] / 1e6,
		       (double)m->o.lag_ns[REPLAY_LAG_ARRIVAL] / 1e6);
		if (m->o.cost)
			printf(", \"%s\": %.0f", replay_columns[11],
			       r->cost_ns);
		printf("}");
		return;
	}
	printf("%-13s %9" PRIu64 " %8" PRIu64 " %8.2f", name, r->requests,
	       r->merges, v[0]);
	for (i = 1; i < ARRAY_SIZE(v); i++)
		printf(" %12.3f", v[i]);
	printf(" %6.4f", r->jain);
	if (m->o.cost)
		printf(" %8.0f", r->cost_ns);
	printf("\n");
}

static void replay_header(const struct replay_main *m, const char *path,
			  const struct replay_trace *t)
{
	unsigned i;

	static const char *const models[] = { "none", "hdd", "ssd" };
	char loop[64] = "open loop";

	if (m->o.closed_loop && m->o.time_based)
		snprintf(loop, sizeof loop, "closed loop for %.3f s",
			 (double)(m->o.duration_ns ? m->o.duration_ns :
				  t->span_ns) / 1e9);
	else if (m->o.closed_loop)
		snprintf(loop, sizeof loop, "closed loop");
	printf("# %s: %s, %zu requests, %zu failed, %u processes, %s, disk "
	       "%s, host overhead %.3f ms read, %.3f ms write, lag %.3f ms "
	       "head, %.3f ms idle; ", path, t->format, t->nr, t->nr_failed,
	       t->nr_procs, loop, models[m->o.model],
	       (double)m->o.overhead_ns[0] / 1e6,
	       (double)m->o.overhead_ns[1] / 1e6,
	       (double)m->o.lag_ns[REPLAY_LAG_HEAD] / 1e6,
	       (double)m->o.lag_ns[REPLAY_LAG_ARRIVAL] / 1e6);
	/* On the same line: scripts take the columns from the second. */
	printf("settings (%s): disk_model %s", t->mount.set ?
	       "the trace's mount, where no option names them" :
	       "options and defaults", models[m->o.model]);
	if (m->o.model == REPLAY_MODEL_HDD)
		printf(" seek_ms %u rpm %u mb_per_s %u", m->o.seek_ms,
		       m->o.rpm, m->o.mb_per_s);
	else if (m->o.model == REPLAY_MODEL_SSD)
		printf(" ssd_channels %u ssd_read_us %u ssd_mb_per_s %u "
		       "ssd_buffer_mib %u ssd_drain_mb_per_s %u",
		       m->o.ssd.channels, m->o.ssd.read_us, m->o.ssd.mb_per_s,
		       m->o.ssd.buffer_mib, m->o.ssd.drain_mb_per_s);
	else
		printf(" mb_per_s %u", m->o.mb_per_s);
	printf(" threads %u nr_requests %u", m->o.threads, m->o.nr_requests);
	if (t->mount.set && t->mount.backing_io[0] != '\0')
		printf(" (recorded with backing_io %s)", t->mount.backing_io);
	printf("\n");
	printf("%-13s %9s %8s %8s", replay_columns[0], replay_columns[1],
	       replay_columns[2], replay_columns[3]);
	for (i = 4; i <= 9; i++)
		printf(" %12s", replay_columns[i]);
	printf(" %6s", replay_columns[10]);
	if (m->o.cost)
		printf(" %8s", replay_columns[11]);
	printf("\n");
}

/* ------------------------------------------------------------------ */
/* --plot: data files, a gnuplot script, and gnuplot if there is one.  */

static int replay_plot_data(FILE *lat, FILE *thr, const char *name,
			    const struct replay_result *r)
{
	static const char *const dirs[] = { "read", "write" };
	size_t i, step;
	int d;

	for (d = 0; d < 2; d++) {
		fprintf(lat, "# %s %s\n", name, dirs[d]);
		step = r->nr_lat[d] / 1000 + 1;
		for (i = 0; i < r->nr_lat[d]; i += step)
			fprintf(lat, "%.6f %.6f\n", (double)r->lat[d][i] / 1e6,
				(double)(i + 1) / (double)r->nr_lat[d]);
		if (r->nr_lat[d] > 0)
			fprintf(lat, "%.6f 1\n", (double)r->lat[d][r->nr_lat[d] -
								 1] / 1e6);
		else
			fprintf(lat, "0 0\n");
		fprintf(lat, "\n\n");
	}
	fprintf(thr, "# %s\n", name);
	for (i = 0; i < r->nr_buckets; i++)
		fprintf(thr, "%.6f %.3f\n", (double)(i * r->bucket_ns) / 1e9,
			(double)r->buckets[i] / 1048576.0 /
			((double)r->bucket_ns / 1e9));
	fprintf(thr, "\n\n");
	return ferror(lat) || ferror(thr) ? -1 : 0;
}

static int replay_plot_script(const struct replay_main *m, const char *p)
{
	char path[4096];
	unsigned i;
	int d;
	FILE *fp;

	snprintf(path, sizeof path, "%s.gp", p);
	fp = fopen(path, "we");
	if (fp == NULL)
		return -1;
	fprintf(fp, "# fuse-iosched-replay: gnuplot %s.gp\n"
		"set terminal png size 900,600\nset key bottom right\n"
		"set grid\nset logscale x\nset xlabel 'latency (ms)'\n"
		"set ylabel 'fraction of requests'\n", p);
	for (d = 0; d < 2; d++) {
		/* No point to draw: gnuplot would stop the script there. */
		if (!m->has_lat[d])
			continue;
		fprintf(fp, "set output '%s-%s-cdf.png'\nset title '%s "
			"latency CDF'\nplot ", p, d ? "write" : "read",
			d ? "write" : "read");
		for (i = 0; i < m->nr_types; i++)
			fprintf(fp, "%s'%s-latency.dat' index %u with lines "
				"title '%s'", i ? ", " : "", p, 2 * i + d,
				m->types[i]->name);
		fprintf(fp, "\n");
	}
	fprintf(fp, "unset logscale x\nset key top right\nset output "
		"'%s-throughput.png'\nset title 'throughput'\nset xlabel "
		"'time (s)'\nset ylabel 'MiB/s'\nplot ", p);
	for (i = 0; i < m->nr_types; i++)
		fprintf(fp, "%s'%s-throughput.dat' index %u with steps "
			"title '%s'", i ? ", " : "", p, i, m->types[i]->name);
	fprintf(fp, "\n");
	return fclose(fp) == 0 ? 0 : -1;
}

/* The last line of path with more than blanks and gnuplot's "^". */
static void replay_last_line(const char *path, char *buf, size_t size)
{
	char line[512];
	FILE *fp = fopen(path, "re");

	buf[0] = '\0';
	if (fp == NULL)
		return;
	while (fgets(line, sizeof line, fp) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (line[strspn(line, " \t^")] != '\0')
			snprintf(buf, size, "%s", line + strspn(line, " \t"));
	}
	fclose(fp);
}

/*
 * gnuplot, its messages in PREFIX-gnuplot.log; 0, or -1 after one line
 * with the last of them: gnuplot failed.
 */
static int replay_run_gnuplot(const char *p)
{
	char script[4096], log[4096], why[256];
	char *argv[] = { "gnuplot", script, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, ret;

	snprintf(script, sizeof script, "%s.gp", p);
	snprintf(log, sizeof log, "%s-gnuplot.log", p);
	if (posix_spawn_file_actions_init(&fa) != 0 ||
	    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, log,
					     O_WRONLY | O_CREAT | O_TRUNC,
					     0644) != 0) {
		fprintf(stderr, "fuse-iosched-replay: gnuplot %s.gp: out of "
			"memory\n", p);
		return -1;
	}
	ret = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret != 0) {
		fprintf(stderr, "fuse-iosched-replay: gnuplot %s: wrote %s.gp "
			"and its .dat files; run gnuplot %s.gp\n",
			ret == ENOENT ? "not found" : strerror(ret), p, p);
		return 0;
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		replay_last_line(log, why, sizeof why);
		fprintf(stderr, "fuse-iosched-replay: gnuplot %s.gp failed%s%s "
			"(its messages: %s)\n", p, why[0] ? ": " : "", why,
			log);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */

/* One trace through every scheduler; 0, or -1 after a message. */
static void replay_device(struct replay_main *m);

/*
 * A trace of ours says which mount it was recorded on: its disk model
 * and parameters, workers and nr_requests stand in for the defaults,
 * where -m, -o or the configuration file does not name them.
 */
static void replay_device_of(struct replay_main *m,
			     const struct replay_mount *t)
{
	struct replay_opts *o = &m->o;
	const struct config *c = &m->cfg;

	replay_device(m);
	if (!t->set)
		return;
	if (m->model == NULL && !config_named(c, "disk_model"))
		o->model = strcmp(t->disk_model, "ssd") == 0 ?
			   REPLAY_MODEL_SSD :
			   strcmp(t->disk_model, "hdd") == 0 ?
			   REPLAY_MODEL_HDD : REPLAY_MODEL_NONE;
	if ((t->seen & REPLAY_MOUNT_SEEK_MS) && !config_named(c, "seek_ms"))
		o->seek_ms = t->seek_ms;
	if ((t->seen & REPLAY_MOUNT_RPM) && !config_named(c, "rpm"))
		o->rpm = t->rpm;
	if ((t->seen & REPLAY_MOUNT_MB_PER_S) && !config_named(c, "mb_per_s"))
		o->mb_per_s = t->mb_per_s;
	if ((t->seen & REPLAY_MOUNT_SSD_CHANNELS) &&
	    !config_named(c, "ssd_channels"))
		o->ssd.channels = t->ssd_channels;
	if ((t->seen & REPLAY_MOUNT_SSD_READ_US) &&
	    !config_named(c, "ssd_read_us"))
		o->ssd.read_us = t->ssd_read_us;
	if ((t->seen & REPLAY_MOUNT_SSD_MB_PER_S) &&
	    !config_named(c, "ssd_mb_per_s"))
		o->ssd.mb_per_s = t->ssd_mb_per_s;
	if ((t->seen & REPLAY_MOUNT_SSD_BUFFER_MIB) &&
	    !config_named(c, "ssd_buffer_mib"))
		o->ssd.buffer_mib = t->ssd_buffer_mib;
	if ((t->seen & REPLAY_MOUNT_SSD_DRAIN) &&
	    !config_named(c, "ssd_drain_mb_per_s"))
		o->ssd.drain_mb_per_s = t->ssd_drain_mb_per_s;
	if ((t->seen & REPLAY_MOUNT_THREADS) && !config_named(c, "threads"))
		o->threads = t->threads;
	if ((t->seen & REPLAY_MOUNT_NR_REQUESTS) &&
	    !config_named(c, "nr_requests"))
		o->nr_requests = t->nr_requests;
}

static int replay_trace_run(struct replay_main *m, const char *path,
			    unsigned nth, FILE *lat, FILE *thr)
{
	struct replay_trace t;
	struct replay_result r;
	char err[512];
	unsigned i;

	if (parse_trace(path, m->format, m->force, &t, err,
			sizeof err) != 0) {
		fprintf(stderr, "fuse-iosched-replay: %s\n", err);
		return -1;
	}
	replay_device_of(m, &t.mount);
	if (strcmp(m->overhead, "auto") == 0)
		sim_host_times(&t, &m->o);
	if (!m->json)
		replay_header(m, path, &t);
	for (i = 0; i < m->nr_types; i++) {
		if (sim_run(&t, m->types[i], &m->o, &r, err,
			    sizeof err) != 0) {
			fprintf(stderr, "fuse-iosched-replay: %s: %s\n", path,
				err);
			sim_host_times_free(&m->o);
			parse_trace_free(&t);
			return -1;
		}
		replay_row(m, path, &t, m->types[i]->name, &r,
			   nth == 0 && i == 0);
		m->has_lat[0] |= r.nr_lat[0] > 0;
		m->has_lat[1] |= r.nr_lat[1] > 0;
		if (lat != NULL && replay_plot_data(lat, thr,
						    m->types[i]->name,
						    &r) != 0) {
			fprintf(stderr, "fuse-iosched-replay: --plot: %s\n",
				strerror(errno));
			sim_result_free(&r);
			sim_host_times_free(&m->o);
			parse_trace_free(&t);
			return -1;
		}
		sim_result_free(&r);
	}
	sim_host_times_free(&m->o);
	parse_trace_free(&t);
	return 0;
}

static FILE *replay_plot_open(const char *prefix, const char *what)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof path, "%s-%s.dat", prefix, what);
	fp = fopen(path, "we");
	if (fp == NULL)
		fprintf(stderr, "fuse-iosched-replay: %s: %s\n", path,
			strerror(errno));
	return fp;
}

enum {
	OPT_CLOSED = 256, OPT_TIME, OPT_OVERHEAD, OPT_JSON, OPT_PLOT,
	OPT_FORMAT, OPT_COST, OPT_FORCE,
};

static const struct option replay_long[] = {
	{ "scheduler", required_argument, NULL, 's' },
	{ "model", required_argument, NULL, 'm' },
	{ "closed-loop", no_argument, NULL, OPT_CLOSED },
	{ "time-based", optional_argument, NULL, OPT_TIME },
	{ "overhead", required_argument, NULL, OPT_OVERHEAD },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "cost", no_argument, NULL, OPT_COST },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A number of seconds (up to 9 decimals) or microseconds, in ns. */
static bool replay_number(const char *arg, uint64_t unit_ns, uint64_t *ns)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || !(v >= 0) ||
	    v * (double)unit_ns > 1e18)
		return false;
	*ns = (uint64_t)(v * (double)unit_ns + 0.5);
	return true;
}

static int replay_args(struct replay_main *m, int argc, char **argv)
{
	const char *duration = NULL;
	uint64_t ns;
	int c;

	while ((c = getopt_long(argc, argv, "s:m:o:h", replay_long,
				NULL)) != -1) {
		switch (c) {
		case 's': m->scheds = optarg; break;
		case 'm': m->model = optarg; break;
		case 'o':
			if (replay_option(m, optarg) != 0)
				return -1;
			break;
		case OPT_CLOSED: m->o.closed_loop = true; break;
		case OPT_TIME:
			m->o.time_based = true;
			duration = optarg;
			break;
		case OPT_OVERHEAD: m->overhead = optarg; break;
		case OPT_JSON: m->json = true; break;
		case OPT_PLOT:
			m->plot = optarg;
			m->o.plot = true;
			break;
		case OPT_FORMAT: m->format = optarg; break;
		case OPT_COST: m->o.cost = true; break;
		case OPT_FORCE: m->force = true; break;
		case 'h':
			replay_usage(stdout);
			exit(0);
		default:
			replay_usage(stderr);
			return -1;
		}
	}
	if (m->model != NULL && !diskmodel_name_valid(m->model)) {
		fprintf(stderr, "fuse-iosched-replay: -m %s: want none, hdd "
			"or ssd\n", m->model);
		return -1;
	}
	if (m->o.time_based && !m->o.closed_loop) {
		fprintf(stderr, "fuse-iosched-replay: --time-based needs "
			"--closed-loop\n");
		return -1;
	}
	if (duration != NULL && (!replay_number(duration, 1000000000u, &ns) ||
				 ns == 0)) {
		fprintf(stderr, "fuse-iosched-replay: --time-based=%s: want "
			"seconds, more than 0\n", duration);
		return -1;
	}
	if (duration != NULL)
		m->o.duration_ns = ns;
	if (strcmp(m->overhead, "auto") != 0) {
		if (!replay_number(m->overhead, 1000, &ns)) {
			fprintf(stderr, "fuse-iosched-replay: --overhead=%s: "
				"want auto or microseconds\n", m->overhead);
			return -1;
		}
		m->o.overhead_ns[0] = m->o.overhead_ns[1] = ns;
	}
	if (!parse_format_valid(m->format)) {
		fprintf(stderr, "fuse-iosched-replay: --format %s: want auto, "
			"fuse-iosched, blkparse or msr\n", m->format);
		return -1;
	}
	if (optind == argc) {
		replay_usage(stderr);
		return -1;
	}
	if (m->plot != NULL && argc - optind > 1) {
		fprintf(stderr, "fuse-iosched-replay: --plot takes one "
			"TRACE\n");
		return -1;
	}
	return 0;
}

/*
 * The device and queue the mount's settings describe.  The model is -m,
 * else -o disk_model (or the file's), else hdd; the workers are threads
 * if named, else 4 (the mount's least default), so that the output does
 * not depend on the machine's number of CPUs.
 */
static void replay_device(struct replay_main *m)
{
	const char *model = m->model;

	if (model == NULL)
		model = config_named(&m->cfg, "disk_model") ?
			m->cfg.disk_model : "hdd";
	m->o.model = strcmp(model, "ssd") == 0 ? REPLAY_MODEL_SSD :
		     strcmp(model, "hdd") == 0 ? REPLAY_MODEL_HDD :
		     REPLAY_MODEL_NONE;
	m->o.seek_ms = m->cfg.seek_ms;
	m->o.rpm = m->cfg.rpm;
	m->o.mb_per_s = m->cfg.mb_per_s;
	m->o.ssd = (struct diskmodel_ssd){
		.channels = m->cfg.ssd_channels,
		.read_us = m->cfg.ssd_read_us,
		.mb_per_s = m->cfg.ssd_mb_per_s,
		.buffer_mib = m->cfg.ssd_buffer_mib,
		.drain_mb_per_s = m->cfg.ssd_drain_mb_per_s,
	};
	m->o.nr_requests = m->cfg.nr_requests;
	m->o.threads = config_named(&m->cfg, "threads") ? m->cfg.threads : 4;
}

int main(int argc, char **argv)
{
	struct replay_main m = { .format = "auto", .overhead = "auto" };
	char err[CONFIG_ERR_MAX];
	FILE *lat = NULL, *thr = NULL;
	int status = 1, i;

	log_open(false, LOG_WARNING);
	if (config_init(&m.cfg) != 0)
		return 1;
	if (replay_args(&m, argc, argv) != 0)
		goto out;
	/* The module directory first, then everything, as the daemon. */
	if (config_load_early(&m.cfg, err, sizeof err) != 0) {
		fprintf(stderr, "fuse-iosched-replay: %s\n", err);
		goto out;
	}
	elv_register(elv_noop(), "built-in");
	module_set_dir(m.cfg.module_dir);
	module_load_all();
	if (config_load(&m.cfg, err, sizeof err) != 0 ||
	    config_apply_tunables(&m.cfg, err, sizeof err) != 0) {
		fprintf(stderr, "fuse-iosched-replay: %s\n", err);
		goto out;
	}
	replay_device(&m);
	if (replay_pick_types(&m) != 0 || replay_check_tunables(&m) != 0)
		goto out;
	if (m.plot != NULL) {
		lat = replay_plot_open(m.plot, "latency");
		thr = replay_plot_open(m.plot, "throughput");
		if (lat == NULL || thr == NULL)
			goto out;
	}
	if (m.json)
		printf("[\n");
	for (i = optind; i < argc; i++)
		if (replay_trace_run(&m, argv[i], (unsigned)(i - optind), lat,
				     thr) != 0)
			goto out;
	if (m.json)
		printf("\n]\n");
	status = 0;
	if (m.plot != NULL) {
		if (fclose(lat) != 0 || fclose(thr) != 0 ||
		    replay_plot_script(&m, m.plot) != 0) {
			fprintf(stderr, "fuse-iosched-replay: --plot %s: %s\n",
				m.plot, strerror(errno));
			status = 1;
		} else if (replay_run_gnuplot(m.plot) != 0) {
			status = 1;
		}
		lat = thr = NULL;
	}
	if (fflush(stdout) != 0)
		status = 1;
out:
	if (lat != NULL)
		fclose(lat);
	if (thr != NULL)
		fclose(thr);
	free(m.o.tunables);
	config_free(&m.cfg);
	module_unload_all();
	return status;
}
