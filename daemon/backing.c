/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The backing side of a file: whether its descriptor does direct I/O
 * (the backing_io setting, names.c), the alignment that direct I/O
 * needs, and the block device beneath BACKING: as .control/backing_device
 * shows it, and its size and layout for the sector estimates of
 * sectormap.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <endian.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "daemon.h"

/* The alignment direct I/O is assumed to need when nothing says. */
#define BACKING_ALIGN_DEFAULT 512

/*
 * Read the first line of /sys/dev/block/MAJ:MIN/<rel> into buf, without
 * its newline; for a partition, whose directory has no queue/, the
 * parent disk's ("../queue/...").  0 or -1.
 */
static int backing_sysfs_read(dev_t dev, const char *rel, char *buf,
			      size_t size)
{
	char path[PATH_MAX];
	size_t len;
	FILE *fp;

	for (int up = 0; up < 2; up++) {
		snprintf(path, sizeof path, "/sys/dev/block/%u:%u/%s%s",
			 major(dev), minor(dev), up ? "../" : "", rel);
		fp = fopen(path, "re");
		if (fp == NULL)
			continue;
		if (fgets(buf, (int)size, fp) == NULL) {
			fclose(fp);
			return -1;
		}
		fclose(fp);
		/* Without the newline, and the blank sysfs leaves before it. */
		len = strcspn(buf, "\n");
		while (len > 0 && buf[len - 1] == ' ')
			len--;
		buf[len] = '\0';
		return 0;
	}
	return -1;
}

/* The logical block size of the device holding dev (BLKSSZGET's value,
 * read from sysfs so that no device node need exist), or 512. */
static unsigned backing_block_size(dev_t dev)
{
	char buf[32];
	unsigned long n;

	if (backing_sysfs_read(dev, "queue/logical_block_size", buf,
			       sizeof buf) != 0)
		return BACKING_ALIGN_DEFAULT;
	n = strtoul(buf, NULL, 10);
	if (n < 512 || n > 65536 || (n & (n - 1)) != 0)
		return BACKING_ALIGN_DEFAULT;
	return (unsigned)n;
}

/*
 * The alignment direct I/O through fd needs, for the file offset, the
 * length and the memory alike (the strictest of them: one number to
 * check).  statx reports it where the kernel knows (6.1: ext4, xfs).
 */
static unsigned backing_dio_align(int fd)
{
	struct stat st;
#ifdef STATX_DIOALIGN
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align != 0) {
		unsigned a = stx.stx_dio_offset_align;

		if (stx.stx_dio_mem_align > a)
			a = stx.stx_dio_mem_align;
		return a;
	}
#endif
	if (fstat(fd, &st) != 0)
		return BACKING_ALIGN_DEFAULT;
	return backing_block_size(st.st_dev);
}

unsigned backing_open(struct fs *fs, int fd, int open_flags)
{
	static const int refused = 1;
	int flags;

	if (fs->backing_io == BACKING_IO_BUFFERED ||
	    (fs->backing_io == BACKING_IO_AUTO && !(open_flags & O_DIRECT)))
		return 0;
	/*
	 * Set O_DIRECT on the open descriptor rather than opening with it:
	 * a filesystem without direct I/O (ramfs, tmpfs before 6.6, some
	 * FUSE filesystems) refuses it with EINVAL, and refusing fcntl
	 * leaves a working buffered descriptor, where a refused open(O_CREAT)
	 * would have created the file and failed.
	 */
	flags = fcntl(fd, F_GETFL);
	if (flags == -1 || fcntl(fd, F_SETFL, flags | O_DIRECT) == -1) {
		/* One line per mount: a backing fs refuses it for all files. */
		if (__atomic_exchange_n(&fs->dio_refused, refused,
					__ATOMIC_RELAXED) != refused)
			log_warn("backing filesystem refuses O_DIRECT (%s): "
				 "such files use buffered I/O (logged once)",
				 strerror(errno));
		return 0;
	}
	return backing_dio_align(fd);
}

/*
 * "name sda1 rotational 1 scheduler [mq-deadline] none", or, where
 * BACKING is on no block device (tmpfs, overlay, NFS), "name none" and
 * the anonymous device number.
 */
