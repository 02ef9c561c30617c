/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test module: a scheduler built for ABI version 1, whose entry point is
 * written by hand as the version 1 header's macro made it.  The loader
 * must refuse it, naming both versions, without calling any of its
 * methods.
 */
#include "fuse-iosched/elevator.h"

static void badabi_add_request(struct elevator_queue *eq,
			       struct elv_request *rq, uint64_t now_ns)
{
}

static struct elv_request *badabi_dispatch(struct elevator_queue *eq,
					   uint64_t now_ns, bool force)
{
	return NULL;
}

static bool badabi_has_work(struct elevator_queue *eq)
{
	return false;
}

static const struct elevator_type badabi_type = {
	.abi_version = 1,	/* not IOSCHED_ABI_VERSION */
	.struct_size = sizeof(struct elevator_type),
	.name = "badabi",
	.description = "test: built for ABI version 1",
	.add_request = badabi_add_request,
	.dispatch = badabi_dispatch,
	.has_work = badabi_has_work,
};

__attribute__((visibility("default")))
const struct elevator_type *iosched_elevator(void);
const struct elevator_type *iosched_elevator(void)
{
	return &badabi_type;
}
