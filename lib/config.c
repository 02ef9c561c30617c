/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Settings: built-in defaults, then the configuration file, then -o
 * options.  The defaults are chosen so that "fuse-iosched BACKING
 * MOUNTPOINT" works on any machine without a configuration file.
 *
 * One table (config_settings) names every setting, as tmux's
 * options-table.c does: its type, range, default, --help text, and what a
 * change on SIGHUP does.  Parsing (-o and the file), printing
 * (--print-config, --help), freeing and reloading are loops over it.  The
 * same parser checks a value whether it comes from -o or from the file,
 * so both give the same message for the same mistake.  The file is
 * libconfuse syntax:
 *
 *	scheduler = deadline
 *	deadline {
 *		read_expire = 250
 *	}
 *
 * A section per scheduler holds its tunables.  The sections are built from
 * the registered schedulers' own tunable tables, so the file is checked
 * exactly: an unknown key, a tunable the scheduler does not have, a value
 * out of its range and a section for a scheduler that does not exist are
 * all errors naming the file and the line.  Which schedulers exist depends
 * on module_dir, which the file may set: it is read first, by a pass that
 * knows only the plain settings and stops at the first section (hence
 * module_dir must come before the sections; config_load checks it).
 *
 * libconfuse's lexer keeps global state and its callbacks carry no user
 * pointer, so parsing is serialized by config_parse_lock and the callbacks
 * find their context in config_ctx.  HACKING (on libconfuse) lists what
 * else libconfuse cannot do; tests/unit/test_confuse_limits proves it.
 */
#include <confuse.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuse-iosched.h"

#define THREADS_MAX 256
#define MAX_BACKGROUND_MAX 65535
/* Each entry maps a payload buffer of max_write (1 MiB) per CPU. */
#define FUSE_URING_MAX 256
/* The configuration file's size limit: a real one is a few KiB. */
#define CONFIG_FILE_MAX (1024 * 1024)

enum config_type {
	CONFIG_PATH,		/* a directory: made absolute at start */
	CONFIG_NAME,		/* a scheduler name */
	CONFIG_UINT,		/* [min, max] */
	CONFIG_BOOL,		/* yes/no, true/false, on/off, 1/0 */
	CONFIG_LEVEL,		/* a log level name (log.c) */
	CONFIG_STR,		/* a non-empty string that valid accepts */
};

/*
 * A setting's change on SIGHUP: applied to the running mount by this
 * function, on the timer thread; without one, logged as taking effect at
 * the next mount.  The field in the mount's struct config changes then,
 * so a setting with an apply function must not be read from it by other
 * threads.
 */
typedef void (*config_apply_fn)(struct queue *q, const struct config *next);

struct config_setting {
	const char *name;
	enum config_type type;
	size_t offset;		/* of the field in struct config */
	unsigned min, max;	/* CONFIG_UINT */
	bool (*valid)(const char *value);	/* CONFIG_STR, if set */
	const char *expect;	/* what valid accepts, for the message */
	const char *def;	/* built-in default as the file says it;
				 * NULL: computed by config_init */
	const char *def_doc;	/* the default as --help states it, if
				 * not def */
	config_apply_fn apply;	/* NULL: takes effect at the next mount */
	const char *arg;	/* --help: -o name=ARG (NULL for CONFIG_BOOL) */
	const char *help;	/* --help: what it is, in a few words */
};

static void config_apply_scheduler(struct queue *q, const struct config *next);
static void config_apply_nr_requests(struct queue *q,
				     const struct config *next);
static void config_apply_log(struct queue *q, const struct config *next);

#define CONFIG_FIELD(f) .offset = offsetof(struct config, f)

/*
 * Every setting, one row each, in the order --help and --print-config
 * show them.  Adding one: a row here, a field in struct config, and its
 * entries in fuse-iosched(8), fuse-iosched.conf(5), etc/fuse-iosched.conf.in
 * and the README (tests/man-coverage.sh checks them against --help).
 * A string whose values another file knows names that file's checker:
 *
 *	{ .name = "disk_model", .type = CONFIG_STR, CONFIG_FIELD(disk_model),
 *	  .valid = diskmodel_name_valid, .expect = "none or hdd", ...
 */
