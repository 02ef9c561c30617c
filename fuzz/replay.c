/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A main() for the fuzz targets without libFuzzer: each argument is a
 * file, or a directory whose files are read, and each file's bytes go to
 * LLVMFuzzerTestOneInput once.  tests/fuzz-regress.sh runs it over
 * fuzz/corpus and fuzz/regress, so that inputs that once crashed stay
 * fixed in a normal build (gcc, no clang needed).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static unsigned replay_count;

static int replay_file(const char *path)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t len = 0, cap = 0, n;

	if (fp == NULL) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (len == cap) {
			uint8_t *p;

			cap = cap == 0 ? 4096 : cap * 2;
			p = realloc(data, cap);
			if (p == NULL) {
				fprintf(stderr, "%s: out of memory\n", path);
				free(data);
				fclose(fp);
				return -1;
			}
			data = p;
		}
		n = fread(data + len, 1, cap - len, fp);
		len += n;
	} while (n > 0);
	if (ferror(fp)) {
		fprintf(stderr, "%s: read error\n", path);
		free(data);
		fclose(fp);
		return -1;
	}
	fclose(fp);
	/* A copy of exactly len bytes: reads past the end are caught. */
	{
		uint8_t *exact = malloc(len > 0 ? len : 1);

		if (exact == NULL) {
			free(data);
			return -1;
		}
		memcpy(exact, data, len);
		free(data);
		fprintf(stderr, "replay %s (%zu bytes)\n", path, len);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
	}
	replay_count++;
	return 0;
}

static int replay_path(const char *path)
{
	struct dirent **names;
	struct stat st;
	int n, ret = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);
	/* Sorted, so that a run is the same every time. */
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char sub[4096];

		if (names[i]->d_name[0] != '.') {
			snprintf(sub, sizeof sub, "%s/%s", path,
				 names[i]->d_name);
			if (replay_path(sub) != 0)
				ret = -1;
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	int ret = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i]) != 0)
			ret = 1;
	printf("%s: %u inputs replayed\n", argv[0], replay_count);
	return ret;
}
