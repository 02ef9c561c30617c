/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The O_PATH descriptors of the inodes, held for a bounded set of them.
 *
 * The kernel may remember far more inodes than the daemon may hold
 * descriptors (RLIMIT_NOFILE), so descriptors live in a least recently
 * used list of at most fs_fd_max entries; an inode whose descriptor was
 * closed is reached again when next used: by its file handle
 * (open_by_handle_at, which needs CAP_DAC_READ_SEARCH and a file system
 * that has handles), else through its nearest ancestor with a descriptor
 * and the names below it (fs_inode_reopen_by_name).  Either way the new
 * descriptor must name the same (dev, ino), or the use fails with ESTALE.
 *
 * A use pins the descriptor (fs_fd_get ... fs_fd_put): eviction skips
 * pinned inodes, so a descriptor is never closed under a thread using it.
 * The root inode keeps BACKING's descriptor for good and is never listed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon.h"

/* Descriptors kept for the daemon itself: /dev/fuse, libevent, splice
 * pipes of the session threads, syslog, module files... */
#define FS_FD_RESERVE 64
#define FS_FD_MIN 16		/* inode descriptors, whatever the limit */
#define FS_FD_MAX (1u << 20)

/* Protects every inode's fd, fd_users and LRU links, and the list. */
static pthread_mutex_t fd_lock = PTHREAD_MUTEX_INITIALIZER;
/* Inodes whose descriptor may be closed, the most recent first. */
static TAILQ_HEAD(inode_list, inode) fd_lru = TAILQ_HEAD_INITIALIZER(fd_lru);
static unsigned fd_open;	/* fd lock: inode descriptors held */
static unsigned fd_max;		/* set once by fs_fd_init */
static int fd_mount_fd = -1;	/* BACKING's descriptor: handles open here */
static int fd_mount_id;		/* handles only for inodes of this mount */
static bool fd_handles;		/* open_by_handle_at works for us */
static rlim_t fd_limit[3];	/* soft limit before, after; hard limit */

/* Raise the soft descriptor limit to the hard one; the limit in force. */
static rlim_t fs_fd_raise_limit(void)
{
	struct rlimit rl;
	rlim_t was;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return 1024;
	was = rl.rlim_cur;
	if (rl.rlim_cur != rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			rl.rlim_cur = was;
	}
	fd_limit[0] = was;
	fd_limit[1] = rl.rlim_cur;
	fd_limit[2] = rl.rlim_max;
	return rl.rlim_cur;
}

struct file_handle *fs_fd_handle(int fd)
{
	struct file_handle *fh, *copy;
	int mount_id;

	if (!fd_handles)
		return NULL;
	fh = malloc(sizeof(*fh) + MAX_HANDLE_SZ);
	if (fh == NULL)
		return NULL;
	fh->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", fh, &mount_id, AT_EMPTY_PATH) == -1 ||
	    mount_id != fd_mount_id) {
		free(fh);
		return NULL;
	}
	copy = realloc(fh, sizeof(*fh) + fh->handle_bytes);
	return copy != NULL ? copy : fh;
}

void fs_fd_init(struct fs *fs)
{
	char path[FS_PROC_PATH_MAX];
	struct file_handle *fh;
	rlim_t limit = fs_fd_raise_limit();
	/* Room for the pidfds of the process watch (procwatch.c) too. */
	rlim_t reserve = FS_FD_RESERVE + procwatch_limit(limit);
	int fd;

	fd_max = limit > reserve + 2 * FS_FD_MIN ?
		 (unsigned)((limit - reserve) / 2) : FS_FD_MIN;
	if (fd_max > FS_FD_MAX)
		fd_max = FS_FD_MAX;

	/*
	 * Try a handle of the root: the file system must have them, and
	 * opening one needs CAP_DAC_READ_SEARCH.  Handles open relative to a
	 * descriptor of their mount that is not O_PATH.
	 */
	fs_inode_proc_path(fs->root_fd, path);
	fd_mount_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fh = malloc(sizeof(*fh) + MAX_HANDLE_SZ);
	if (fh != NULL && fd_mount_fd >= 0) {
		fh->handle_bytes = MAX_HANDLE_SZ;
		if (name_to_handle_at(fs->root_fd, "", fh, &fd_mount_id,
				      AT_EMPTY_PATH) == 0) {
			fd = open_by_handle_at(fd_mount_fd, fh,
					       O_PATH | O_CLOEXEC);
			if (fd >= 0) {
				fd_handles = true;
				close(fd);
			}
		}
	}
	free(fh);
	if (!fd_handles && fd_mount_fd >= 0) {
		close(fd_mount_fd);
		fd_mount_fd = -1;
	}
}