static const struct config_setting config_settings[] = {
	{ .name = "scheduler", .type = CONFIG_NAME, CONFIG_FIELD(scheduler),
	  .def = "deadline",
	  .def_doc = "deadline, or noop if the deadline module cannot be "
	  "loaded",
	  .apply = config_apply_scheduler,
	  .arg = "NAME", .help = "scheduler at mount time" },
	{ .name = "threads", .type = CONFIG_UINT, CONFIG_FIELD(threads),
	  .min = 1, .max = THREADS_MAX,
	  .def_doc = "two per CPU, at least 4, at most 16",
	  .arg = "N", .help = "dispatch worker threads (with engine=uring: "
	  "ios in flight)" },
	{ .name = "engine", .type = CONFIG_STR, CONFIG_FIELD(engine),
	  .valid = engine_name_valid, .expect = "threads or uring",
	  .def = "threads",
	  .arg = "ENGINE", .help = "threads: workers perform each request "
	  "with a syscall; uring: one io_uring submits them" },
	{ .name = "fuse_uring", .type = CONFIG_UINT, CONFIG_FIELD(fuse_uring),
	  .min = 0, .max = FUSE_URING_MAX, .def = "0",
	  .arg = "N", .help = "take requests through FUSE over io_uring, N "
	  "ring entries per CPU (0: through /dev/fuse)" },
	{ .name = "nr_requests", .type = CONFIG_UINT, CONFIG_FIELD(nr_requests),
	  .min = NR_REQUESTS_MIN, .max = NR_REQUESTS_MAX, .def = "128",
	  .apply = config_apply_nr_requests,
	  .arg = "N", .help = "queue depth limit per direction" },
	{ .name = "module_dir", .type = CONFIG_PATH, CONFIG_FIELD(module_dir),
	  .def = MODULE_DIR,
	  .arg = "DIR", .help = "where scheduler modules (NAME.so) are "
	  "loaded from" },
	/*
	 * The kernel caps background requests (readahead, async direct
	 * I/O, writeback) at 12 by default, which would starve the elevator
	 * of requests to sort and merge; 64 gives it room without unbounded
	 * memory.
	 */
	{ .name = "max_background", .type = CONFIG_UINT,
	  CONFIG_FIELD(max_background), .min = 1, .max = MAX_BACKGROUND_MAX,
	  .def = "64",
	  .arg = "N", .help = "FUSE background requests" },
	{ .name = "writeback_cache", .type = CONFIG_BOOL,
	  CONFIG_FIELD(writeback_cache), .def = "no",
	  .help = "let the kernel cache and batch writes, which then arrive "
	  "without their process's pid" },
	{ .name = "log", .type = CONFIG_LEVEL, CONFIG_FIELD(log),
	  .def = "info", .apply = config_apply_log,
	  .arg = "LEVEL", .help = "log level: emerg, alert, crit, error, "
	  "warning, notice, info or debug" },
	{ .name = "log_file", .type = CONFIG_STR, CONFIG_FIELD(log_file),
	  .valid = log_file_name_valid, .expect = "none or an absolute path",
	  .def = "none",
	  .arg = "PATH", .help = "also append every log line to PATH, "
	  "reopened on SIGHUP" },
	{ .name = "disk_model", .type = CONFIG_STR, CONFIG_FIELD(disk_model),
	  .valid = diskmodel_name_valid, .expect = "none, hdd or ssd",
	  .def = "none",
	  .arg = "MODEL", .help = "none, hdd or ssd: charge each request the "
	  "service time of a single-spindle disk or of a flash device" },
	{ .name = "seek_ms", .type = CONFIG_UINT, CONFIG_FIELD(seek_ms),
	  .min = 0, .max = DISKMODEL_SEEK_MS_MAX, .def = "8",
	  .arg = "N", .help = "hdd: average seek, ms" },
	{ .name = "rpm", .type = CONFIG_UINT, CONFIG_FIELD(rpm),
	  .min = DISKMODEL_RPM_MIN, .max = DISKMODEL_RPM_MAX, .def = "7200",
	  .arg = "N", .help = "hdd: spindle speed" },
	{ .name = "mb_per_s", .type = CONFIG_UINT, CONFIG_FIELD(mb_per_s),
	  .min = 1, .max = DISKMODEL_MB_PER_S_MAX, .def = "150",
	  .arg = "N", .help = "hdd: transfer rate, 10^6 bytes/s" },
	{ .name = "ssd_channels", .type = CONFIG_UINT,
	  CONFIG_FIELD(ssd_channels),
	  .min = 1, .max = DISKMODEL_SSD_CHANNELS_MAX, .def = "8",
	  .arg = "N", .help = "ssd: channels serving in parallel" },
	{ .name = "ssd_read_us", .type = CONFIG_UINT, CONFIG_FIELD(ssd_read_us),
	  .min = 0, .max = DISKMODEL_SSD_READ_US_MAX, .def = "80",
	  .arg = "N", .help = "ssd: a read's access time, us" },
	{ .name = "ssd_mb_per_s", .type = CONFIG_UINT,
	  CONFIG_FIELD(ssd_mb_per_s),
	  .min = 1, .max = DISKMODEL_MB_PER_S_MAX, .def = "500",
	  .arg = "N", .help = "ssd: transfer rate per channel, 10^6 bytes/s" },
	{ .name = "ssd_buffer_mib", .type = CONFIG_UINT,
	  CONFIG_FIELD(ssd_buffer_mib),
	  .min = 1, .max = DISKMODEL_SSD_BUFFER_MIB_MAX, .def = "32768",
	  .arg = "N", .help = "ssd: write buffer, MiB" },
	{ .name = "ssd_drain_mb_per_s", .type = CONFIG_UINT,
	  CONFIG_FIELD(ssd_drain_mb_per_s),
	  .min = 1, .max = DISKMODEL_MB_PER_S_MAX, .def = "1000",
	  .arg = "N", .help = "ssd: the write buffer's drain rate, "
	  "10^6 bytes/s" },
	{ .name = "backing_io", .type = CONFIG_STR, CONFIG_FIELD(backing_io),
	  .valid = backing_io_name_valid, .expect = "auto, direct or buffered",
	  .def = "auto",
	  .arg = "MODE", .help = "auto: O_DIRECT below when the opener asked; "
	  "direct: always; buffered: never" },
	{ .name = "overmount", .type = CONFIG_BOOL, CONFIG_FIELD(overmount),
	  .def = "no",
	  .help = "mount even where the mount hides another mount or the "
	  "backing directory" },
	{ .name = "metrics", .type = CONFIG_STR, CONFIG_FIELD(metrics),
	  .valid = metrics_addr_valid,
	  .expect = "off, HOST:PORT, [HOST]:PORT or :PORT (port 1 to 65535)",
	  .def = "off",
	  .arg = "ADDR:PORT", .help = "serve Prometheus metrics at /metrics; "
	  ":PORT binds the loopback only" },
	{ .name = "groups", .type = CONFIG_BOOL, CONFIG_FIELD(groups),
	  .def = "yes",
	  .help = "apply the caller's control group's I/O limits and weight "
	  "to its requests" },
};

/* One bit per setting in config.given and config.named. */
_Static_assert(ARRAY_SIZE(config_settings) <= 32,
	       "struct config's setting bitmasks are 32 bits");

#define CONFIG_BIT(s) (1u << ((s) - config_settings))

/*
 * Options that mount(8) and mount.fuse3 may pass along from fstab, which
 * libfuse itself would refuse: they mean nothing to a FUSE mount, or the
 * kernel's default already applies (relatime), so they are dropped.
 */
static const char *const config_ignored[] = {
	"defaults", "auto", "noauto", "user", "nouser", "users", "owner",
	"group", "_netdev", "nofail", "relatime", "norelatime",
	"strictatime", "nostrictatime", "lazytime", "nolazytime",
	"diratime", "nodiratime", "iversion", "noiversion", "mand", "nomand",
	"silent", "loud",
};

/* Held while libconfuse parses; protects config_ctx. */
static pthread_mutex_t config_parse_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	struct config *cfg;	/* being filled */
	const char *file;
	char *err;		/* the first error only: one line */
	size_t size;
	bool failed;
	int module_dir_line;
} config_ctx;

/* The setting's field in cfg. */
static void *config_field(const struct config *cfg,
			  const struct config_setting *s)
{
	return (char *)cfg + s->offset;
}

static bool config_is_string(const struct config_setting *s)
{
	return s->type != CONFIG_UINT && s->type != CONFIG_BOOL;
}

static unsigned config_threads_default(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	/*
	 * Workers mostly wait on the disk, so a few per core keep it busy;
	 * more would only shorten the queue the scheduler gets to order.
	 */
	if (n < 2)
		n = 2;
	return n * 2 > 16 ? 16 : (unsigned)(n * 2);
}

static int config_set(struct config *cfg, const struct config_setting *s,
		      const char *value, char *err, size_t size);

int config_init(struct config *cfg)
{
	char err[CONFIG_ERR_MAX];

	memset(cfg, 0, sizeof *cfg);
	cfg->threads = config_threads_default();
	for (size_t i = 0; i < ARRAY_SIZE(config_settings); i++) {
		const struct config_setting *s = &config_settings[i];

		/* A default that does not parse is a bug: tests catch it. */
		if (s->def != NULL &&
		    config_set(cfg, s, s->def, err, sizeof err) != 0)
			return -ENOMEM;
	}
	return 0;
}

