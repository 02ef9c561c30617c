/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The backing_io setting's modes by name (backing.c applies them).
 */
#include <string.h>

#include "fuse-iosched.h"

static const char *const backing_io_names[] = {
	[BACKING_IO_AUTO] = "auto",
	[BACKING_IO_DIRECT] = "direct",
	[BACKING_IO_BUFFERED] = "buffered",
};

int backing_io_parse(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(backing_io_names); i++)
		if (strcmp(name, backing_io_names[i]) == 0)
			return (int)i;
	return -1;
}

bool backing_io_name_valid(const char *name)
{
	return backing_io_parse(name) >= 0;
}

const char *backing_io_name(enum backing_io mode)
{
	return backing_io_names[mode];
}
