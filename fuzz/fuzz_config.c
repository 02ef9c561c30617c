/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: the configuration parser (config.c), as the daemon runs it
 * at mount time: -o options first, then the file (config_load_early,
 * config_load), then its tunables made the defaults, and the result
 * printed back (config_print).
 *
 * Input: leading lines of the form "-o OPTION" are -o options (config=
 * ones are skipped: the file is ours); the rest is the file's text,
 * written to a temporary file.  Schedulers for sections come from
 * FUZZ_MODULE_DIR (e.g. schedulers/.libs) when set; noop always exists.
 *
 *	./configure --enable-fuzzing CC=clang && make
 *	FUZZ_MODULE_DIR=schedulers/.libs \
 *		fuzz/fuzz_config -max_total_time=60 fuzz/corpus/config
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "fuse-iosched.h"
#include "fuzz.h"

static char fuzz_path[64];
static FILE *fuzz_null;

static void fuzz_config_cleanup(void)
{
	unlink(fuzz_path);
}

static void fuzz_config_init(void)
{
	const char *dir = getenv("FUZZ_MODULE_DIR");
	int fd;

	log_set_level(LOG_ERR);
	elv_register(elv_noop(), "built-in");
	if (dir != NULL) {
		module_set_dir(dir);
		module_load_all();
	}
	snprintf(fuzz_path, sizeof fuzz_path, "/tmp/fuzz-config.XXXXXX");
	fd = mkstemp(fuzz_path);
	if (fd < 0)
		fuzz_fail(__FILE__, __LINE__, "mkstemp");
	close(fd);
	atexit(fuzz_config_cleanup);
	fuzz_null = fopen("/dev/null", "w");
	if (fuzz_null == NULL)
		fuzz_fail(__FILE__, __LINE__, "/dev/null");
}

/* The -o lines at the start; returns where the file's text begins. */
static size_t fuzz_config_options(struct config *cfg, const uint8_t *data,
				  size_t size)
{
	char opt[1024], err[CONFIG_ERR_MAX];
	size_t pos = 0;

	while (size - pos > 3 && memcmp(data + pos, "-o ", 3) == 0) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t end = nl != NULL ? (size_t)(nl - data) : size;
		size_t len = end - pos - 3;
		int ret;

		if (len >= sizeof opt)
			len = sizeof opt - 1;
		memcpy(opt, data + pos + 3, len);
		opt[len] = '\0';
		/* A NUL inside ends the option, as in a C string argv. */
		if (strncmp(opt, "config=", 7) != 0) {
			err[0] = '\0';
			ret = config_option(cfg, opt, err, sizeof err);
			fuzz_assert(ret >= -1 && ret <= 1);
			fuzz_assert(ret != -1 || err[0] != '\0');
		}
		pos = nl != NULL ? end + 1 : size;
	}
	return pos;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[CONFIG_ERR_MAX];
	struct config cfg;
	size_t pos;
	FILE *fp;

	if (fuzz_null == NULL)
		fuzz_config_init();
	if (config_init(&cfg) != 0)
		return 0;
	pos = fuzz_config_options(&cfg, data, size);
	fp = fopen(fuzz_path, "w");
	if (fp == NULL)
		fuzz_fail(__FILE__, __LINE__, "cannot write the temporary file");
	if (fwrite(data + pos, 1, size - pos, fp) != size - pos)
		fuzz_fail(__FILE__, __LINE__, "short write");
	fclose(fp);
	free(cfg.config_file);
	cfg.config_file = strdup(fuzz_path);
	fuzz_assert(cfg.config_file != NULL);

	err[0] = '\0';
	if (config_load_early(&cfg, err, sizeof err) == 0) {
		err[0] = '\0';
		if (config_load(&cfg, err, sizeof err) == 0) {
			if (config_apply_tunables(&cfg, err, sizeof err) == 0)
				config_print(&cfg, fuzz_null);
			elv_tunable_defaults_clear();
		} else {
			/* Every refusal says why, in a terminated string. */
			fuzz_assert(err[0] != '\0');
			fuzz_assert(memchr(err, '\0', sizeof err) != NULL);
		}
	}
	config_free(&cfg);
	return 0;
}