static const struct config_setting *config_find(const char *name, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(config_settings); i++)
		if (strlen(config_settings[i].name) == len &&
		    strncmp(config_settings[i].name, name, len) == 0)
			return &config_settings[i];
	return NULL;
}

static int config_bool(const char *value)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcmp(value, yes[i]) == 0)
			return 1;
		if (strcmp(value, no[i]) == 0)
			return 0;
	}
	return -1;
}

/* "a, b or c" from n names, for error messages. */
static void config_join(char *buf, size_t size, const char *const *names,
			size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
					i == 0 ? "" : i + 1 == n ? " or " :
					", ", names[i]);
}

static void config_level_names(char *buf, size_t size)
{
	const char *names[LOG_DEBUG + 1];
	size_t n = 0;

	for (int l = 0; l <= LOG_DEBUG; l++)
		if (log_level_name(l) != NULL)
			names[n++] = log_level_name(l);
	config_join(buf, size, names, n);
}

/* Check value for s and store it in cfg; on failure say why in err. */
static int config_set(struct config *cfg, const struct config_setting *s,
		      const char *value, char *err, size_t size)
{
	void *field = config_field(cfg, s);
	char names[256], shown[LOG_VALUE_SIZE];
	unsigned long n;
	char *end, *copy;
	int b;

	/* The value in messages: it may be anything, of any length. */
	log_value(shown, sizeof shown, value, strlen(value));
	switch (s->type) {
	case CONFIG_UINT:
		errno = 0;
		n = strtoul(value, &end, 10);
		if (*value < '0' || *value > '9' || *end != '\0' ||
		    errno != 0 || n < s->min || n > s->max) {
			snprintf(err, size, "%s=%s: not a number from %u to %u",
				 s->name, shown, s->min, s->max);
			return -1;
		}
		*(unsigned *)field = (unsigned)n;
		return 0;
	case CONFIG_BOOL:
		b = config_bool(value);
		if (b < 0) {
			snprintf(err, size, "%s=%s: not yes or no", s->name,
				 shown);
			return -1;
		}
		*(bool *)field = b;
		return 0;
	case CONFIG_NAME:
		if (!elv_name_valid(value, strlen(value))) {
			snprintf(err, size, "%s=%s: not a scheduler name "
				 "([a-z0-9_-], at most 31)", s->name, shown);
			return -1;
		}
		break;
	case CONFIG_LEVEL:
		if (log_level_parse(value) < 0) {
			config_level_names(names, sizeof names);
			snprintf(err, size, "%s=%s: not a log level (%s)",
				 s->name, shown, names);
			return -1;
		}
		break;
	case CONFIG_STR:
		if (s->valid != NULL && !s->valid(value)) {
			snprintf(err, size, "%s=%s: not %s", s->name, shown,
				 s->expect);
			return -1;
		}
		/* fall through */
	case CONFIG_PATH:
		if (*value == '\0') {
			snprintf(err, size, "%s: empty", s->name);
			return -1;
		}
		break;
	}
	copy = strdup(value);
	if (copy == NULL) {
		snprintf(err, size, "%s: out of memory", s->name);
		return -1;
	}
	free(*(char **)field);
	*(char **)field = copy;
	return 0;
}

/*
 * A relative path given on the command line, made absolute against the
 * directory the command runs in: the daemon moves to / when it detaches,
 * and reads the path again later (module_dir when a switch loads a
 * module, config= on SIGHUP).  It must exist.  Returns a new string.
 */
static char *config_absolute(const char *name, const char *path, char *err,
			     size_t size)
{
	char shown[LOG_VALUE_SIZE];
	char *abs;

	abs = path[0] == '/' ? strdup(path) : realpath(path, NULL);
	if (abs == NULL)
		snprintf(err, size, "%s=%s: %s", name,
			 log_value(shown, sizeof shown, path, strlen(path)),
			 strerror(errno));
	return abs;
}

/* Whether -o gave the setting called name. */
static bool config_given(const struct config *cfg, const char *name)
{
	const struct config_setting *s = config_find(name, strlen(name));

	return s != NULL && (cfg->given & CONFIG_BIT(s));
}

int config_log_level(const struct config *cfg)
{
	/* -d means "log everything" unless -o log= says otherwise. */
	if (cfg->debug && !config_given(cfg, "log"))
		return LOG_DEBUG;
	return log_level_parse(cfg->log);
}

static bool config_is_ignored(const char *opt)
{
	if (strncmp(opt, "x-", 2) == 0 || strncmp(opt, "comment=", 8) == 0)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(config_ignored); i++)
		if (strcmp(opt, config_ignored[i]) == 0)
			return true;
	return false;
}

/* Keep "name=value" (value as stored) to replay on reload. */
static int config_keep_opt(struct config *cfg, const char *name,
			   const char *value)
{
	char **opts = realloc(cfg->opts, (cfg->nr_opts + 1) * sizeof *opts);

	if (opts == NULL)
		return -1;
	cfg->opts = opts;
	if (asprintf(&opts[cfg->nr_opts], "%s=%s", name, value) < 0)
		return -1;
	cfg->nr_opts++;
	return 0;
}

