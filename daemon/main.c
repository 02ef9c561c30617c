/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-iosched: mount BACKING on MOUNTPOINT through FUSE, with every read
 * and write going through a switchable I/O scheduler.
 *
 * main() parses the command line, checks everything that can be checked
 * before mounting (so that a mistake is one clear line and exit status 1,
 * with nothing mounted), mounts, daemonizes unless -f, starts the timer and
 * the dispatch workers, and serves FUSE until unmounted or signalled.  On
 * the way out the queue is drained, so every request gets its answer
 * before the mount goes away.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"

enum {
	MAIN_KEY_PRINT_CONFIG,
	MAIN_KEY_RO,
	MAIN_KEY_RW,
	MAIN_KEY_MAX_READ,
};

static const struct fuse_opt main_opts[] = {
	FUSE_OPT_KEY("--print-config", MAIN_KEY_PRINT_CONFIG),
	/* Not the kernel's: the daemon enforces it (struct fs, readonly). */
	FUSE_OPT_KEY("ro", MAIN_KEY_RO),
	FUSE_OPT_KEY("rw", MAIN_KEY_RW),
	FUSE_OPT_KEY("max_read=", MAIN_KEY_MAX_READ),
	FUSE_OPT_END
};

struct main_args {
	struct config *cfg;
	bool print_config;
	bool readonly;
};

static void main_usage(const char *prog)
{
	printf("usage: %s [options] BACKING MOUNTPOINT\n"
	       "       %s --print-config [options] [BACKING MOUNTPOINT]\n\n",
	       prog, prog);
	printf(
"Mount the directory BACKING on MOUNTPOINT; every read and write goes\n"
"through an I/O scheduler that MOUNTPOINT/.control/scheduler switches.\n\n"
"fuse-iosched options (they override the configuration file):\n"
"    --print-config         print the configuration a mount would use, and\n"
"                           exit\n"
"    -o config=PATH         configuration file (default: " CONFIG_FILE ",\n"
"                           if it exists)\n");
	config_usage(stdout);
	printf(
"Options mount(8) passes from fstab (defaults, nofail, noauto, _netdev,\n"
"user, relatime, x-*, ...) are accepted and ignored.\n\n");
	config_usage_reload(stdout);
	putchar('\n');
	fuse_cmdline_help();
	fuse_lowlevel_help();
}

/*
 * -o max_read=N is libfuse's (it passes it to the kernel), but libfuse
 * also requires the filesystem's init to ask for the same value, or it
 * ends the session at FUSE_INIT, after mounting: it is read here for
 * fs_ops_init, checked as strictly as our options, and kept for libfuse.
 */
static int main_max_read(struct config *cfg, const char *arg)
{
	const char *value = arg + strlen("max_read=");
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(value, &end, 10);
	if (*value < '0' || *value > '9' || *end != '\0' || errno != 0 ||
	    n > UINT_MAX) {
		fprintf(stderr, "fuse-iosched: %s: not a number from 0 to "
			"%u\n", arg, UINT_MAX);
		return -1;
	}
	cfg->max_read = (unsigned)n;
	return 1;
}

/* Our -o options, --print-config and the two positional arguments. */
static int main_opt_proc(void *data, const char *arg, int key,
			 struct fuse_args *outargs)
{
	struct main_args *ma = data;
	struct config *cfg = ma->cfg;
	char err[CONFIG_ERR_MAX];
	char **slot;
	int ret;

