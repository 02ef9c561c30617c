/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test module: a scheduler that forgot IOSCHED_ELEVATOR(), so the loader
 * finds no entry symbol and must refuse the file.
 */
#include "fuse-iosched/elevator.h"

/* Visible, but under the wrong name: only iosched_elevator counts. */
extern const struct elevator_type nosym_type;

static void nosym_add_request(struct elevator_queue *eq, struct elv_request *rq,
			      uint64_t now_ns)
{
}

static struct elv_request *nosym_dispatch(struct elevator_queue *eq,
				      uint64_t now_ns, bool force)
{
	return NULL;
}

static bool nosym_has_work(struct elevator_queue *eq)
{
	return false;
}

const struct elevator_type nosym_type = {
	.name = "nosym",
	.description = "test: no entry symbol",
	.add_request = nosym_add_request,
	.dispatch = nosym_dispatch,
	.has_work = nosym_has_work,
};
