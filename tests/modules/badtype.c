/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Test modules the loader must refuse, one defect each, all built from
 * this file: Makefile.am gives each its name (BADTYPE_NAME, which is also
 * its file's) and one BADTYPE_* defect.  Built without a defect (goodtype)
 * it loads, so a refusal is the defect's doing.  BADTYPE_V20 is no defect:
 * the structure of ABI 2.0, which ends before the counters, must load
 * with its bad counter table unseen.
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
	.ops = {
		.add_request = badtype_add_request,
#ifndef BADTYPE_NO_DISPATCH
		.dispatch = badtype_dispatch,
#endif
#ifndef BADTYPE_NO_HAS_WORK
		.has_work = badtype_has_work,
#endif
	},
	.tunables = badtype_tunables,
	.counters = badtype_counters,
};

#if defined(BADTYPE_SMALL) || defined(BADTYPE_V20)
/*
 * A struct elevator_type shorter than ours, exported by hand since
 * IOSCHED_ELEVATOR() fills in the full size: BADTYPE_SMALL ends before
 * the tunables, as a module older than ABI 2.0 would; BADTYPE_V20 ends
 * after them, as one built against the 2.0 header does.
 */
#ifdef BADTYPE_SMALL
#define BADTYPE_SIZE offsetof(struct elevator_type, tunables)
#else
#define BADTYPE_SIZE offsetof(struct elevator_type, counters)
#endif
__attribute__((visibility("default")))
const struct elevator_type *iosched_elevator(void);
const struct elevator_type *iosched_elevator(void)
{
	badtype_type.abi_version = IOSCHED_ABI_VERSION;
	badtype_type.struct_size = BADTYPE_SIZE;
	return &badtype_type;
}
#else
IOSCHED_ELEVATOR(badtype_type);
#endif