	if (key == MAIN_KEY_PRINT_CONFIG) {
		ma->print_config = true;
		return 0;
	}
	if (key == MAIN_KEY_RO || key == MAIN_KEY_RW) {
		ma->readonly = key == MAIN_KEY_RO;
		return 0;
	}
	if (key == MAIN_KEY_MAX_READ)
		return main_max_read(cfg, arg);
	if (key == FUSE_OPT_KEY_OPT) {
		ret = config_option(cfg, arg, err, sizeof err);
		if (ret < 0)
			fprintf(stderr, "fuse-iosched: %s\n", err);
		return ret;
	}
	if (key != FUSE_OPT_KEY_NONOPT)
		return 1;
	slot = cfg->backing == NULL ? &cfg->backing :
	       cfg->mountpoint == NULL ? &cfg->mountpoint : NULL;
	if (slot == NULL) {
		fprintf(stderr, "fuse-iosched: unexpected argument '%s'\n", arg);
		return -1;
	}
	*slot = strdup(arg);
	return *slot == NULL ? -1 : 0;
}

/* Replace *path by its absolute, resolved form. */
static int main_absolute(char **path)
{
	char *abs = realpath(*path, NULL);

	if (abs == NULL) {
		fprintf(stderr, "fuse-iosched: %s: %s\n", *path,
			strerror(errno));
		return -1;
	}
	free(*path);
	*path = abs;
	return 0;
}

/* Checks that need no mount; each failure is one line on stderr. */
static int main_check(struct config *cfg, int *root_fd)
{
	struct stat st;
	int fd;

	if (cfg->backing == NULL || cfg->mountpoint == NULL) {
		fprintf(stderr, "fuse-iosched: usage: fuse-iosched [options] "
			"BACKING MOUNTPOINT (see --help)\n");
		return -1;
	}
	/* Reading the directory proves it is one and that we may list it. */
	fd = open(cfg->backing, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		fprintf(stderr, "fuse-iosched: backing directory %s: %s\n",
			cfg->backing, strerror(errno));
		return -1;
	}
	close(fd);
	*root_fd = open(cfg->backing, O_PATH | O_DIRECTORY);
	if (*root_fd < 0) {
		fprintf(stderr, "fuse-iosched: backing directory %s: %s\n",
			cfg->backing, strerror(errno));
		return -1;
	}
	if (stat(cfg->mountpoint, &st) != 0) {
		fprintf(stderr, "fuse-iosched: mountpoint %s: %s\n",
			cfg->mountpoint, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "fuse-iosched: mountpoint %s: not a directory\n",
			cfg->mountpoint);
		return -1;
	}
	/*
	 * Absolute from here on: the daemon moves to / when it detaches,
	 * and unmounting a relative MOUNTPOINT then fails (EINVAL), leaving
	 * a dead mount behind.
	 */
	if (main_absolute(&cfg->backing) != 0 ||
	    main_absolute(&cfg->mountpoint) != 0)
		return -1;
	return 0;
}

/* path is the directory dir, or inside it (both resolved, absolute). */
static bool main_inside(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/');
}

/* dir is the root of a mount: its mount differs from its parent's. */
static bool main_is_mount(const char *dir)
{
	struct statx sx, up;
	char *parent;
	bool ret;

	if (asprintf(&parent, "%s/..", dir) < 0)
		return false;
	ret = statx(AT_FDCWD, dir, 0, STATX_MNT_ID, &sx) == 0 &&
	      statx(AT_FDCWD, parent, 0, STATX_MNT_ID, &up) == 0 &&
	      (sx.stx_dev_major != up.stx_dev_major ||
	       sx.stx_dev_minor != up.stx_dev_minor ||
	       ((sx.stx_mask & up.stx_mask & STATX_MNT_ID) &&
		sx.stx_mnt_id != up.stx_mnt_id));
	free(parent);
	return ret;
}

/*
 * Where the mount goes, once both paths are resolved and the settings
 * read.  Never where the mount would contain itself (MOUNTPOINT inside
 * BACKING: every walk of the tree would find the mount again, through the
 * daemon, without end).  Not over another mount nor over BACKING itself
 * (a second daemon stacked on the first, a directory that disappears)
 * unless -o overmount says so: the daemon holds BACKING open from before
 * mounting, so it keeps serving it once hidden.
 */
