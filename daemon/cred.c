/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Acting with a FUSE caller's credentials.  When the daemon runs as root,
 * a file a user creates must belong to that user (and setgid directories,
 * group quotas and the like must behave as they would for that user).  fsuid, fsgid and the
 * supplementary groups are per thread in the kernel, but glibc's setfsuid
 * and setgroups wrappers broadcast the change to every thread of the
 * process, so the raw system calls are used instead.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon.h"

static long cred_set_groups(int n, const gid_t *list)
{
	return syscall(SYS_setgroups, (size_t)n, list);
}

int cred_enter(fuse_req_t req, struct cred *saved)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	gid_t small[32], *groups = small;
	int n, err = 0;

	saved->switched = false;
	saved->nr_groups = 0;
	saved->groups = NULL;
	if (!fs_of(req)->as_root ||
	    (ctx->uid == geteuid() && ctx->gid == getegid()))
		return 0;

	n = fuse_req_getgroups(req, ARRAY_SIZE(small), small);
	if (n > (int)ARRAY_SIZE(small)) {
		int size = n;

		groups = calloc(size, sizeof(*groups));
		if (!groups)
			return -ENOMEM;
		/* The caller may have gained groups in between. */
		n = fuse_req_getgroups(req, size, groups);
		if (n > size)
			n = size;
	}
	if (n < 0)
		n = 0;		/* the caller is gone: no extra groups */

	saved->nr_groups = getgroups(0, NULL);
	if (saved->nr_groups > 0) {
		saved->groups = calloc(saved->nr_groups, sizeof(gid_t));
		if (!saved->groups) {
			err = ENOMEM;
			goto out;
		}
		saved->nr_groups = getgroups(saved->nr_groups, saved->groups);
	}
	if (saved->nr_groups < 0) {
		err = errno;
		free(saved->groups);
		saved->groups = NULL;
		goto out;
	}

	if (cred_set_groups(n, groups) == -1) {
		err = errno;
		free(saved->groups);
		saved->groups = NULL;
		goto out;
	}
	syscall(SYS_setfsgid, ctx->gid);
	syscall(SYS_setfsuid, ctx->uid);
	saved->switched = true;
	/* setfsuid reports no error; read the values back to be sure. */
	if ((uid_t)syscall(SYS_setfsuid, -1) != ctx->uid ||
	    (gid_t)syscall(SYS_setfsgid, -1) != ctx->gid) {
		cred_leave(saved);
		err = EPERM;
	}
out:
	if (groups != small)
		free(groups);
	return -err;
}

void cred_leave(struct cred *saved)
{
	int errsv = errno;

	if (!saved->switched)
		return;
	syscall(SYS_setfsuid, geteuid());
	syscall(SYS_setfsgid, getegid());
	if (cred_set_groups(saved->nr_groups, saved->groups) == -1)
		log_err("cannot restore supplementary groups: %s",
			strerror(errno));
	free(saved->groups);
	saved->groups = NULL;
	saved->switched = false;
	errno = errsv;
}
