/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test modules the loader must refuse, one defect each, all built from
 * this file: Makefile.am gives each its name (BADTYPE_NAME, which is also
 * its file's) and one BADTYPE_* defect.  Built without a defect (goodtype)
 * it loads, so a refusal is the defect's doing.  BADTYPE_NEWER is no
 * defect: the larger structure of a later 3.x header, with hooks this host
 * does not know, must load with those left unread.
 */
#include <stddef.h>

#include "fuse-iosched/elevator.h"

struct badtype_data {
	int64_t knob;
	int64_t other;
	uint64_t events;
};

static void badtype_add_request(struct elevator_queue *eq, struct elv_request *rq,
				uint64_t now_ns)
{
}

static struct elv_request *badtype_dispatch(struct elevator_queue *eq,
					uint64_t now_ns, bool force)
{
	return NULL;
}

static bool badtype_has_work(struct elevator_queue *eq)
{
	return false;
}

/* The knob's default, range and place, unless the defect changes one. */
#ifndef BADTYPE_DEF
#define BADTYPE_DEF 5
#endif
#ifndef BADTYPE_OFFSET
#define BADTYPE_OFFSET offsetof(struct badtype_data, other)
#endif

static const struct elv_tunable badtype_tunables[] = {
	{ "knob", BADTYPE_OFFSET, BADTYPE_DEF, 1, 10, "", "test" },
	{ NULL, 0, 0, 0, 0, NULL, NULL },
};

/* The counter's name and place, unless the defect changes one. */
#ifndef BADTYPE_COUNTER_NAME
#define BADTYPE_COUNTER_NAME "events"
#endif
#ifndef BADTYPE_COUNTER_OFFSET
#define BADTYPE_COUNTER_OFFSET offsetof(struct badtype_data, events)
#endif

static const struct elv_counter badtype_counters[] = {
	{ BADTYPE_COUNTER_NAME, BADTYPE_COUNTER_OFFSET },
	{ NULL, 0 },
};

static struct elevator_type badtype_type = {
	.name = BADTYPE_NAME,
	.description = "test: a defect the loader must refuse",
	.data_size = sizeof(struct badtype_data),
	.add_request = badtype_add_request,
#ifndef BADTYPE_NO_DISPATCH
	.dispatch = badtype_dispatch,
#endif
#ifndef BADTYPE_NO_HAS_WORK
	.has_work = badtype_has_work,
#endif
	.tunables = badtype_tunables,
	.counters = badtype_counters,
};

#if defined(BADTYPE_SMALL)
/*
 * A struct elevator_type shorter than 3.0's, exported by hand since
 * IOSCHED_ELEVATOR() fills in the full size: it ends before exit_process.
 */
__attribute__((visibility("default")))
const struct elevator_type *iosched_elevator(void);
const struct elevator_type *iosched_elevator(void)
{
	badtype_type.abi_version = IOSCHED_ABI_VERSION;
	badtype_type.struct_size = offsetof(struct elevator_type,
					    exit_process);
	return &badtype_type;
}
#elif defined(BADTYPE_NEWER)
/* As a later 3.x header would make it: two hooks more, never called. */
static struct {
	struct elevator_type type;
	void (*later[2])(void);
} badtype_newer;

__attribute__((visibility("default")))
const struct elevator_type *iosched_elevator(void);
const struct elevator_type *iosched_elevator(void)
{
	badtype_newer.type = badtype_type;
	badtype_newer.type.abi_version = IOSCHED_ABI_VERSION;
	badtype_newer.type.struct_size = sizeof badtype_newer;
	badtype_newer.later[0] = badtype_newer.later[1] = (void (*)(void))1;
	return &badtype_newer.type;
}
#else
IOSCHED_ELEVATOR(badtype_type);
#endif
