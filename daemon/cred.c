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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	/* as_root: our euid is 0 (no system call per create to ask). */
	if (!fs_of(req)->as_root ||
	    (ctx->uid == 0 && ctx->gid == fs_of(req)->egid))
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

/*
 * Has the caller capability cap (CAP_SYS_ADMIN, CAP_FSETID), as the
 * backing fs asks of it (in the initial user namespace, capable())?  Read
 * from /proc/PID/status of the calling thread (FUSE sends its id): its
 * effective set, exact where uid 0 would not be (root without the
 * capability, a user with it).  The set counts in the caller's own user
 * namespace, so a caller in another one than ours (unshare -U gives a
 * user a full set) has none here.  A pid we cannot see (0: another pid
 * namespace) has none.  A file read: ask only when the answer matters.
 */
bool cred_caller_capable(fuse_req_t req, int cap)
{
	pid_t pid = fuse_req_ctx(req)->pid;
	char path[64], line[128];
	struct stat ours, theirs;
	uint64_t caps = 0;
	bool found = false;
	FILE *f;

	if (pid <= 0)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if (stat("/proc/self/ns/user", &ours) == -1 ||
	    stat(path, &theirs) == -1 || ours.st_ino != theirs.st_ino ||
	    ours.st_dev != theirs.st_dev)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = sscanf(line, "CapEff: %" SCNx64, &caps) == 1;
	fclose(f);
	return found && (caps & (UINT64_C(1) << cap));
}