/* After mounting, once the log is open: a usage error stays one line. */
void fs_fd_report(void)
{
	log_info("descriptor limit %llu (soft limit was %llu, hard %llu)",
		 (unsigned long long)fd_limit[1], (unsigned long long)fd_limit[0],
		 (unsigned long long)fd_limit[2]);
	log_info("up to %u inode descriptors; others reopened by %s", fd_max,
		 fd_handles ? "file handle" : "parent and name");
}

void fs_fd_exit(void)
{
	if (fd_mount_fd >= 0)
		close(fd_mount_fd);
	fd_mount_fd = -1;
	fd_handles = false;
}

static bool fs_fd_listed(const struct inode *inode)
{
	return inode->lru.tqe_prev != NULL;
}

static void fs_fd_unlist(struct inode *inode)
{
	TAILQ_REMOVE(&fd_lru, inode, lru);
	inode->lru.tqe_prev = NULL;
}

/* Close the least recently used unpinned descriptors over the bound. */
static void do_fs_fd_evict(void)
{
	struct inode *inode = TAILQ_LAST(&fd_lru, inode_list), *prev;

	while (fd_open > fd_max && inode != NULL) {
		prev = TAILQ_PREV(inode, inode_list, lru);
		if (inode->fd_users == 0) {
			fs_fd_unlist(inode);
			close(inode->fd);
			inode->fd = -1;
			fd_open--;
		}
		inode = prev;
	}
}

void fs_fd_adopt(struct inode *inode, int fd)
{
	pthread_mutex_lock(&fd_lock);
	inode->fd = fd;
	TAILQ_INSERT_HEAD(&fd_lru, inode, lru);
	fd_open++;
	do_fs_fd_evict();
	pthread_mutex_unlock(&fd_lock);
}

/* Open inode's backing inode again; checked to be the same one. */
static int fs_fd_reopen(struct inode *inode)
{
	struct stat st;
	int fd = -1;

	if (inode->handle != NULL)
		fd = open_by_handle_at(fd_mount_fd, inode->handle,
				       O_PATH | O_CLOEXEC);
	if (fd == -1) {
		fd = fs_inode_reopen_by_name(inode);
		if (fd < 0)
			return fd == -ENOENT ? -ESTALE : fd;
	}
	if (fstat(fd, &st) == -1 || st.st_dev != inode->dev ||
	    st.st_ino != inode->ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

int fs_fd_get(struct inode *inode)
{
	int fd;

	pthread_mutex_lock(&fd_lock);
	if (inode->fd >= 0) {
		inode->fd_users++;
		if (fs_fd_listed(inode)) {
			fs_fd_unlist(inode);
			TAILQ_INSERT_HEAD(&fd_lru, inode, lru);
		}
		fd = inode->fd;
		pthread_mutex_unlock(&fd_lock);
		return fd;
	}
	pthread_mutex_unlock(&fd_lock);

	fd = fs_fd_reopen(inode);
	if (fd < 0)
		return fd;
	return fs_fd_install(inode, fd);
}

int fs_fd_install(struct inode *inode, int fd)
{
	pthread_mutex_lock(&fd_lock);
	if (inode->fd >= 0) {
		/* Another thread reopened it meanwhile: use that one. */
		close(fd);
		fd = inode->fd;
		fs_fd_unlist(inode);
	} else {
		inode->fd = fd;
		fd_open++;
	}
	inode->fd_users++;
	TAILQ_INSERT_HEAD(&fd_lru, inode, lru);
	do_fs_fd_evict();
	pthread_mutex_unlock(&fd_lock);
	return fd;
}

int fs_fd_get_open(struct inode *inode)
{
	int fd;

	pthread_mutex_lock(&fd_lock);
	fd = inode->fd;
	if (fd >= 0)
		inode->fd_users++;
	pthread_mutex_unlock(&fd_lock);
	return fd;
}

void fs_fd_put(struct inode *inode)
{
	pthread_mutex_lock(&fd_lock);
	inode->fd_users--;
	pthread_mutex_unlock(&fd_lock);
}

void fs_fd_forget(struct inode *inode)
{
	pthread_mutex_lock(&fd_lock);
	if (fs_fd_listed(inode)) {
		fs_fd_unlist(inode);
		fd_open--;
	}
	if (inode->fd >= 0)
		close(inode->fd);
	inode->fd = -1;
	pthread_mutex_unlock(&fd_lock);
	free(inode->handle);
	inode->handle = NULL;
}
