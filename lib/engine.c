/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The engine setting's names: how the daemon performs what the elevator
 * dispatches (dispatch.c: a pool of threads, or uring.c's io_uring).
 */
#include <string.h>

#include "fuse-iosched.h"

static const char *const engine_names[] = {
	[ENGINE_THREADS] = "threads",
	[ENGINE_URING] = "uring",
};

int engine_parse(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(engine_names); i++)
		if (strcmp(name, engine_names[i]) == 0)
			return (int)i;
	return -1;
}

bool engine_name_valid(const char *name)
{
	return engine_parse(name) >= 0;
}