int config_option(struct config *cfg, const char *opt, char *err,
		  size_t size)
{
	const struct config_setting *s;
	const char *eq = strchr(opt, '=');
	size_t len = eq != NULL ? (size_t)(eq - opt) : strlen(opt);
	const char *value = eq != NULL ? eq + 1 : "yes";
	char *abs = NULL;
	int ret;

	if (config_is_ignored(opt)) {
		log_debug("-o %s: ignored (a mount(8) option)", opt);
		return 0;
	}
	if (strncmp(opt, "config=", 7) == 0) {
		if (opt[7] == '\0') {
			snprintf(err, size, "-o config=: empty path");
			return -1;
		}
		abs = config_absolute("config", opt + 7, err, size);
		if (abs == NULL)
			return -1;
		free(cfg->config_file);
		cfg->config_file = abs;
		return 0;
	}
	s = config_find(opt, len);
	if (s == NULL)
		return 1;
	/* A flag alone ("-o writeback_cache") means yes. */
	if (eq == NULL && s->type != CONFIG_BOOL) {
		snprintf(err, size, "-o %s: needs a value (%s=...)", opt, opt);
		return -1;
	}
	if (s->type == CONFIG_PATH && *value != '\0') {
		value = abs = config_absolute(s->name, value, err, size);
		if (abs == NULL)
			return -1;
	}
	ret = config_set(cfg, s, value, err, size);
	if (ret == 0) {
		cfg->given |= CONFIG_BIT(s);
		cfg->named |= CONFIG_BIT(s);
		ret = config_keep_opt(cfg, s->name, value);
		if (ret != 0)
			snprintf(err, size, "out of memory");
	}
	free(abs);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The file.                                                           */

/* Our callbacks' errors, their values already cut: keep the first. */
static void config_fail(cfg_t *c, const char *why)
{
	if (config_ctx.failed)
		return;
	config_ctx.failed = true;
	snprintf(config_ctx.err, config_ctx.size, "%s:%d: %s", config_ctx.file,
		 c->line, why);
}

/*
 * libconfuse's messages: keep the first.  They quote what the file says
 * ("no such option 'NAME'", "unexpected token 'X'"), which may be any
 * bytes of any length: cut and escaped as a value.
 */
static void __attribute__((format(printf, 2, 0)))
config_error(cfg_t *c, const char *fmt, va_list ap)
{
	char raw[CONFIG_ERR_MAX], msg[2 * LOG_VALUE_SIZE], hint[64] = "";

	if (config_ctx.failed)
		return;
	config_ctx.failed = true;
	vsnprintf(raw, sizeof raw, fmt, ap);
	log_value(msg, sizeof msg, raw, strlen(raw));
	/* Say what an unknown name is not, in our words. */
	if (strncmp(msg, "no such option ", 15) == 0) {
		if (strcmp(cfg_name(c), "root") == 0)
			snprintf(hint, sizeof hint,
				 " is neither a setting nor a scheduler");
		else if (strcmp(cfg_name(c), "group") == 0)
			snprintf(hint, sizeof hint, " is not a key of a group "
				 "section");
		else
			snprintf(hint, sizeof hint, " is not a tunable of %s",
				 cfg_name(c));
		memmove(msg, msg + 15, strlen(msg + 15) + 1);
	}
	snprintf(config_ctx.err, config_ctx.size, "%s:%d: %s%s",
		 config_ctx.file, c->line, msg, hint);
}

/*
 * The file, open for reading if it is a regular file (config_read_text
 * reads at most CONFIG_FILE_MAX bytes of it).  A FIFO or a device would
 * block the reader or never end: O_NONBLOCK opens a FIFO without waiting
 * for a writer, and the open descriptor (not the name, which may change
 * meanwhile) is checked.  A symbolic link is followed: the file is the administrator's
 * choice, and a link to it (from configuration management, say) is usual.
 */
static FILE *config_open(const char *file, char *err, size_t size)
{
	struct stat st;
	FILE *fp;
	int fd;

	fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, size, "%s: %s", file, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(err, size, "%s: %s", file, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, size, "%s: not a regular file", file);
		goto fail;
	}
	fp = fdopen(fd, "r");
	if (fp != NULL)
		return fp;
	snprintf(err, size, "%s: %s", file, strerror(errno));
fail:
	close(fd);
	return NULL;
}

/*
 * The file's text with its comments blanked out, for cfg_parse_buf.
 * libconfuse 3.3 counts a line comment's newline more than once, so its
 * line numbers drift after every comment; without comments they are
 * right.  It also takes the end of the file as the end of an open section,
 * so a missing closing brace would pass unnoticed: we count braces here,
 * skipping strings and comments as its lexer does.
 */
static char *config_read_text(const char *file, char *err, size_t size)
{
	FILE *fp = config_open(file, err, size);
	char *text = NULL;
	size_t len = 0, nread = 0;
	int c, quote = 0, line = 1, depth = 0, open_line = 0;
	bool comment = false, block = false;
	FILE *out;

	if (fp == NULL)
		return NULL;
	out = open_memstream(&text, &len);
	if (out == NULL) {
		fclose(fp);
		snprintf(err, size, "%s: out of memory", file);
		return NULL;
	}
	while ((c = getc(fp)) != EOF) {
		int next;

		/* Bounded: the file may be huge, or grow as we read. */
		if (++nread > CONFIG_FILE_MAX)
			break;
		if (c == '\n') {
			line++;
			comment = false;
		} else if (comment) {
			c = ' ';
		} else if (block) {
			if (c == '*' && (next = getc(fp)) != EOF) {
				if (next == '/')
					block = false;
				else
					ungetc(next, fp);
			}
			c = ' ';
		} else if (quote != 0) {
			if (c == '\\' && (next = getc(fp)) != EOF) {
				putc(c, out);
				c = next;
				if (c == '\n')
					line++;
			} else if (c == quote) {
				quote = 0;
			}
		} else if (c == '"' || c == '\'') {
			quote = c;
		} else if (c == '#') {
			comment = true;
			c = ' ';
		} else if (c == '/' && (next = getc(fp)) != EOF) {
			if (next == '/' || next == '*') {
				comment = next == '/';
				block = next == '*';
				putc(' ', out);
				c = ' ';
			} else {
				ungetc(next, fp);
			}
		} else if (c == '{') {
			if (depth++ == 0)
				open_line = line;
		} else if (c == '}') {
			depth--;
		}
		putc(c, out);
	}
	fclose(fp);
	if (fclose(out) != 0) {
		free(text);
		snprintf(err, size, "%s: out of memory", file);
		return NULL;
	}
	if (nread > CONFIG_FILE_MAX) {
		free(text);
		snprintf(err, size, "%s: larger than %d MiB", file,
			 CONFIG_FILE_MAX >> 20);
		return NULL;
	}
	if (depth > 0) {
		free(text);
		snprintf(err, size, "%s:%d: the section opened here is not "
			 "closed", file, open_line);
		return NULL;
	}
	return text;
}

/* Free the strings of the settings in cfg. */
static void config_free_values(struct config *cfg)
{
	for (size_t i = 0; i < ARRAY_SIZE(config_settings); i++) {
		const struct config_setting *s = &config_settings[i];

		if (config_is_string(s)) {
			free(*(char **)config_field(cfg, s));
			*(char **)config_field(cfg, s) = NULL;
		}
	}
}

