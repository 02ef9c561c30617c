/* SPDX-License-Identifier: MIT */
/*
 * The scheduler ABI's version, for modules to test at compile time
 * (<fuse-iosched/elevator.h> includes it).  The major version changes when
 * an old module can no longer work (the host refuses it); the minor one
 * counts compatible additions within a major version: fields appended to
 * struct elevator_type, struct elevator_host or struct elv_request.  The
 * header dates each feature by the version that brought it ("since 3.0").
 *
 *   #if IOSCHED_ABI_AT_LEAST(3, 1)
 *	... use something 3.1 added ...
 *   #endif
 */
#ifndef FUSE_IOSCHED_VERSION_H
#define FUSE_IOSCHED_VERSION_H

#define IOSCHED_ABI_VERSION 3
#define IOSCHED_ABI_MINOR 1

#define IOSCHED_ABI_AT_LEAST(major, minor)			\
	(IOSCHED_ABI_VERSION > (major) ||			\
	 (IOSCHED_ABI_VERSION == (major) && IOSCHED_ABI_MINOR >= (minor)))

#endif /* FUSE_IOSCHED_VERSION_H */
