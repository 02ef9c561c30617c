/*
 * Test module: a scheduler built for another ABI version.  The loader must
 * refuse it without calling any of its methods.
 */
#include "fuse-iosched/elevator.h"

static void badabi_add_request(struct elevator_queue *eq, struct elv_request *rq,
			       uint64_t now_ns)
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
	.abi_version = 999,	/* not IOSCHED_ABI_VERSION */
	.struct_size = sizeof(struct elevator_type),
	.name = "badabi",
	.description = "test: wrong ABI version",
	.ops = {
		.add_request = badabi_add_request,
		.dispatch = badabi_dispatch,
		.has_work = badabi_has_work,
	},
};

IOSCHED_ELEVATOR(badabi_type);