int backing_device_show(struct fs *fs, char *buf, size_t size)
{
	char path[64], target[PATH_MAX], rot[16], sched[256];
	const char *name;
	struct stat st;
	ssize_t len;
	int n;

	if (fstat(fs->root_fd, &st) != 0)
		return -errno;
	snprintf(path, sizeof path, "/sys/dev/block/%u:%u", major(st.st_dev),
		 minor(st.st_dev));
	len = readlink(path, target, sizeof target - 1);
	if (len <= 0) {
		n = snprintf(buf, size, "name none dev %u:%u "
			     "(not a block device)\n", major(st.st_dev),
			     minor(st.st_dev));
	} else {
		target[len] = '\0';
		name = strrchr(target, '/');
		name = name != NULL ? name + 1 : target;
		if (backing_sysfs_read(st.st_dev, "queue/rotational", rot,
				       sizeof rot) != 0)
			snprintf(rot, sizeof rot, "?");
		if (backing_sysfs_read(st.st_dev, "queue/scheduler", sched,
				       sizeof sched) != 0)
			snprintf(sched, sizeof sched, "?");
		n = snprintf(buf, size, "name %s rotational %s scheduler %s\n",
			     name, rot, sched);
	}
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return n;
}

/*
 * The layout of an ext2/3/4 superblock, as far as an allocation goal
 * needs it: what the kernel's ext4_inode_to_goal_block reads.  0, or -1
 * when the device cannot be read (an unprivileged daemon) or holds
 * another filesystem.
 */
static int backing_ext4_layout(const char *devpath, struct sectormap_layout *l)
{
	uint8_t sb[1024];
	uint32_t incompat;
	int fd;

	fd = open(devpath, O_RDONLY | O_CLOEXEC);
	if (fd == -1)
		return -1;
	if (pread(fd, sb, sizeof sb, 1024) != (ssize_t)sizeof sb) {
		close(fd);
		return -1;
	}
	close(fd);
#define LE16(o) le16toh(*(const uint16_t *)(sb + (o)))
#define LE32(o) le32toh(*(const uint32_t *)(sb + (o)))
	if (LE16(56) != 0xEF53 || LE32(24) > 6)	/* magic; 64 KiB blocks */
		return -1;
	l->block_size = 1024U << LE32(24);
	l->first_data_block = LE32(20);
	l->blocks_per_group = LE32(32);
	l->inodes_per_group = LE32(40);
	incompat = LE32(96);
	l->flex_size = incompat & 0x200 && sb[372] < 32 ? 1U << sb[372] : 1;
#undef LE16
#undef LE32
	return l->blocks_per_group != 0 && l->inodes_per_group != 0 ? 0 : -1;
}

void backing_device_layout(int root_fd, struct sectormap_layout *l)
{
	char devpath[PATH_MAX + 8], link[64], target[PATH_MAX], size[32];
	const char *name;
	struct stat st;
	ssize_t len;

	if (fstat(root_fd, &st) != 0 ||
	    backing_sysfs_read(st.st_dev, "size", size, sizeof size) != 0)
		return;
	l->device_bytes = strtoull(size, NULL, 10) * 512;
	snprintf(link, sizeof link, "/sys/dev/block/%u:%u", major(st.st_dev),
		 minor(st.st_dev));
	len = readlink(link, target, sizeof target - 1);
	if (len > 0) {
		target[len] = '\0';
		name = strrchr(target, '/');
		snprintf(devpath, sizeof devpath, "/dev/%s",
			 name != NULL ? name + 1 : target);
		if (backing_ext4_layout(devpath, l) != 0)
			l->block_size = 0;
	}
}

dev_t backing_disk(int root_fd)
{
	char buf[32];
	unsigned maj, min;
	struct stat st;

	if (fstat(root_fd, &st) != 0 ||
	    backing_sysfs_read(st.st_dev, "dev", buf, sizeof buf) != 0)
		return 0;
	/* A partition's directory has "partition"; its disk's "dev" is up. */
	if (backing_sysfs_read(st.st_dev, "partition", buf, sizeof buf) != 0)
		return st.st_dev;
	if (backing_sysfs_read(st.st_dev, "../dev", buf, sizeof buf) != 0 ||
	    sscanf(buf, "%u:%u", &maj, &min) != 2)
		return st.st_dev;
	return makedev(maj, min);
}