static int main_check_place(const struct config *cfg)
{
	const char *b = cfg->backing, *m = cfg->mountpoint;

	if (strcmp(b, m) != 0 && main_inside(m, b)) {
		fprintf(stderr, "fuse-iosched: mountpoint %s is inside the "
			"backing directory %s: the mount would contain "
			"itself\n", m, b);
		return -1;
	}
	if (cfg->overmount)
		return 0;
	if (main_inside(b, m)) {
		fprintf(stderr, "fuse-iosched: mountpoint %s would hide the "
			"backing directory %s (-o overmount allows it)\n",
			m, b);
		return -1;
	}
	if (main_is_mount(m)) {
		fprintf(stderr, "fuse-iosched: mountpoint %s is already a "
			"mount point (-o overmount mounts over it)\n", m);
		return -1;
	}
	return 0;
}

/*
 * Settings from the configuration file, under the -o options, and the
 * schedulers: module_dir may come from the file, and the file's scheduler
 * sections are checked against the schedulers that loaded.
 */
static int main_config(struct config *cfg)
{
	char err[CONFIG_ERR_MAX];

	if (config_load_early(cfg, err, sizeof err) != 0)
		goto fail;
	/* noop first: the built-in one leads the list, as in the kernel. */
	elv_register(elv_noop(), "built-in");
	module_set_dir(cfg->module_dir);
	module_load_all();
	if (config_load(cfg, err, sizeof err) != 0 ||
	    config_apply_tunables(cfg, err, sizeof err) != 0)
		goto fail;
	log_set_level(config_log_level(cfg));
	return 0;

fail:
	fprintf(stderr, "fuse-iosched: %s\n", err);
	return -1;
}

/* The scheduler to mount with: named ones must exist, the default may not. */
static const struct elevator_type *main_scheduler(struct config *cfg)
{
	const struct elevator_type *type;
	char names[512];

	/* Every module of module_dir is loaded (main_config). */
	type = elv_find(cfg->scheduler);
	if (type != NULL)
		return type;
	elv_available(names, sizeof names);
	if (config_named(cfg, "scheduler")) {
		char file[PATH_MAX + 64];
		const char *why;

		/* Its module may be there, and refused: say why instead. */
		snprintf(file, sizeof file, "%s/%s.so:", cfg->module_dir,
			 cfg->scheduler);
		why = log_held_find(file);
		if (why != NULL)
			fprintf(stderr, "fuse-iosched: scheduler '%s': %s\n",
				cfg->scheduler, why);
		else
			fprintf(stderr, "fuse-iosched: unknown scheduler '%s' "
				"(available: %s)\n", cfg->scheduler, names);
		return NULL;
	}
	log_warn("default scheduler %s not found in %s; using noop",
		 cfg->scheduler, cfg->module_dir);
	return elv_noop();
}

/* ------------------------------------------------------------------ */
/* SIGHUP: re-read the configuration file.                             */

/*
 * The file is read in a thread of its own (timer_on_signal): it may be a
 * slow or hung file system, and the timer's thread, which also serves the
 * schedulers' wake-ups, must never wait for it.  Runs alone: nothing else
 * changes the fields of fs->cfg that config_reload reads (the -o options,
 * the paths), and main_reload_apply does not run meanwhile.
 */
static struct {
	struct config next;
	int ret;
	char err[CONFIG_ERR_MAX];
} main_reload_state;

static void main_reload_read(void *arg)
{
	struct fs *fs = arg;

	/*
	 * The log file too (logrotate), here for the same reason, and first,
	 * so that what the reload logs goes to the new file.
	 */
	log_file_reopen();
	main_reload_state.ret = config_reload(fs->cfg, &main_reload_state.next,
					      main_reload_state.err,
					      sizeof main_reload_state.err);
}