/* A plain setting was read: check it, apply it unless -o gave it. */
static int config_setting_cb(cfg_t *c, cfg_opt_t *opt)
{
	const char *name = cfg_opt_name(opt);
	const struct config_setting *s = config_find(name, strlen(name));
	const char *value = cfg_opt_getnstr(opt, 0);
	struct config scratch, *dst = config_ctx.cfg;
	char why[CONFIG_ERR_MAX], shown[LOG_VALUE_SIZE];
	int ret;

	if (s == NULL || value == NULL)
		return -1;
	log_value(shown, sizeof shown, value, strlen(value));
	if (dst->given & CONFIG_BIT(s)) {
		/* Checked all the same, so a file is always valid or not. */
		memset(&scratch, 0, sizeof scratch);
		dst = &scratch;
	}
	/*
	 * Relative to what?  The daemon's directory changes when it
	 * detaches, and the file is read again then.
	 */
	if (s->type == CONFIG_PATH && value[0] != '/') {
		snprintf(why, sizeof why, "%s=%s: not an absolute path",
			 s->name, shown);
		ret = -1;
	} else {
		ret = config_set(dst, s, value, why, sizeof why);
	}
	if (dst == &scratch)
		config_free_values(&scratch);
	else if (ret == 0)
		dst->named |= CONFIG_BIT(s);
	if (ret == 0 && s->type == CONFIG_NAME && elv_find(value) == NULL) {
		char names[512];

		elv_available(names, sizeof names);
		snprintf(why, sizeof why, "scheduler=%s: no such scheduler "
			 "(available: %.300s)", shown, names);
		ret = -1;
	}
	if (ret != 0) {
		config_fail(c, why);
		return -1;
	}
	if (s->type == CONFIG_PATH)
		config_ctx.module_dir_line = c->line;
	return 0;
}

/* A tunable in a scheduler section: the section is the scheduler. */
static int config_tunable_cb(cfg_t *sec, cfg_opt_t *opt)
{
	const struct elevator_type *type = elv_find(cfg_name(sec));
	const char *value = cfg_opt_getnstr(opt, 0);
	const struct elv_tunable *t;
	char shown[LOG_VALUE_SIZE], why[CONFIG_ERR_MAX];
	long long n;
	char *end;

	if (type == NULL || value == NULL)
		return -1;
	t = elv_tunable_find(type, cfg_opt_name(opt));
	if (t == NULL)
		return -1;
	errno = 0;
	n = strtoll(value, &end, 10);
	if (*value == '\0' || *end != '\0' || errno != 0) {
		snprintf(why, sizeof why, "%s: %s = %s: not a number",
			 type->name, t->name,
			 log_value(shown, sizeof shown, value, strlen(value)));
		config_fail(sec, why);
		return -1;
	}
	if (n < t->min || n > t->max) {
		snprintf(why, sizeof why, "%s: %s = %lld: out of range (%"
			 PRId64 " to %" PRId64 ")", type->name, t->name, n,
			 t->min, t->max);
		config_fail(sec, why);
		return -1;
	}
	/* The last value in the file wins. */
	return elv_tunable_value_put(&config_ctx.cfg->tunables, type, t, n) ?
	       -1 : 0;
}

/*
 * A group section's number: decimal with K, M, G or T (powers of 1024, as
 * systemd's IOReadBandwidthMax=) or "max" (no limit, 0).  0 or -1.
 */
static int config_group_number(const char *value, uint64_t *n)
{
	static const char units[] = "KMGT";
	unsigned long long v;
	const char *u;
	char *end;

	if (strcmp(value, "max") == 0) {
		*n = 0;
		return 0;
	}
	if (*value < '0' || *value > '9')
		return -1;
	errno = 0;
	v = strtoull(value, &end, 10);
	if (errno != 0)
		return -1;
	if (*end != '\0') {
		u = strchr(units, *end);
		if (u == NULL || end[1] != '\0')
			return -1;
		for (long i = 0; i <= u - units; i++) {
			if (v > UINT64_MAX / 1024)
				return -1;
			v *= 1024;
		}
	}
	*n = v;
	return 0;
}

/* A key in a group section: the section's title is the group's path. */
static int config_group_cb(cfg_t *sec, cfg_opt_t *opt)
{
	const char *path = cfg_title(sec), *name = cfg_opt_name(opt);
	const char *value = cfg_opt_getnstr(opt, 0);
	char shown[LOG_VALUE_SIZE], why[CONFIG_ERR_MAX];
	struct config_group *g;
	uint64_t n;

	if (path == NULL || value == NULL)
		return -1;
	if (path[0] != '/' || strlen(path) >= CONFIG_GROUP_PATH_MAX) {
		snprintf(why, sizeof why, "group %s: not a control group path "
			 "(\"/\" or \"/a/b\")",
			 log_value(shown, sizeof shown, path, strlen(path)));
		config_fail(sec, why);
		return -1;
	}
	if (config_group_number(value, &n) != 0 ||
	    (strcmp(name, "weight") == 0 &&
	     (n < ELV_CGROUP_WEIGHT_MIN || n > ELV_CGROUP_WEIGHT_MAX))) {
		snprintf(why, sizeof why, "group %s: %s = %s: not %s",
			 log_value(shown, sizeof shown, path, strlen(path)),
			 name, value, strcmp(name, "weight") == 0 ?
			 "a weight from 1 to 1000" :
			 "a number (K, M, G, T: times 1024) or max");
		config_fail(sec, why);
		return -1;
	}
	for (g = config_ctx.cfg->groups_conf; g != NULL; g = g->next)
		if (strcmp(g->path, path) == 0)
			break;
	if (g == NULL) {
		g = calloc(1, sizeof *g);
		if (g == NULL || (g->path = strdup(path)) == NULL) {
			free(g);
			return -1;
		}
		g->next = config_ctx.cfg->groups_conf;
		config_ctx.cfg->groups_conf = g;
	}
	if (strcmp(name, "rbps") == 0)
		g->lim.bps[ELV_READ] = n;
	else if (strcmp(name, "wbps") == 0)
		g->lim.bps[ELV_WRITE] = n;
	else if (strcmp(name, "riops") == 0)
		g->lim.iops[ELV_READ] = n;
	else if (strcmp(name, "wiops") == 0)
		g->lim.iops[ELV_WRITE] = n;
	else
		g->weight = (unsigned)n;
	return 0;
}

/* A group section's keys, in the order --print-config shows them. */
static const char *const config_group_keys[] = {
	"rbps", "wbps", "riops", "wiops", "weight",
};

/*
 * The option table: every plain setting, and with sections, one section
 * per registered scheduler with a string option per tunable (the callback
 * parses it, so that a bad number gets our message).  Freed by the caller
 * with config_table_free once cfg_init has copied it.
 */
