/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The clock of the queue, the timers and the disk model: CLOCK_MONOTONIC
 * in nanoseconds.  The replay and the unit tests give the queue a virtual
 * one instead (queue_params.clock).  Its coarse reading serves the
 * lifetimes of the daemon's caches on the request path.
 */
#include <time.h>

#include "fuse-iosched.h"

uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t clock_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
