/*
 * Settings: built-in defaults, then the configuration file, then -o
 * options.  The defaults are chosen so that "fuse-iosched BACKING
 * MOUNTPOINT" works on any machine without a configuration file.
 *
 * One table (config_settings) names every setting; the same parser checks
 * a value whether it comes from -o or from the file, so both give the same
 * message for the same mistake.  The file is libconfuse syntax:
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
 * find their context in config_ctx.
 */
#include <confuse.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuse-iosched.h"

#define DEFAULT_SCHEDULER "deadline"
#define DEFAULT_NR_REQUESTS 128
/*
 * The kernel caps background requests (readahead, async direct I/O,
 * writeback) at 12 by default, which would starve the elevator of
 * requests to sort and merge; 64 gives it room without unbounded memory.
 */
#define DEFAULT_MAX_BACKGROUND 64
#define THREADS_MAX 256
#define MAX_BACKGROUND_MAX 65535

enum config_type {
	CONFIG_STR,		/* any non-empty string */
	CONFIG_NAME,		/* a scheduler name */
	CONFIG_UINT,		/* [min, max] */
	CONFIG_BOOL,		/* yes/no, true/false, on/off, 1/0 */
	CONFIG_LEVEL,		/* a log level name */
	CONFIG_MODEL,		/* a disk model name */
	CONFIG_BACKING_IO,	/* auto, direct or buffered (backing.c) */
};

struct config_setting {
	const char *name;
	enum config_type type;
	size_t offset;		/* in struct config */
	unsigned min, max;
};

#define CONFIG_FIELD(f) offsetof(struct config, f)

static const struct config_setting config_settings[] = {
	{ "scheduler", CONFIG_NAME, CONFIG_FIELD(scheduler), 0, 0 },
	{ "threads", CONFIG_UINT, CONFIG_FIELD(threads), 1, THREADS_MAX },
	{ "nr_requests", CONFIG_UINT, CONFIG_FIELD(nr_requests),
	  NR_REQUESTS_MIN, NR_REQUESTS_MAX },
	{ "module_dir", CONFIG_STR, CONFIG_FIELD(module_dir), 0, 0 },
	{ "max_background", CONFIG_UINT, CONFIG_FIELD(max_background),
	  1, MAX_BACKGROUND_MAX },
	{ "writeback_cache", CONFIG_BOOL, CONFIG_FIELD(writeback_cache), 0, 0 },
	{ "log", CONFIG_LEVEL, CONFIG_FIELD(log), 0, 0 },
	{ "disk_model", CONFIG_MODEL, CONFIG_FIELD(disk_model), 0, 0 },
	{ "backing_io", CONFIG_BACKING_IO, CONFIG_FIELD(backing_io), 0, 0 },
	{ "seek_ms", CONFIG_UINT, CONFIG_FIELD(seek_ms),
	  0, DISKMODEL_SEEK_MS_MAX },
	{ "rpm", CONFIG_UINT, CONFIG_FIELD(rpm),
	  DISKMODEL_RPM_MIN, DISKMODEL_RPM_MAX },
	{ "mb_per_s", CONFIG_UINT, CONFIG_FIELD(mb_per_s),
	  1, DISKMODEL_MB_PER_S_MAX },
};

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

