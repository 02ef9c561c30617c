/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: elv_store, what a write to .control/scheduler runs once
 * control.c has stripped the white space around it (fuzzed with the
 * number parser, fuzz_number.c): check the name (elv_name_valid), find or
 * load NAME.so, switch.  It runs on a real queue with the built-in noop and,
 * when FUZZ_MODULE_DIR names a directory of built schedulers (e.g.
 * schedulers/.libs), on those too.  Checked besides memory errors: the
 * result is 0 or -EINVAL (or an init failure); after success the active
 * scheduler is the one named; after a failure it is unchanged.
 *
 *	./configure --enable-fuzzing CC=clang && make
 *	FUZZ_MODULE_DIR=schedulers/.libs \
 *		fuzz/fuzz_scheduler -max_total_time=60 fuzz/corpus/scheduler
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "fuse-iosched.h"
#include "fuzz.h"

static struct queue *fuzz_queue;

static void fuzz_scheduler_init(void)
{
	struct queue_params p = { .nr_requests = 64 };
	const char *dir = getenv("FUZZ_MODULE_DIR");

	/* Every refused name is logged: keep the output to failures. */
	log_set_level(LOG_ERR);
	elv_register(elv_noop(), "built-in");
	/* A directory that cannot exist: only noop, no dlopen() of junk. */
	module_set_dir(dir != NULL ? dir : "/nonexistent/fuse-iosched-fuzz");
	fuzz_queue = queue_new(&p, elv_noop());
	if (fuzz_queue == NULL)
		fuzz_fail(__FILE__, __LINE__, "queue_new");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct elevator_type *before, *after;
	const char *name;
	char why[128];
	size_t len;
	char *buf;
	int ret;

	if (fuzz_queue == NULL)
		fuzz_scheduler_init();
	buf = malloc(size > 0 ? size : 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	before = queue_elevator_type(fuzz_queue);
	ret = elv_store(fuzz_queue, buf, size, why, sizeof why);
	after = queue_elevator_type(fuzz_queue);
	fuzz_assert(after != NULL);
	if (ret != 0) {
		fuzz_assert(ret < 0);
		fuzz_assert(after == before);
	} else {
		/* Exactly the name written. */
		name = buf;
		len = size;
		fuzz_assert(elv_name_valid(name, len));
		fuzz_assert(strlen(after->name) == len);
		fuzz_assert(memcmp(after->name, name, len) == 0);
	}
	free(buf);
	return 0;
}