static cfg_opt_t *config_table(bool sections)
{
	const struct elevator_type *type;
	unsigned nr_types = 0;
	size_t n = ARRAY_SIZE(config_settings);
	cfg_opt_t *opts;
	cfg_opt_t end = CFG_END();

	while (sections && elv_nth(nr_types) != NULL)
		nr_types++;
	opts = calloc(n + nr_types + 2, sizeof *opts);
	if (opts == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		cfg_opt_t o = CFG_STR(config_settings[i].name, NULL,
				      CFGF_NODEFAULT);

		/* The early pass only wants module_dir. */
		if (sections || strcmp(o.name, "module_dir") == 0)
			o.validcb = config_setting_cb;
		opts[i] = o;
	}
	for (unsigned i = 0; i < nr_types; i++) {
		const struct elv_tunable *t;
		size_t nt = 0, j = 0;
		cfg_opt_t *sub;

		type = elv_nth(i);
		for (t = type->tunables; t != NULL && t->name != NULL; t++)
			nt++;
		sub = calloc(nt + 1, sizeof *sub);
		if (sub == NULL) {
			opts[n + i] = end;
			goto fail;
		}
		for (t = type->tunables; t != NULL && t->name != NULL; t++) {
			cfg_opt_t o = CFG_STR(t->name, NULL, CFGF_NODEFAULT);

			/* Read-only values are not settings. */
			if (t->flags & ELV_TUNABLE_READONLY)
				continue;
			o.validcb = config_tunable_cb;
			sub[j++] = o;
		}
		sub[j] = end;
		{
			cfg_opt_t o = CFG_SEC(type->name, sub, CFGF_NONE);

			opts[n + i] = o;
		}
	}
	opts[n + nr_types] = end;
	if (sections) {
		cfg_opt_t *sub = calloc(ARRAY_SIZE(config_group_keys) + 1,
					sizeof *sub);

		if (sub == NULL)
			goto fail;
		for (size_t i = 0; i < ARRAY_SIZE(config_group_keys); i++) {
			cfg_opt_t o = CFG_STR(config_group_keys[i], NULL,
					      CFGF_NODEFAULT);

			o.validcb = config_group_cb;
			sub[i] = o;
		}
		sub[ARRAY_SIZE(config_group_keys)] = end;
		{
			cfg_opt_t o = CFG_SEC("group", sub, CFGF_MULTI |
					      CFGF_TITLE | CFGF_NO_TITLE_DUPES);

			opts[n + nr_types] = o;
		}
		opts[n + nr_types + 1] = end;
	}
	return opts;

fail:
	for (cfg_opt_t *o = opts + n; o->name != NULL; o++)
		free(o->subopts);
	free(opts);
	return NULL;
}

static void config_table_free(cfg_opt_t *opts)
{
	for (cfg_opt_t *o = opts; o->name != NULL; o++)
		if (o->type == CFGT_SEC)
			free(o->subopts);
	free(opts);
}

bool config_named(const struct config *cfg, const char *name)
{
	const struct config_setting *s = config_find(name, strlen(name));

	return s != NULL && (cfg->named & CONFIG_BIT(s));
}

/*
 * Parse file into cfg: the plain settings only (the early pass, whose
 * errors the caller ignores), or everything.
 */
static int config_parse(struct config *cfg, const char *file, bool sections,
			char *err, size_t size)
{
	cfg_opt_t *opts;
	char *text;
	cfg_t *c;
	int ret;

	text = config_read_text(file, err, size);
	if (text == NULL)
		return -1;
	opts = config_table(sections);
	if (opts == NULL) {
		free(text);
		snprintf(err, size, "%s: out of memory", file);
		return -1;
	}
	pthread_mutex_lock(&config_parse_lock);
	c = cfg_init(opts, CFGF_NONE);
	config_table_free(opts);
	if (c == NULL) {
		pthread_mutex_unlock(&config_parse_lock);
		free(text);
		snprintf(err, size, "%s: out of memory", file);
		return -1;
	}
	config_ctx.cfg = cfg;
	config_ctx.file = file;
	config_ctx.err = err;
	config_ctx.size = size;
	config_ctx.failed = false;
	config_ctx.module_dir_line = 0;
	cfg_set_error_function(c, config_error);
	ret = cfg_parse_buf(c, text);
	if (ret != CFG_SUCCESS && !config_ctx.failed)
		snprintf(err, size, "%s: cannot parse", file);
	cfg->module_dir_line = config_ctx.module_dir_line;
	cfg_free(c);
	pthread_mutex_unlock(&config_parse_lock);
	free(text);
	return ret == CFG_SUCCESS ? 0 : -1;
}

/* The file to read: -o config=, else the default one if it exists. */
static int config_pick_file(struct config *cfg, char *err, size_t size)
{
	const char *file = cfg->config_file;

	free(cfg->config_read);
	cfg->config_read = NULL;
	if (file == NULL) {
		if (access(CONFIG_FILE, F_OK) != 0 && errno == ENOENT)
			return 0;	/* no file: built-in defaults */
		file = CONFIG_FILE;
	}
	if (access(file, R_OK) != 0) {
		snprintf(err, size, "configuration file %s: %s", file,
			 strerror(errno));
		return -1;
	}
	cfg->config_read = strdup(file);
	if (cfg->config_read == NULL) {
		snprintf(err, size, "%s: out of memory", file);
		return -1;
	}
	return 0;
}

int config_load_early(struct config *cfg, char *err, size_t size)
{
	char ignored[CONFIG_ERR_MAX];

	if (config_pick_file(cfg, err, size) != 0)
		return -1;
	if (cfg->config_read == NULL || config_given(cfg, "module_dir"))
		return 0;
	/* It stops at the first section: module_dir is all it is for. */
	config_parse(cfg, cfg->config_read, false, ignored, sizeof ignored);
	return 0;
}

int config_load(struct config *cfg, char *err, size_t size)
{
	char *loaded_from;
	int ret;

	if (cfg->config_read == NULL)
		return 0;
	loaded_from = strdup(cfg->module_dir);
	if (loaded_from == NULL) {
		snprintf(err, size, "out of memory");
		return -1;
	}
	ret = config_parse(cfg, cfg->config_read, true, err, size);
	if (ret == 0 && strcmp(loaded_from, cfg->module_dir) != 0) {
		snprintf(err, size, "%s:%d: module_dir must come before the "
			 "first scheduler section", cfg->config_read,
			 cfg->module_dir_line);
		ret = -1;
	}
	free(loaded_from);
	return ret;
}

int config_reload(const struct config *cur, struct config *next, char *err,
		  size_t size)
{
	if (config_init(next) != 0)
		goto nomem;
	next->backing = strdup(cur->backing);
	next->mountpoint = strdup(cur->mountpoint);
	if (next->backing == NULL || next->mountpoint == NULL)
		goto nomem;
	next->foreground = cur->foreground;
	next->debug = cur->debug;
	if (cur->config_file != NULL) {
		next->config_file = strdup(cur->config_file);
		if (next->config_file == NULL)
			goto nomem;
	}
	/* Modules are loaded once: module_dir stays as it is. */
	free(next->module_dir);
	next->module_dir = strdup(cur->module_dir);
	if (next->module_dir == NULL)
		goto nomem;
	for (unsigned i = 0; i < cur->nr_opts; i++)
		if (config_option(next, cur->opts[i], err, size) < 0)
			return -1;
	if (config_pick_file(next, err, size) != 0)
		return -1;
	if (next->config_read == NULL)
		return 0;
	return config_parse(next, next->config_read, true, err, size);

nomem:
	snprintf(err, size, "out of memory");
	return -1;
}