/*
 * Then on the timer's libevent thread.  Only what changed in the file
 * since it was last read is applied, so a switch or a tunable written to
 * .control/ since then stays unless the file now says otherwise; -o
 * options keep winning.
 *
 * A scheduler switch drains the queue, and this thread also serves the
 * schedulers' wake-ups.  That is safe: while the queue is frozen dispatch
 * runs with force set, where the ABI forbids idling, so the drain never
 * waits for a timer; wake-ups armed meanwhile fire when we return.  Doing
 * it here rather than in a thread of its own also means timer_stop, which
 * joins this thread, can never leave a reload running on a freed queue.
 */
static void main_reload_apply(void *arg)
{
	struct fs *fs = arg;
	struct config *next = &main_reload_state.next;
	char *err = main_reload_state.err;
	size_t size = sizeof main_reload_state.err;

	if (main_reload_state.ret != 0 ||
	    config_apply_tunables(next, err, size) != 0) {
		log_err("configuration reload failed, keeping the current "
			"settings: %s", err);
		/* Put the defaults of new instances back as they were. */
		if (config_apply_tunables(fs->cfg, err, size) != 0)
			log_err("configuration reload: %s", err);
		config_free(next);
		return;
	}
	config_reload_apply(fs->cfg, next, fs->queue);
	cgroup_config(fs->cfg);
	log_info("configuration reloaded from %s",
		 next->config_read != NULL ? next->config_read :
		 "(no file: built-in defaults)");
	config_free(next);
}

static void main_wakeup(void *arg, uint64_t at_ns)
{
	struct fs *fs = arg;

	if (fs->timer != NULL)
		timer_arm(fs->timer, at_ns);
}

static void main_timer_fired(void *arg)
{
	struct fs *fs = arg;

	queue_kick(fs->queue);
}

/* Options every mount gets: kernel permission checks, a clear name. */
static int main_mount_opts(struct fuse_args *args, const struct config *cfg)
{
	char *opts = NULL;
	int ret;

	ret = fuse_opt_add_opt(&opts, "default_permissions,subtype=fuse-iosched");
	if (ret == 0)
		ret = fuse_opt_add_opt(&opts, "fsname=");
	if (ret == 0) {
		/* fsname= was added last: append the escaped backing path. */
		char *esc = NULL;

		ret = fuse_opt_add_opt_escaped(&esc, cfg->backing);
		if (ret == 0) {
			char *joined = malloc(strlen(opts) + strlen(esc) + 1);

			if (joined == NULL) {
				ret = -1;
			} else {
				strcpy(joined, opts);
				strcat(joined, esc);
				free(opts);
				opts = joined;
			}
		}
		free(esc);
	}
	if (ret == 0)
		ret = fuse_opt_add_arg(args, "-o");
	if (ret == 0)
		ret = fuse_opt_add_arg(args, opts);
	free(opts);
	return ret;
}

/* The disk model the configuration names (not "none"), logged. */
static struct diskmodel *main_diskmodel(const struct config *cfg)
{
	struct diskmodel_ssd ssd = {
		.channels = cfg->ssd_channels,
		.read_us = cfg->ssd_read_us,
		.mb_per_s = cfg->ssd_mb_per_s,
		.buffer_mib = cfg->ssd_buffer_mib,
		.drain_mb_per_s = cfg->ssd_drain_mb_per_s,
	};

	if (strcmp(cfg->disk_model, "ssd") == 0) {
		log_info("disk model ssd: %u channels, read %u us, %u MB/s "
			 "per channel, buffer %u MiB draining at %u MB/s",
			 ssd.channels, ssd.read_us, ssd.mb_per_s,
			 ssd.buffer_mib, ssd.drain_mb_per_s);
		return diskmodel_ssd_new(&ssd);
	}
	log_info("disk model %s: seek %u ms, %u rpm, %u MB/s",
		 cfg->disk_model, cfg->seek_ms, cfg->rpm, cfg->mb_per_s);
	return diskmodel_new(cfg->seek_ms, cfg->rpm, cfg->mb_per_s);
}

/*
 * The header line of .control/trace that fuse-iosched-replay takes its
 * defaults from: the disk model and its parameters, the workers,
 * nr_requests (as now) and backing_io.
 */
