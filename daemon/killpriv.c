/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Setuid and setgid bits on writes, truncates and chowns: cleared by the
 * daemon (FUSE_HANDLE_KILLPRIV_V2), as the backing fs would clear them
 * for the caller.
 *
 * Without v2 the kernel clears them itself, and to know whether there is
 * a security.capability to drop it asks us for it before every write(2):
 * a GETXATTR round trip each time, because only with v2 does it set
 * SB_NOSEC on the mount, which lets an inode remember (S_NOSEC) that it
 * has nothing to drop until its attributes are next refreshed.
 * libfuse 3.14 cannot ask for v2: conn->want has no flag for it and its
 * INIT reply carries only the flags it knows; nor does it pass the
 * kernel's FUSE_WRITE_KILL_SUIDGID on to a write handler.  So the session
 * reads and writes /dev/fuse through our own io (fuse_session_custom_io,
 * since 3.13): the INIT reply gets the flag when the kernel offered it,
 * and each session thread notes the write request it has just read, which
 * that same thread then handles (libfuse's loops process on the thread
 * that read; so do fusering.c's ring threads, which note theirs).  The
 * same io asks for FUSE over io_uring (fusering.c) at INIT, and sends
 * the replies to ring requests into their ring entries.
 *
 * With v2, what the kernel leaves to us: the write of a caller without
 * CAP_FSETID (its FUSE_WRITE_KILL_SUIDGID), a truncate by such a caller
 * and every chown (FATTR_KILL_SUIDGID, libfuse's FUSE_SET_ATTR_KILL_SUID),
 * fallocate and copy_file_range (no flag: we ask the caller's capability
 * set ourselves).  The rule is the VFS's (setattr_should_drop_suidgid):
 * regular files only; setuid always; setgid when the group may execute
 * or the caller is not in the file's group.  security.capability needs
 * nothing: the backing fs drops it on every write, truncate and chown the
 * daemon makes, whatever the daemon's capabilities.
 */
#include <errno.h>
#include <linux/capability.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "daemon.h"

/* The write request this session thread read last. */
static __thread struct {
	uint64_t fh, offset;
	uint32_t size;
	bool valid, kill;
} killpriv_last;

/* FUSE_OVER_IO_URING (protocol 7.42), in flags2. */
#define KILLPRIV_OVER_IO_URING (1u << (41 - 32))

/* The INIT request's id and what it offered, while its reply is to be
 * sent. */
static atomic_bool killpriv_init_pending;
static _Atomic uint64_t killpriv_init_unique;
static bool killpriv_init_v2, killpriv_init_uring;

void killpriv_note(const void *buf, size_t n)
{
	const struct fuse_in_header *in = buf;

	killpriv_last.valid = false;
	if (n < sizeof(*in))
		return;
	if (in->opcode == FUSE_WRITE &&
	    n >= sizeof(*in) + sizeof(struct fuse_write_in)) {
		const struct fuse_write_in *w = (const void *)(in + 1);

		killpriv_last.fh = w->fh;
		killpriv_last.offset = w->offset;
		killpriv_last.size = w->size;
		killpriv_last.kill = w->write_flags & FUSE_WRITE_KILL_SUIDGID;
		killpriv_last.valid = true;
	} else if (in->opcode == FUSE_INIT &&
		   n >= sizeof(*in) + offsetof(struct fuse_init_in, flags) +
		   sizeof(uint32_t)) {
		const struct fuse_init_in *i = (const void *)(in + 1);

		if (i->major != 7)
			return;
		killpriv_init_v2 = i->flags & FUSE_HANDLE_KILLPRIV_V2;
		killpriv_init_uring = (i->flags & FUSE_INIT_EXT) &&
			n >= sizeof(*in) + offsetof(struct fuse_init_in, flags2) +
			sizeof(uint32_t) && (i->flags2 & KILLPRIV_OVER_IO_URING);
		killpriv_init_unique = in->unique;
		killpriv_init_pending = true;
	}
}

static ssize_t killpriv_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n = read(fd, buf, len);

	(void)userdata;
	killpriv_note(buf, n > 0 ? (size_t)n : 0);
	return n;
}

/*
 * Our INIT reply: the flags libfuse 3.14 does not know, as the kernel
 * offered them.  true: start the ring once the kernel has the reply.
 */
static bool killpriv_init_reply(struct fs *fs, struct iovec *iov, int count,
				size_t *payload)
{
	const struct fuse_out_header *out = iov[0].iov_base;
	struct fuse_init_out *o = iov[1].iov_base;

	killpriv_init_pending = false;
	if (out->error != 0 || count < 2 ||
	    iov[1].iov_len < offsetof(struct fuse_init_out, flags) +
	    sizeof(uint32_t) || o->major != 7)
		return false;
	if (killpriv_init_v2) {
		o->flags |= FUSE_HANDLE_KILLPRIV_V2;
		/* Before the kernel sends anything else. */
		atomic_store_explicit(&fs->killpriv_v2, true,
				      memory_order_relaxed);
		log_debug("fuse: FUSE_HANDLE_KILLPRIV_V2: setuid and "
			  "setgid bits are the daemon's to clear");
	}
	if (!fusering_wanted())
		return false;
	if (!killpriv_init_uring || !(o->flags & FUSE_INIT_EXT) ||
	    iov[1].iov_len < sizeof *o) {
		log_warn("fuse_uring: the kernel does not offer FUSE over "
			 "io_uring (/sys/module/fuse/parameters/enable_uring):"
			 " requests come through /dev/fuse");
		return false;
	}
	o->flags2 |= KILLPRIV_OVER_IO_URING;
	/* The kernel's largest request or reply, as it sizes the ring. */
	*payload = o->max_write;
	if ((o->flags & FUSE_MAX_PAGES) &&
	    (size_t)o->max_pages * (size_t)sysconf(_SC_PAGESIZE) > *payload)
		*payload = (size_t)o->max_pages * (size_t)sysconf(_SC_PAGESIZE);
	if (*payload < FUSE_MIN_READ_BUFFER)
		*payload = FUSE_MIN_READ_BUFFER;
	return true;
}

static ssize_t killpriv_writev(int fd, struct iovec *iov, int count,
			       void *userdata)
{
	const struct fuse_out_header *out = iov[0].iov_base;
	struct fs *fs = userdata;
	size_t payload = 0;
	bool uring = false;
	ssize_t n;
	int i;

	if (fusering_reply(iov, count)) {
		for (n = 0, i = 0; i < count; i++)
			n += (ssize_t)iov[i].iov_len;
		return n;
	}
	if (killpriv_init_pending && out->unique == killpriv_init_unique)
		uring = killpriv_init_reply(fs, iov, count, &payload);
	n = writev(fd, iov, count);
	/* The kernel registers entries only once it is initialised. */
	if (uring && n > 0)
		fusering_start(fs->se, fd, payload);
	return n;
}

int killpriv_setup(struct fuse_session *se)
{
	static const struct fuse_custom_io io = {
		.read = killpriv_read,
		.writev = killpriv_writev,
	};

	return fuse_session_custom_io(se, &io, fuse_session_fd(se));
}

/* Is gid the caller's fsgid or one of its supplementary groups? */
static bool killpriv_in_group(fuse_req_t req, gid_t gid)
{
	gid_t small[32], *groups = small;
	bool found = false;
	int n, i;

	if (fuse_req_ctx(req)->gid == gid)
		return true;
	n = fuse_req_getgroups(req, ARRAY_SIZE(small), small);
	if (n > (int)ARRAY_SIZE(small)) {
		groups = calloc(n, sizeof(*groups));
		if (groups == NULL)
			return false;
		n = fuse_req_getgroups(req, n, groups);
	}
	for (i = 0; i < n && !found; i++)
		found = groups[i] == gid;
	if (groups != small)
		free(groups);
	return found;
}

mode_t killpriv_mode(fuse_req_t req, const struct stat *st, bool ask)
{
	mode_t kill = st->st_mode & S_ISUID;

	if (!S_ISREG(st->st_mode))
		return st->st_mode;
	if ((st->st_mode & S_ISGID) &&
	    ((st->st_mode & S_IXGRP) || !killpriv_in_group(req, st->st_gid)))
		kill |= S_ISGID;
	if (!kill || (ask && cred_caller_capable(req, CAP_FSETID)))
		return st->st_mode;
	return st->st_mode & ~kill;
}

int killpriv_fd(fuse_req_t req, fuse_ino_t ino, int fd, bool ask)
{
	struct fs *fs = fs_of(req);
	struct stat st;
	mode_t mode;

	if (!atomic_load_explicit(&fs->killpriv_v2, memory_order_relaxed))
		return 0;
	if (fstat(fd, &st) == -1)
		return -errno;
	mode = killpriv_mode(req, &st, ask);
	if (mode == st.st_mode)
		return 0;
	if (fchmod(fd, mode & 07777) == 0) {
		/*
		 * The kernel keeps the old mode until its attributes time
		 * out, and an exec would go by it: make it ask again (it
		 * then also ignores a reply read before this).
		 */
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
		return 0;
	}
	/* A daemon that is not root cannot; the backing fs then clears
	 * the bits itself at our write, which it makes without
	 * CAP_FSETID. */
	if (errno == EPERM && !fs->as_root)
		return 0;
	return -errno;
}

int killpriv_write(fuse_req_t req, fuse_ino_t ino, int fd, off_t off,
		   size_t size, const struct fuse_file_info *fi)
{
	if (!killpriv_last.valid || killpriv_last.fh != fi->fh ||
	    killpriv_last.offset != (uint64_t)off ||
	    killpriv_last.size != size)
		return killpriv_fd(req, ino, fd, true);
	return killpriv_last.kill ? killpriv_fd(req, ino, fd, false) : 0;
}