int config_init(struct config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->threads = config_threads_default();
	cfg->nr_requests = DEFAULT_NR_REQUESTS;
	cfg->max_background = DEFAULT_MAX_BACKGROUND;
	cfg->log_level = LOG_INFO;
	cfg->seek_ms = DISKMODEL_SEEK_MS;
	cfg->rpm = DISKMODEL_RPM;
	cfg->mb_per_s = DISKMODEL_MB_PER_S;
	cfg->scheduler = strdup(DEFAULT_SCHEDULER);
	cfg->module_dir = strdup(MODULE_DIR);
	cfg->log = strdup("info");
	cfg->disk_model = strdup("none");
	cfg->backing_io = strdup("auto");
	if (cfg->scheduler == NULL || cfg->module_dir == NULL ||
	    cfg->log == NULL || cfg->disk_model == NULL ||
	    cfg->backing_io == NULL)
		return -ENOMEM;
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

/* Check value for s and store it in cfg; on failure say why in err. */
static int config_set(struct config *cfg, const struct config_setting *s,
		      const char *value, char *err, size_t size)
{
	void *field = (char *)cfg + s->offset;
	unsigned long n;
	char *end, *copy;
	int b;

	switch (s->type) {
	case CONFIG_UINT:
		errno = 0;
		n = strtoul(value, &end, 10);
		if (*value < '0' || *value > '9' || *end != '\0' ||
		    errno != 0 || n < s->min || n > s->max) {
			snprintf(err, size, "%s=%s: not a number from %u to %u",
				 s->name, value, s->min, s->max);
			return -1;
		}
		*(unsigned *)field = (unsigned)n;
		return 0;
	case CONFIG_BOOL:
		b = config_bool(value);
		if (b < 0) {
			snprintf(err, size, "%s=%s: not yes or no", s->name,
				 value);
			return -1;
		}
		*(bool *)field = b;
		return 0;
	case CONFIG_NAME:
		if (!elv_name_valid(value, strlen(value))) {
			snprintf(err, size, "%s=%s: not a scheduler name "
				 "([a-z0-9_-], at most 31)", s->name, value);
			return -1;
		}
		cfg->scheduler_set = true;
		break;
	case CONFIG_LEVEL:
		b = log_level_parse(value);
		if (b < 0) {
			snprintf(err, size, "%s=%s: not one of error, warning, "
				 "info, debug", s->name, value);
			return -1;
		}
		cfg->log_level = b;
		break;
	case CONFIG_MODEL:
		if (!diskmodel_name_valid(value)) {
			snprintf(err, size, "%s=%s: not none or hdd", s->name,
				 value);
			return -1;
		}
		break;
	case CONFIG_BACKING_IO:
		if (backing_io_parse(value) < 0) {
			snprintf(err, size, "%s=%s: not auto, direct or "
				 "buffered", s->name, value);
			return -1;
		}
		break;
	case CONFIG_STR:
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

static bool config_is_ignored(const char *opt)
{
	if (strncmp(opt, "x-", 2) == 0 || strncmp(opt, "comment=", 8) == 0)
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(config_ignored); i++)
		if (strcmp(opt, config_ignored[i]) == 0)
			return true;
	return false;
}

static int config_keep_opt(struct config *cfg, const char *opt)
{
	char **opts = realloc(cfg->opts, (cfg->nr_opts + 1) * sizeof *opts);

	if (opts == NULL)
		return -1;
	cfg->opts = opts;
	opts[cfg->nr_opts] = strdup(opt);
	if (opts[cfg->nr_opts] == NULL)
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

	if (config_is_ignored(opt)) {
		log_debug("-o %s: ignored (a mount(8) option)", opt);
		return 0;
	}
	if (strncmp(opt, "config=", 7) == 0) {
		if (opt[7] == '\0') {
			snprintf(err, size, "-o config=: empty path");
			return -1;
		}
		free(cfg->config_file);
		cfg->config_file = strdup(opt + 7);
		return cfg->config_file != NULL ? 0 : -1;
	}
	s = config_find(opt, len);
	if (s == NULL)
		return 1;
	/* A flag alone ("-o writeback_cache") means yes. */
	if (eq == NULL && s->type != CONFIG_BOOL) {
		snprintf(err, size, "-o %s: needs a value (%s=...)", opt, opt);
		return -1;
	}
	if (config_set(cfg, s, eq != NULL ? eq + 1 : "yes", err, size) != 0)
		return -1;
	cfg->given |= 1u << (s - config_settings);
	return config_keep_opt(cfg, opt);
}

/* ------------------------------------------------------------------ */
/* The file.                                                           */

/* libconfuse's messages, and ours from the callbacks: keep the first. */
static void __attribute__((format(printf, 2, 0)))
config_error(cfg_t *c, const char *fmt, va_list ap)
{
	char msg[CONFIG_ERR_MAX], hint[64] = "";

	if (config_ctx.failed)
		return;
	config_ctx.failed = true;
	vsnprintf(msg, sizeof msg, fmt, ap);
	/* Say what an unknown name is not, in our words. */
	if (strncmp(msg, "no such option ", 15) == 0) {
		if (strcmp(cfg_name(c), "root") == 0)
			snprintf(hint, sizeof hint,
				 " is neither a setting nor a scheduler");
		else
			snprintf(hint, sizeof hint, " is not a tunable of %s",
				 cfg_name(c));
		memmove(msg, msg + 15, strlen(msg + 15) + 1);
	}
	snprintf(config_ctx.err, config_ctx.size, "%s:%d: %s%s",
		 config_ctx.file, c->line, msg, hint);
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
	FILE *fp = fopen(file, "r");
	char *text = NULL;
	size_t len = 0;
	int c, quote = 0, line = 1, depth = 0, open_line = 0;
	bool comment = false, block = false;
	FILE *out;

	if (fp == NULL) {
		snprintf(err, size, "%s: %s", file, strerror(errno));
		return NULL;
	}
	out = open_memstream(&text, &len);
	if (out == NULL) {
		fclose(fp);
		snprintf(err, size, "%s: out of memory", file);
		return NULL;
	}
	while ((c = getc(fp)) != EOF) {
		int next;

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
	if (depth > 0) {
		free(text);
		snprintf(err, size, "%s:%d: the section opened here is not "
			 "closed", file, open_line);
		return NULL;
	}
	return text;
}

/* A plain setting was read: check it, apply it unless -o gave it. */
static int config_setting_cb(cfg_t *c, cfg_opt_t *opt)
{
	const char *name = cfg_opt_name(opt);
	const struct config_setting *s = config_find(name, strlen(name));
	const char *value = cfg_opt_getnstr(opt, 0);
	struct config scratch, *dst = config_ctx.cfg;
	char why[CONFIG_ERR_MAX];
	int ret;

	if (s == NULL || value == NULL)
		return -1;
	if (dst->given & (1u << (s - config_settings))) {
		/* Checked all the same, so a file is always valid or not. */
		memset(&scratch, 0, sizeof scratch);
		dst = &scratch;
	}
	ret = config_set(dst, s, value, why, sizeof why);
	if (dst == &scratch) {
		free(scratch.scheduler);
		free(scratch.module_dir);
		free(scratch.log);
		free(scratch.disk_model);
		free(scratch.backing_io);
	}
	if (ret == 0 && s->type == CONFIG_NAME && elv_find(value) == NULL) {
		char names[512];

		if (elv_list_names(names, sizeof names, NULL) < 0)
			names[0] = '\0';
		names[strcspn(names, "\n")] = '\0';
		snprintf(why, sizeof why, "scheduler=%s: no such scheduler "
			 "(available: %.300s)", value, names);
		ret = -1;
	}
	if (ret != 0) {
		cfg_error(c, "%s", why);
		return -1;
	}
	if (strcmp(name, "module_dir") == 0)
		config_ctx.module_dir_line = c->line;
	return 0;
}

/* A tunable in a scheduler section: the section is the scheduler. */
static int config_tunable_cb(cfg_t *sec, cfg_opt_t *opt)
{
	const struct elevator_type *type = elv_find(cfg_name(sec));
	const char *value = cfg_opt_getnstr(opt, 0);
	const struct elv_tunable *t;
	struct config_tunable *ct;
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
		cfg_error(sec, "%s: %s = %s: not a number", type->name,
			  t->name, value);
		return -1;
	}
	if (n < t->min || n > t->max) {
		cfg_error(sec, "%s: %s = %lld: out of range (%" PRId64
			  " to %" PRId64 ")", type->name, t->name, n, t->min,
			  t->max);
		return -1;
	}
	/* The last value in the file wins. */
	for (ct = config_ctx.cfg->tunables; ct != NULL; ct = ct->next)
		if (ct->t == t)
			break;
	if (ct == NULL) {
		ct = calloc(1, sizeof *ct);
		if (ct == NULL)
			return -1;
		ct->type = type;
		ct->t = t;
		ct->next = config_ctx.cfg->tunables;
		config_ctx.cfg->tunables = ct;
	}
	ct->value = n;
	return 0;
}

/* The registered schedulers, by name: "noop deadline" split. */
static unsigned config_types(const struct elevator_type **types,
			     unsigned max)
{
	char names[1024], *name, *save;
	unsigned n = 0;

	if (elv_list_names(names, sizeof names, NULL) < 0)
		return 0;
	for (name = strtok_r(names, " \n", &save); name != NULL && n < max;
	     name = strtok_r(NULL, " \n", &save)) {
		types[n] = elv_find(name);
		if (types[n] != NULL)
			n++;
	}
	return n;
}

#define CONFIG_TYPES_MAX 64

/*
 * The option table: every plain setting, and with sections, one section
 * per registered scheduler with a string option per tunable (the callback
 * parses it, so that a bad number gets our message).  Freed by the caller
 * with config_table_free once cfg_init has copied it.
 */
static cfg_opt_t *config_table(bool sections)
{
	const struct elevator_type *types[CONFIG_TYPES_MAX];
	unsigned nr_types = sections ? config_types(types, CONFIG_TYPES_MAX) : 0;
	size_t n = ARRAY_SIZE(config_settings);
	cfg_opt_t *opts = calloc(n + nr_types + 1, sizeof *opts);
	cfg_opt_t end = CFG_END();

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

		for (t = types[i]->tunables; t != NULL && t->name != NULL; t++)
			nt++;
		sub = calloc(nt + 1, sizeof *sub);
		if (sub == NULL) {
			opts[n + i] = end;
			goto fail;
		}
		for (t = types[i]->tunables; t != NULL && t->name != NULL; t++) {
			cfg_opt_t o = CFG_STR(t->name, NULL, CFGF_NODEFAULT);

			o.validcb = config_tunable_cb;
			sub[j++] = o;
		}
		sub[j] = end;
		{
			cfg_opt_t o = CFG_SEC(types[i]->name, sub, CFGF_NONE);

			opts[n + i] = o;
		}
	}
	opts[n + nr_types] = end;
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

bool config_given(const struct config *cfg, const char *name)
{
	const struct config_setting *s = config_find(name, strlen(name));

	return s != NULL && (cfg->given & (1u << (s - config_settings)));
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

int64_t config_tunable_value(const struct config *cfg,
			     const struct elevator_type *type,
			     const struct elv_tunable *t)
{
	const struct config_tunable *ct;

	for (ct = cfg->tunables; ct != NULL; ct = ct->next)
		if (ct->type == type && ct->t == t)
			return ct->value;
	return t->def;
}

int config_apply_tunables(const struct config *cfg, char *err, size_t size)
{
	const struct config_tunable *ct;
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
static void config_print_str(FILE *fp, const char *name, const char *value)
{
	fprintf(fp, "%s = \"", name);
	for (; *value != '\0'; value++) {
		if (*value == '"' || *value == '\\')
			fputc('\\', fp);
		fputc(*value, fp);
	}
	fputs("\"\n", fp);
}

void config_print(const struct config *cfg, FILE *fp)
{
	const struct elevator_type *types[CONFIG_TYPES_MAX];
	unsigned nr_types = config_types(types, CONFIG_TYPES_MAX);

	fprintf(fp, "# fuse-iosched: the effective configuration\n"
		"# (built-in defaults < %s < -o options)\n",
		cfg->config_read != NULL ? cfg->config_read :
		"no configuration file");
	config_print_str(fp, "scheduler", cfg->scheduler);
	fprintf(fp, "threads = %u\n", cfg->threads);
	fprintf(fp, "nr_requests = %u\n", cfg->nr_requests);
	config_print_str(fp, "module_dir", cfg->module_dir);
	fprintf(fp, "max_background = %u\n", cfg->max_background);
	fprintf(fp, "writeback_cache = %s\n",
		cfg->writeback_cache ? "yes" : "no");
	config_print_str(fp, "log", cfg->log);
	config_print_str(fp, "disk_model", cfg->disk_model);
	fprintf(fp, "seek_ms = %u\n", cfg->seek_ms);
	fprintf(fp, "rpm = %u\n", cfg->rpm);
	fprintf(fp, "mb_per_s = %u\n", cfg->mb_per_s);
	config_print_str(fp, "backing_io", cfg->backing_io);
	for (unsigned i = 0; i < nr_types; i++) {
		const struct elv_tunable *t = types[i]->tunables;

		fprintf(fp, "\n# %s: %s\n%s {\n", types[i]->name,
			types[i]->description != NULL ?
			types[i]->description : "", types[i]->name);
		for (; t != NULL && t->name != NULL; t++)
			fprintf(fp, "\t%s = %" PRId64 "\t# %s%s%s\n", t->name,
				config_tunable_value(cfg, types[i], t),
				t->unit != NULL ? t->unit : "",
				t->unit != NULL && *t->unit != '\0' ? ": " : "",
				t->description != NULL ? t->description : "");
		fputs("}\n", fp);
	}
}

void config_free(struct config *cfg)
{
	struct config_tunable *ct, *next;

	free(cfg->backing);
	free(cfg->mountpoint);
	free(cfg->scheduler);
	free(cfg->module_dir);
	free(cfg->log);
	free(cfg->disk_model);
	free(cfg->backing_io);
	free(cfg->config_file);
	free(cfg->config_read);
	for (unsigned i = 0; i < cfg->nr_opts; i++)
		free(cfg->opts[i]);
	free(cfg->opts);
	for (ct = cfg->tunables; ct != NULL; ct = next) {
		next = ct->next;
		free(ct);
	}
	memset(cfg, 0, sizeof *cfg);
}