static int main_trace_settings(void *arg, char *buf, size_t size)
{
	struct fs *fs = arg;
	const struct config *c = fs->cfg;
	int n;

	n = snprintf(buf, size, "disk_model %s seek_ms %u rpm %u mb_per_s %u "
		     "ssd_channels %u ssd_read_us %u ssd_mb_per_s %u "
		     "ssd_buffer_mib %u ssd_drain_mb_per_s %u threads %u "
		     "nr_requests %u backing_io %s", c->disk_model, c->seek_ms,
		     c->rpm, c->mb_per_s, c->ssd_channels, c->ssd_read_us,
		     c->ssd_mb_per_s, c->ssd_buffer_mib, c->ssd_drain_mb_per_s,
		     c->threads, queue_nr_requests(fs->queue),
		     backing_io_name(fs->backing_io));
	return n >= 0 && (size_t)n < size ? n : -ENOSPC;
}

/* metrics_fd: the bound /metrics socket (taken over), or -1. */
static int main_serve(struct fs *fs, struct fuse_cmdline_opts *opts,
		      int metrics_fd)
{
	const struct config *cfg = fs->cfg;
	struct diskmodel *dm = NULL;

	fs->timer = timer_start(main_timer_fired, fs);
	if (fs->timer == NULL || memory_start(fs) != 0) {
		if (metrics_fd >= 0)
			close(metrics_fd);
		return -1;
	}
	if (metrics_fd >= 0) {
		if (metrics_start(fs->timer, metrics_fd, fs->queue,
				  cfg->mountpoint, cfg->backing) != 0)
			return -1;
		log_info("metrics: serving /metrics on %s", cfg->metrics);
	}
	/* Without it, schedulers still stop idling, at their timeouts. */
	if (procwatch_start(fs->timer, fs->queue) != 0)
		log_warn("process exits: not watched: %s", strerror(ENOMEM));
	if (strcmp(cfg->disk_model, "none") != 0) {
		dm = main_diskmodel(cfg);
		if (dm == NULL) {
			log_err("disk model: %s", strerror(errno));
			return -1;
		}
	}
	/* Before the first request, after the log is open. */
	cgroup_init(cfg, backing_disk(fs->root_fd));
	fs->dispatch = dispatch_start(fs->queue, cfg->threads, dm,
				      cfg->groups,
				      (enum engine)engine_parse(cfg->engine));
	if (fs->dispatch == NULL)
		return -1;
	trace_start(cfg->mountpoint, clock_now_ns(), main_trace_settings, fs);
	/* After fuse_set_signal_handlers, which would make SIGHUP unmount. */
	if (timer_on_signal(fs->timer, SIGHUP, main_reload_read,
			    main_reload_apply, fs) != 0)
		log_warn("cannot handle SIGHUP: no configuration reload");
	log_info("mounted %s on %s, pid %ld, scheduler %s, %u %s, "
		 "configuration %s", fs->cfg->backing, fs->cfg->mountpoint,
		 (long)getpid(), queue_elevator_type(fs->queue)->name,
		 fs->cfg->threads,
		 engine_parse(fs->cfg->engine) == ENGINE_URING ?
		 "in flight on io_uring" : "workers",
		 fs->cfg->config_read != NULL ? fs->cfg->config_read :
		 "built in");
	return loop_run(fs->se, opts);
}

/* engine=uring needs a ring: refused before mounting, in one line. */
static int main_check_engine(const struct config *cfg)
{
	char err[CONFIG_ERR_MAX];

	if (cfg->fuse_uring != 0 && fusering_probe(err, sizeof err) != 0) {
		fprintf(stderr, "fuse-iosched: %s\n", err);
		return -1;
	}
	if (engine_parse(cfg->engine) != ENGINE_URING)
		return 0;
	if (uring_probe(cfg->threads, err, sizeof err) != 0) {
		fprintf(stderr, "fuse-iosched: %s\n", err);
		return -1;
	}
	return 0;
}

