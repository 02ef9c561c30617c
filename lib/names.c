/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Settings chosen by name: the backing_io modes (backing.c applies them),
 * the engines (dispatch.c's threads, uring.c's io_uring), and the lookup
 * that log levels share.
 */
#include <string.h>

#include "fuse-iosched.h"

int names_index(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] != NULL && strcmp(name, names[i]) == 0)
			return (int)i;
	return -1;
}

static const char *const backing_io_names[] = {
	[BACKING_IO_AUTO] = "auto",
	[BACKING_IO_DIRECT] = "direct",
	[BACKING_IO_BUFFERED] = "buffered",
};

int backing_io_parse(const char *name)
{
	return names_index(backing_io_names, ARRAY_SIZE(backing_io_names),
			   name);
}

bool backing_io_name_valid(const char *name)
{
	return backing_io_parse(name) >= 0;
}

const char *backing_io_name(enum backing_io mode)
{
	return backing_io_names[mode];
}

static const char *const engine_names[] = {
	[ENGINE_THREADS] = "threads",
	[ENGINE_URING] = "uring",
};

int engine_parse(const char *name)
{
	return names_index(engine_names, ARRAY_SIZE(engine_names), name);
}

bool engine_name_valid(const char *name)
{
	return engine_parse(name) >= 0;
}