/* The file's tunable value for t, or the built-in default. */
static int64_t config_tunable_value(const struct config *cfg,
				    const struct elevator_type *type,
				    const struct elv_tunable *t)
{
	const struct elv_tunable_value *ct;

	for (ct = cfg->tunables; ct != NULL; ct = ct->next)
		if (ct->type == type && ct->t == t)
			return ct->value;
	return t->def;
}

int config_apply_tunables(const struct config *cfg, char *err, size_t size)
{
	const struct elv_tunable_value *ct;
	int ret;

	elv_tunable_defaults_clear();
	for (ct = cfg->tunables; ct != NULL; ct = ct->next) {
		ret = elv_tunable_default_set(ct->type, ct->t->name, ct->value);
		if (ret != 0) {
			snprintf(err, size, "%s: %s = %" PRId64 ": %s",
				 ct->type->name, ct->t->name, ct->value,
				 strerror(-ret));
			return -1;
		}
	}
	return 0;
}

/* A string as libconfuse reads it back: quoted, with \ and " escaped. */
static void config_print_quoted(FILE *fp, const char *value)
{
	fputc('"', fp);
	for (; *value != '\0'; value++) {
		if (*value == '"' || *value == '\\')
			fputc('\\', fp);
		fputc(*value, fp);
	}
	fputc('"', fp);
}

static void config_print_str(FILE *fp, const char *name, const char *value)
{
	fprintf(fp, "%s = ", name);
	config_print_quoted(fp, value);
	fputc('\n', fp);
}

/* A setting's value, in the file's syntax. */
static void config_print_value(FILE *fp, const struct config *cfg,
			       const struct config_setting *s)
{
	const void *field = config_field(cfg, s);

	if (s->type == CONFIG_UINT)
		fprintf(fp, "%s = %u\n", s->name, *(const unsigned *)field);
	else if (s->type == CONFIG_BOOL)
		fprintf(fp, "%s = %s\n", s->name,
			*(const bool *)field ? "yes" : "no");
	else
		config_print_str(fp, s->name, *(char *const *)field);
}

void config_print(const struct config *cfg, FILE *fp)
{
	const struct elevator_type *type;

	fprintf(fp, "# fuse-iosched: the effective configuration\n"
		"# (built-in defaults < %s < -o options)\n",
		cfg->config_read != NULL ? cfg->config_read :
		"no configuration file");
	for (size_t i = 0; i < ARRAY_SIZE(config_settings); i++)
		config_print_value(fp, cfg, &config_settings[i]);
	/* Each tunable as fuse-iosched(8) lists it: default, unit, range. */
	for (unsigned i = 0; (type = elv_nth(i)) != NULL; i++) {
		const struct elv_tunable *t = type->tunables;

		fprintf(fp, "\n# %s: %s\n%s {\n", type->name,
			type->description != NULL ? type->description : "",
			type->name);
		for (; t != NULL && t->name != NULL; t++) {
			if (t->flags & ELV_TUNABLE_READONLY)
				continue;
			fprintf(fp, "\t%s = %" PRId64 "\t# %s%s(%" PRId64
				" to %" PRId64 "): %s\n", t->name,
				config_tunable_value(cfg, type, t),
				t->unit != NULL ? t->unit : "",
				t->unit != NULL && *t->unit != '\0' ? " " : "",
				t->min, t->max,
				t->description != NULL ? t->description : "");
		}
		fputs("}\n", fp);
	}
	for (const struct config_group *g = cfg->groups_conf; g != NULL;
	     g = g->next) {
		const uint64_t v[] = {
			g->lim.bps[ELV_READ], g->lim.bps[ELV_WRITE],
			g->lim.iops[ELV_READ], g->lim.iops[ELV_WRITE],
			g->weight,
		};

		fputs("\n", fp);
		fputs("group ", fp);
		config_print_quoted(fp, g->path);
		fputs(" {\n", fp);
		for (size_t i = 0; i < ARRAY_SIZE(config_group_keys); i++)
			if (v[i] != 0)
				fprintf(fp, "\t%s = %" PRIu64 "\n",
					config_group_keys[i], v[i]);
		fputs("}\n", fp);
	}
}

/* Text from column col, wrapped at 76 to column indent. */
static void config_usage_words(FILE *fp, const char *text, size_t col,
			       size_t indent)
{
	const size_t width = 76;
	bool first = true;

	while (*text != '\0') {
		size_t n = strcspn(text, " ");

		if (!first && col + 1 + n > width) {
			fprintf(fp, "\n%*s", (int)indent, "");
			col = indent;
			first = true;
		}
		if (!first) {
			fputc(' ', fp);
			col++;
		}
		fprintf(fp, "%.*s", (int)n, text);
		col += n;
		first = false;
		text += n;
		text += strspn(text, " ");
	}
}

void config_usage(FILE *fp)
{
	for (size_t i = 0; i < ARRAY_SIZE(config_settings); i++) {
		const struct config_setting *s = &config_settings[i];
		char opt[64], text[512];
		const char *def;
		size_t col;
		int n;

		n = snprintf(opt, sizeof opt, "    -o %s%s%s", s->name,
			     s->arg != NULL ? "=" : "",
			     s->arg != NULL ? s->arg : "");
		fprintf(fp, "%-26s ", opt);
		col = (n < 26 ? 26 : (size_t)n) + 1;
		def = s->def_doc != NULL ? s->def_doc : s->def;
		if (s->type == CONFIG_UINT)
			snprintf(text, sizeof text, "%s, %u to %u (default: %s)",
				 s->help, s->min, s->max, def);
		else
			snprintf(text, sizeof text, "%s (default: %s)", s->help,
				 def);
		config_usage_words(fp, text, col, 27);
		fputc('\n', fp);
	}
}

/*
 * What SIGHUP applies at once and what waits for the next mount, from the
 * table (tests/man-coverage.sh checks the pages' lists against it).
 */
void config_usage_reload(FILE *fp)
{
	const struct config_setting *s,
		*end = config_settings + ARRAY_SIZE(config_settings);
	size_t nr_mount = 0, n = 0, len = 0;
	char *text = NULL;
	FILE *out = open_memstream(&text, &len);

	if (out == NULL)
		return;
	fputs("SIGHUP re-reads the configuration file: a change of ", out);
	for (s = config_settings; s < end; s++) {
		if (s->apply != NULL)
			fprintf(out, "%s, ", s->name);
		else
			nr_mount++;
	}
	fputs("or a scheduler's tunables applies at once; of ", out);
	for (s = config_settings; s < end; s++)
		if (s->apply == NULL)
			fprintf(out, "%s%s", ++n == 1 ? "" :
				n == nr_mount ? " or " : ", ", s->name);
	fputs(", at the next mount.", out);
	if (fclose(out) == 0) {
		config_usage_words(fp, text, 0, 0);
		fputc('\n', fp);
	}
	free(text);
}