/*
 * --print-config: what a mount with these options would use, checked as
 * a mount checks them, without mounting: BACKING and MOUNTPOINT if given,
 * the file, the scheduler (the default's fallback shown), libfuse's own
 * options.
 */
static int main_print_config(struct config *cfg, struct fuse_args *args)
{
	const struct elevator_type *type;
	struct fuse_session *se;
	int root_fd = -1;
	char *name;

	if (cfg->backing != NULL || cfg->mountpoint != NULL) {
		if (main_check(cfg, &root_fd) != 0)
			return 1;
		close(root_fd);
	}
	if (main_config(cfg) != 0)
		return 1;
	if (cfg->backing != NULL && main_check_place(cfg) != 0)
		return 1;
	type = main_scheduler(cfg);
	if (type == NULL)
		return 1;
	/* It reports an unknown option itself; it does not mount. */
	se = fuse_session_new(args, &fs_ops, sizeof fs_ops, NULL);
	if (se == NULL)
		return 1;
	fuse_session_destroy(se);
	if (main_check_engine(cfg) != 0)
		return 1;
	/* As a mount: an address that does not resolve, a port in use. */
	if (strcmp(cfg->metrics, "off") != 0) {
		char err[CONFIG_ERR_MAX];
		int fd = metrics_listen(cfg->metrics, err, sizeof err);

		if (fd < 0) {
			fprintf(stderr, "fuse-iosched: %s\n", err);
			return 1;
		}
		close(fd);
	}
	name = strdup(type->name);
	if (name == NULL)
		return 1;
	free(cfg->scheduler);
	cfg->scheduler = name;
	log_release();
	config_print(cfg, stdout);
	return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts = { 0 };
	const struct elevator_type *type;
	struct config cfg;
	struct main_args ma = { .cfg = &cfg };
	struct fs fs = { .cfg = &cfg, .root_fd = -1, .timeout = 1.0 };
	struct queue_params qp = { 0 };
	struct sectormap_layout layout = { 0 };
	bool inodes = false;
	int status = 1, metrics_fd = -1;
	char err[CONFIG_ERR_MAX];

	if (config_init(&cfg) != 0) {
		fprintf(stderr, "fuse-iosched: out of memory\n");
		goto out;
	}
	/* A problem found before mounting is one line (log.c). */
	log_hold();
	liblog_start();
	if (fuse_opt_parse(&args, &ma, main_opts, main_opt_proc) != 0)
		goto out;
	if (fuse_parse_cmdline(&args, &opts) != 0)
		goto out;
	if (opts.show_help) {
		main_usage(argv[0]);
		status = 0;
		goto out;
	}
	if (opts.show_version) {
		printf("fuse-iosched %s (scheduler ABI %d.%d, libfuse %s)\n",
		       PACKAGE_VERSION, IOSCHED_ABI_VERSION, IOSCHED_ABI_MINOR,
		       fuse_pkgversion());
		status = 0;
		goto out;
	}
	cfg.foreground = opts.foreground;
	cfg.debug = opts.debug;
	if (ma.print_config) {
		status = main_print_config(&cfg, &args);
		goto out;
	}
	if (main_check(&cfg, &fs.root_fd) != 0 || main_config(&cfg) != 0 ||
	    main_check_place(&cfg) != 0 || main_check_engine(&cfg) != 0)
		goto out;
	if (log_file_open(cfg.log_file, err, sizeof err) != 0) {
		fprintf(stderr, "fuse-iosched: %s\n", err);
		goto out;
	}
	/* While stderr still reaches someone. */
	if (!cfg.foreground)
		log_syslog_check(cfg.mountpoint, CONTROL_NAME "/log");

	type = main_scheduler(&cfg);
	if (type == NULL)
		goto out;
	qp.nr_requests = cfg.nr_requests;
	qp.wakeup_at = main_wakeup;
	qp.wakeup_arg = &fs;
	qp.trace = trace_rq;
	qp.cgroup_path = cgroup_path;
	qp.cgroup_weight = cgroup_weight;
	fs.queue = queue_new(&qp, type);
	if (fs.queue == NULL)
		goto out;
	/* Checked by config.c: a valid name. */
	fs.backing_io = (enum backing_io)backing_io_parse(cfg.backing_io);
	fs.owner_uid = getuid();
	fs.owner_gid = getgid();
	fs.as_root = geteuid() == 0;
	fs.egid = getegid();
	fs.readonly = ma.readonly;
	if (fs_inode_table_init(&fs) != 0)
		goto out;
	inodes = true;
	backing_device_layout(fs.root_fd, &layout);
	sectormap_set_layout(&layout);
	if (main_mount_opts(&args, &cfg) != 0)
		goto out;

	/* libfuse reports unknown options itself, in one line. */
	fs.se = fuse_session_new(&args, &fs_ops, sizeof fs_ops, &fs);
	if (fs.se == NULL)
		goto out;
	/*
	 * A shell starts background jobs with SIGINT ignored, and libfuse
	 * leaves an ignored signal alone; but SIGINT and SIGTERM are how a
	 * daemon is asked to unmount, so they get their default back first.
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (fuse_set_signal_handlers(fs.se) != 0)
		goto out;
	/* Bound before mounting: a port in use must fail the mount. */
	if (strcmp(cfg.metrics, "off") != 0) {
		metrics_fd = metrics_listen(cfg.metrics, err, sizeof err);
		if (metrics_fd < 0) {
			fprintf(stderr, "fuse-iosched: %s\n", err);
			goto out_signals;
		}
	}
	/* Nothing failed: the warnings held meanwhile are worth seeing. */
	log_release();
	if (fuse_session_mount(fs.se, cfg.mountpoint) != 0) {
		if (!liblog_fuse_failed())
			fprintf(stderr, "fuse-iosched: cannot mount on %s\n",
				cfg.mountpoint);
		goto out_signals;
	}
	fusering_configure(cfg.fuse_uring);
	if (killpriv_setup(fs.se) != 0) {
		fprintf(stderr, "fuse-iosched: out of memory\n");
		goto out_unmount;
	}
	/* From here on the mount exists: the parent exits 0. */
	if (fuse_daemonize(cfg.foreground) != 0)
		goto out_unmount;
	log_open(!cfg.foreground, config_log_level(&cfg));
	liblog_open();
	fs_fd_report();

	/*
	 * libfuse returns the signal's number when SIGTERM, SIGINT (or its
	 * SIGHUP, which ours replaces) ended the loop: a clean unmount too.
	 */
	status = main_serve(&fs, &opts, metrics_fd) < 0 ? 1 : 0;
	metrics_fd = -1;
	fusering_quiesce();

	/* Answer everything still queued before the mount goes away. */
	trace_stop();
	/* Throttled requests first: the workers end once the queue is empty. */
	dispatch_drain(fs.dispatch);
	queue_stop(fs.queue);
	dispatch_stop(fs.dispatch);
	timer_stop(fs.timer);
	/* After the last reply: those to ring requests go to their ring. */
	fusering_stop();
	/* A reload read while stopping, never applied. */
	config_free(&main_reload_state.next);
	/* The exit status, for a daemon nobody waits for. */
	log_info("unmounting %s, exit status %d", cfg.mountpoint, status);
out_unmount:
	fuse_session_unmount(fs.se);
out_signals:
	fuse_remove_signal_handlers(fs.se);
out:
	if (fs.se != NULL)
		fuse_session_destroy(fs.se);
	control_close_all();
	fs_dir_close_all();
	if (inodes)
		fs_inode_table_destroy(&fs);
	queue_free(fs.queue);
	cgroup_exit();
	module_unload_all();
	if (fs.root_fd >= 0)
		close(fs.root_fd);
	if (metrics_fd >= 0)
		close(metrics_fd);
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	config_free(&cfg);
	return status;
}