/* ------------------------------------------------------------------ */
/* SIGHUP: what changed is applied, or said to wait for the next mount. */

/* A setting's value as the log shows it. */
static const char *config_value_str(const struct config *cfg,
				    const struct config_setting *s, char *buf,
				    size_t size)
{
	const void *field = config_field(cfg, s);

	if (s->type == CONFIG_UINT)
		snprintf(buf, size, "%u", *(const unsigned *)field);
	else if (s->type == CONFIG_BOOL)
		snprintf(buf, size, "%s", *(const bool *)field ? "yes" : "no");
	else
		log_value(buf, size, *(char *const *)field,
			  strlen(*(char *const *)field));
	return buf;
}

static bool config_equal(const struct config *a, const struct config *b,
			 const struct config_setting *s)
{
	const void *fa = config_field(a, s), *fb = config_field(b, s);

	if (s->type == CONFIG_UINT)
		return *(const unsigned *)fa == *(const unsigned *)fb;
	if (s->type == CONFIG_BOOL)
		return *(const bool *)fa == *(const bool *)fb;
	return strcmp(*(char *const *)fa, *(char *const *)fb) == 0;
}

static void config_swap(struct config *a, struct config *b,
			const struct config_setting *s)
{
	size_t size = s->type == CONFIG_UINT ? sizeof(unsigned) :
		      s->type == CONFIG_BOOL ? sizeof(bool) : sizeof(char *);
	char tmp[sizeof(char *) > sizeof(unsigned) ? sizeof(char *) :
		 sizeof(unsigned)];

	memcpy(tmp, config_field(a, s), size);
	memcpy(config_field(a, s), config_field(b, s), size);
	memcpy(config_field(b, s), tmp, size);
}

static void config_apply_scheduler(struct queue *q, const struct config *next)
{
	const struct elevator_type *type = elv_get(next->scheduler);

	/* elv_switch logs the switch, or why it failed. */
	if (type == NULL)
		log_err("configuration reload: no scheduler %s",
			next->scheduler);
	else
		elv_switch(q, type);
}

static void config_apply_nr_requests(struct queue *q,
				     const struct config *next)
{
	queue_set_nr_requests(q, next->nr_requests);
}

static void config_apply_log(struct queue *q, const struct config *next)
{
	(void)q;
	log_set_level(config_log_level(next));
}

struct config_tunable_change {
	const struct config *cur, *next;
	unsigned failed;
	char what[96];		/* the first failure, for the log */
};

/* Under the queue lock: what the file changed, on the active instance. */
static int config_reload_tunables(struct elevator_queue *eq, void *arg)
{
	struct config_tunable_change *c = arg;
	const struct elv_tunable *t;

	for (t = eq->type->tunables; t != NULL && t->name != NULL; t++) {
		int64_t was = config_tunable_value(c->cur, eq->type, t);
		int64_t now = config_tunable_value(c->next, eq->type, t);

		if (was == now || elv_tunable_set(eq, t->name, now) == 0)
			continue;
		if (c->failed++ == 0)
			snprintf(c->what, sizeof c->what, "%s %s %" PRId64,
				 eq->type->name, t->name, now);
	}
	return 0;
}

/*
 * Every tunable the file changed, of every scheduler: the defaults of new
 * instances change (config_apply_tunables), whether or not the scheduler
 * is active; the active one's instance also takes it.
 */
static void config_reload_log_tunables(const struct config *cur,
				       const struct config *next,
				       const struct elevator_type *active)
{
	const struct elevator_type *type;

	for (unsigned i = 0; (type = elv_nth(i)) != NULL; i++) {
		const struct elv_tunable *t = type->tunables;

		for (; t != NULL && t->name != NULL; t++) {
			int64_t was = config_tunable_value(cur, type, t);
			int64_t now = config_tunable_value(next, type, t);

			if (was == now)
				continue;
			log_info("configuration reload: %s %s %" PRId64 " -> %"
				 PRId64 "%s", type->name, t->name, was, now,
				 type == active ? "" : " (for new instances)");
		}
	}
}

void config_reload_apply(struct config *cur, struct config *next,
			 struct queue *q)
{
	struct config_tunable_change tc = { .cur = cur, .next = next };
	struct elv_tunable_value *swap;
	struct config_group *groups;

	/*
	 * In table order, so the switch comes first: the new instance
	 * starts with the new defaults, and the tunables below then find
	 * it active.  Applied settings move into cur, so that the next
	 * reload compares with what is in force.
	 */
	for (size_t i = 0; i < ARRAY_SIZE(config_settings); i++) {
		const struct config_setting *s = &config_settings[i];
		char was[128], now[128];

		if (config_equal(cur, next, s))
			continue;
		config_value_str(cur, s, was, sizeof was);
		config_value_str(next, s, now, sizeof now);
		if (s->apply == NULL) {
			log_warn("configuration reload: %s %s -> %s: it takes "
				 "effect at the next mount", s->name, was, now);
			continue;
		}
		log_info("configuration reload: %s %s -> %s", s->name, was,
			 now);
		s->apply(q, next);
		config_swap(cur, next, s);
	}
	config_reload_log_tunables(cur, next, queue_elevator_type(q));
	queue_with_elevator(q, config_reload_tunables, &tc);
	if (tc.failed > 0)
		log_err("configuration reload: %u tunables not applied to the "
			"active scheduler, the first %s", tc.failed, tc.what);
	swap = cur->tunables;
	cur->tunables = next->tunables;
	next->tunables = swap;
	/* Group sections apply at once (the daemon's cgroup_config). */
	groups = cur->groups_conf;
	cur->groups_conf = next->groups_conf;
	next->groups_conf = groups;
}

void config_free(struct config *cfg)
{
	config_free_values(cfg);
	free(cfg->backing);
	free(cfg->mountpoint);
	free(cfg->config_file);
	free(cfg->config_read);
	for (unsigned i = 0; i < cfg->nr_opts; i++)
		free(cfg->opts[i]);
	free(cfg->opts);
	elv_tunable_values_free(cfg->tunables);
	while (cfg->groups_conf != NULL) {
		struct config_group *g = cfg->groups_conf;

		cfg->groups_conf = g->next;
		free(g->path);
		free(g);
	}
	memset(cfg, 0, sizeof *cfg);
}
