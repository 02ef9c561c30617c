/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * File offset -> device sector, so that schedulers can sort and merge by
 * position on the disk the way the block layer does.
 *
 * Where the backing filesystem supports FS_IOC_FIEMAP, the sector of byte
 * off is where that byte lives on the backing block device:
 * (fe_physical + off - fe_logical) >> 9.  Extents are fetched lazily, a
 * window of up to SECTORMAP_WINDOW extents starting at the offset asked
 * about, and cached in the map (one per inode).  Most files have a few
 * extents, so one ioctl usually describes the whole file; a heavily
 * fragmented file read at random costs one ioctl per window miss.
 *
 * The answer is a scheduling hint, never used to address data, so staleness
 * is harmless and we can be lazy about it:
 *  - A mapped extent stays where it is until the file is truncated, punched
 *    or defragmented; the filesystem code calls sectormap_invalidate for the
 *    first two.
 *  - "Unmapped" is short-lived on a file being written: delayed allocation
 *    and unwritten data are allocated at writeback, without any call from
 *    us.  So an unmapped answer is trusted for SECTORMAP_UNMAPPED_TTL_NS
 *    after the fetch only; then the window is fetched again.  Writes need
 *    not invalidate anything.
 *  - Extents flagged UNKNOWN, DELALLOC, ENCODED, DATA_INLINE or NOT_ALIGNED
 *    have no meaningful physical address: they count as unmapped.
 *
 * Unmapped offsets get an estimate after ext4's goal (ext4_ext_find_goal),
 * and files without FIEMAP a stable range far above any device: both as
 * fuse-iosched(8), DESCRIPTION, says.
 */
#include <errno.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "daemon.h"

#define SECTORMAP_WINDOW 64		/* extents per FIEMAP call */
#define SECTORMAP_UNMAPPED_TTL_NS 100000000ULL	/* 100 ms */

#define SECTORMAP_FALLBACK_BASE (1ULL << 62)
#define SECTORMAP_SLOT_SHIFT 24		/* sectors per file slot: 8 GiB */
#define SECTORMAP_SLOT_BITS 37		/* 2^37 slots of 2^24: 2^61 sectors */

/* Extents whose fe_physical is not a usable device address. */
#define SECTORMAP_UNUSABLE (FIEMAP_EXTENT_UNKNOWN | \
			    FIEMAP_EXTENT_DELALLOC | \
			    FIEMAP_EXTENT_ENCODED | \
			    FIEMAP_EXTENT_DATA_INLINE | \
			    FIEMAP_EXTENT_NOT_ALIGNED)

struct sectormap_extent {
	uint64_t logical;	/* byte offset in the file */
	uint64_t physical;	/* byte offset on the device */
	uint64_t length;	/* bytes */
};

struct sectormap {
	uint64_t base;		/* the fallback's first sector; immutable */
	uint64_t ino;		/* immutable */

	pthread_mutex_t lock;	/* protects everything below */
	bool no_fiemap;		/* the filesystem does not do FIEMAP */
	bool valid;		/* the window below describes the file */
	uint64_t win_start;	/* [win_start, win_end): the window */
	uint64_t win_end;
	uint64_t fetched_ns;	/* when the window was fetched */
	struct sectormap_extent *ext;	/* usable extents, sorted */
	unsigned nr;
	struct sectormap_extent before;	/* the last one before the window
					 * when it has none before off */
	uint64_t fresh;		/* device byte of offset 0 if unplaced, +1 */
};

/*
 * Where the mount last saw the filesystem place data, as a device byte
 * (+1, 0 for not yet), and what is known of the device (set before the
 * first lookup).  One device is assumed beneath BACKING.
 */
static _Atomic uint64_t sectormap_cursor;
static struct sectormap_layout sectormap_layout;

/* A 64-bit mix of (dev, ino): splitmix64's finaliser. */
static uint64_t sectormap_hash64(uint64_t dev, uint64_t ino)
{
	uint64_t x = dev * 0x9e3779b97f4a7c15ULL ^ ino;

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

struct sectormap *sectormap_new(dev_t dev, ino_t ino)
{
	struct sectormap *m;
	uint64_t slot;

	m = calloc(1, sizeof *m);
	if (m == NULL)
		return NULL;
	slot = sectormap_hash64(dev, ino) & ((1ULL << SECTORMAP_SLOT_BITS) - 1);
	m->base = SECTORMAP_FALLBACK_BASE | slot << SECTORMAP_SLOT_SHIFT;
	m->ino = ino;
	pthread_mutex_init(&m->lock, NULL);
	return m;
}

void sectormap_free(struct sectormap *m)
{
	if (m == NULL)
		return;
	pthread_mutex_destroy(&m->lock);
	free(m->ext);
	free(m);
}

void sectormap_set_layout(const struct sectormap_layout *l)
{
	sectormap_layout = *l;
}

/*
 * ext4's goal for a regular file with no blocks yet, as a device byte
 * range [*lo, *hi): from its inode's block group, or with flex groups of 4
 * and more the second group of its flex group, which ext4 keeps for files
 * (ext4_inode_to_goal_block), to the end of its flex group.  False if the
 * layout is unknown.
 */
static bool sectormap_group_goal(uint64_t ino, uint64_t *lo, uint64_t *hi)
{
	const struct sectormap_layout *l = &sectormap_layout;
	uint64_t group, bpg;

	if (l->block_size == 0 || ino == 0)
		return false;
	group = (ino - 1) / l->inodes_per_group;
	if (l->flex_size >= 4)
		group = (group & ~((uint64_t)l->flex_size - 1)) + 1;
	bpg = (uint64_t)l->blocks_per_group * l->block_size;
	*lo = (uint64_t)l->first_data_block * l->block_size + group * bpg;
	/* The allocator goes on from the goal to the next groups. */
	*hi = *lo + bpg * (l->flex_size > 1 ? l->flex_size : 1);
	return true;
}

/* The cursor moves to byte if that is further on. */
static void sectormap_cursor_advance(uint64_t byte)
{
	uint64_t cur = atomic_load_explicit(&sectormap_cursor,
					    memory_order_relaxed);

	while (cur < byte + 1 &&
	       !atomic_compare_exchange_weak_explicit(&sectormap_cursor, &cur,
						      byte + 1,
						      memory_order_relaxed,
						      memory_order_relaxed))
		;
}

/* Usable extents fetched, the file's last e: place the cursor. */
static void sectormap_saw(struct sectormap *m, const struct sectormap_extent *e)
{
	/* The placement of data we estimated is the allocator's latest. */
	if (m->fresh != 0 ||
	    atomic_load_explicit(&sectormap_cursor, memory_order_relaxed) == 0)
		atomic_store_explicit(&sectormap_cursor,
				      e->physical + e->length + 1,
				      memory_order_relaxed);
	m->fresh = 0;
}

/*
 * Fetch the window of extents starting at off.  On an error other than
 * "not supported" the window is empty (all unmapped) and will be fetched
 * again after the TTL.  Called with m->lock held.
 */
struct sectormap_req {
	struct fiemap fm;
	struct fiemap_extent fe[SECTORMAP_WINDOW];
};

/* FS_IOC_FIEMAP from off: the number of extents returned, or -1. */
static int sectormap_ioctl(int fd, uint64_t off, struct sectormap_req *req)
{
	memset(&req->fm, 0, sizeof req->fm);
	req->fm.fm_start = off;
	req->fm.fm_length = FIEMAP_MAX_OFFSET - off;
	req->fm.fm_flags = 0;	/* no FIEMAP_FLAG_SYNC: never force writeback */
	req->fm.fm_extent_count = SECTORMAP_WINDOW;
	if (ioctl(fd, FS_IOC_FIEMAP, &req->fm) == -1)
		return -1;
	return req->fm.fm_mapped_extents > SECTORMAP_WINDOW ?
	       SECTORMAP_WINDOW : (int)req->fm.fm_mapped_extents;
}

static bool sectormap_usable(const struct fiemap_extent *fe)
{
	return !(fe->fe_flags & SECTORMAP_UNUSABLE) && fe->fe_length != 0;
}

/*
 * A window with nothing placed before off (a hole, an append): learn the
 * file's last extent before it, the goal of an allocation there (of the
 * first window's worth of extents: a file with more gets a nearer one, no
 * worse a goal).
 */
static void sectormap_fetch_before(struct sectormap *m, int fd, uint64_t off,
				   struct sectormap_req *req)
{
	int i, n = sectormap_ioctl(fd, 0, req);

	for (i = n - 1; i >= 0; i--) {
		const struct fiemap_extent *fe = &req->fe[i];

		if (sectormap_usable(fe) && fe->fe_logical < off) {
			m->before.logical = fe->fe_logical;
			m->before.physical = fe->fe_physical;
			m->before.length = fe->fe_length;
			return;
		}
	}
}

static void sectormap_fetch(struct sectormap *m, int fd, uint64_t off)
{
	/* From the byte before: an extent ending at off is the goal of a
	 * hole or an append there. */
	uint64_t from = off > 0 ? off - 1 : 0;
	struct sectormap_req req;
	struct sectormap_extent *ext;
	const struct fiemap_extent *last;
	int i, n, nr = 0;

	m->valid = true;
	m->fetched_ns = clock_coarse_ns();
	m->win_start = from;
	m->win_end = UINT64_MAX;
	m->nr = 0;
	m->before.length = 0;

	n = sectormap_ioctl(fd, from, &req);
	if (n == -1) {
		if (errno == EOPNOTSUPP || errno == ENOTTY) {
			m->no_fiemap = true;
			log_debug("sectormap: no FIEMAP on this filesystem, "
				  "using the fallback map");
		}
		return;
	}
	if (n == 0) {
		if (from > 0)
			sectormap_fetch_before(m, fd, from, &req);
		return;
	}

	/* The first extent may begin before: it is described too. */
	if (req.fe[0].fe_logical < from)
		m->win_start = req.fe[0].fe_logical;
	/* A full window without the last extent: what follows is unknown. */
	last = &req.fe[n - 1];
	if (n == SECTORMAP_WINDOW && !(last->fe_flags & FIEMAP_EXTENT_LAST))
		m->win_end = last->fe_logical + last->fe_length;

	ext = realloc(m->ext, (size_t)n * sizeof *ext);
	if (ext == NULL) {
		m->win_end = m->win_start;	/* fetch again next time */
		return;
	}
	m->ext = ext;
	for (i = 0; i < n; i++) {
		const struct fiemap_extent *fe = &req.fe[i];

		if (!sectormap_usable(fe))
			continue;
		ext[nr].logical = fe->fe_logical;
		ext[nr].physical = fe->fe_physical;
		ext[nr].length = fe->fe_length;
		nr++;
	}
	m->nr = (unsigned)nr;
	if (nr > 0)
		sectormap_saw(m, &ext[nr - 1]);
	if (from > 0 && (nr == 0 || ext[0].logical > from))
		sectormap_fetch_before(m, fd, from, &req);
}

/* The device sector of off, or false.  Called with m->lock held. */
static bool sectormap_search(const struct sectormap *m, uint64_t off,
			     uint64_t *sector)
{
	unsigned lo = 0, hi = m->nr;

	/* The first extent that ends after off. */
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		const struct sectormap_extent *e = &m->ext[mid];

		if (e->logical + e->length <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->nr || m->ext[lo].logical > off)
		return false;
	*sector = (m->ext[lo].physical + (off - m->ext[lo].logical)) >>
		  IOSCHED_SECTOR_SHIFT;
	return true;
}

/*
 * The space the allocator sets aside for a file of size bytes: whole
 * blocks, and from 64 KiB on a power of two up to 8 MiB, as ext4's
 * ext4_mb_normalize_request preallocates for a growing file.
 */
static uint64_t sectormap_normalize(uint64_t size)
{
	uint64_t n = 64 * 1024;

	if (size <= n || size > 8 * 1024 * 1024)
		return (size + 4095) / 4096 * 4096;
	while (n < size)
		n <<= 1;
	return n;
}

/*
 * Where a file with nothing placed will start: after the data placed last
 * (small files are packed one after another, as ext4's per-CPU group
 * preallocation does), unless that is outside the file's goal group.
 */
static uint64_t sectormap_fresh_base(const struct sectormap *m)
{
	uint64_t cur, lo, hi;

	cur = atomic_load_explicit(&sectormap_cursor, memory_order_relaxed);
	cur = cur == 0 ? 0 : cur - 1;
	if (sectormap_group_goal(m->ino, &lo, &hi) && (cur < lo || cur >= hi))
		cur = lo;
	/* Block-aligned, as the allocator places data. */
	return (cur + 4095) / 4096 * 4096;
}

/*
 * Where the filesystem will likely place unmapped byte off (len bytes),
 * as a device byte; called with m->lock held after the window's search
 * failed.  lo is the first extent of the window that ends after off.
 */
static uint64_t sectormap_estimate(struct sectormap *m, uint64_t off,
				   uint64_t len)
{
	const struct sectormap_extent *e = NULL;
	uint64_t byte;
	unsigned lo = 0;

	while (lo < m->nr && m->ext[lo].logical + m->ext[lo].length <= off)
		lo++;
	if (lo > 0)
		e = &m->ext[lo - 1];
	else if (m->before.length != 0 && m->before.logical <= off)
		e = &m->before;
	if (e != NULL) {
		byte = e->physical + (off - e->logical);
	} else if (lo < m->nr && m->ext[lo].physical >= m->ext[lo].logical - off) {
		byte = m->ext[lo].physical - (m->ext[lo].logical - off);
	} else {
		if (m->fresh == 0)
			m->fresh = sectormap_fresh_base(m) + 1;
		byte = m->fresh - 1 + off;
		sectormap_cursor_advance(m->fresh - 1 +
					 sectormap_normalize(off + len));
	}
	if (sectormap_layout.device_bytes != 0)
		byte %= sectormap_layout.device_bytes;
	return byte;
}

static bool sectormap_in_window(const struct sectormap *m, uint64_t off)
{
	return m->valid && off >= m->win_start && off < m->win_end;
}

uint64_t sectormap_lookup(struct sectormap *m, int fd, uint64_t off,
			  uint64_t len)
{
	uint64_t sector;
	bool found = false;

	pthread_mutex_lock(&m->lock);
	if (!m->no_fiemap) {
		if (!sectormap_in_window(m, off))
			sectormap_fetch(m, fd, off);
		found = sectormap_search(m, off, &sector);
		if (!found && !m->no_fiemap &&
		    clock_coarse_ns() - m->fetched_ns >=
		    SECTORMAP_UNMAPPED_TTL_NS) {
			/* Maybe allocated by writeback since. */
			sectormap_fetch(m, fd, off);
			found = sectormap_search(m, off, &sector);
		}
		if (!found && !m->no_fiemap) {
			sector = sectormap_estimate(m, off, len) >>
				 IOSCHED_SECTOR_SHIFT;
			found = true;
		}
	}
	pthread_mutex_unlock(&m->lock);

	if (!found)
		sector = m->base + (off >> IOSCHED_SECTOR_SHIFT);
	return sector;
}

/*
 * Forget the window if it overlaps the range.  The window is one ioctl's
 * worth, so dropping all of it instead of the affected extents costs one
 * ioctl on the next lookup and needs no bookkeeping of partial windows.
 */
void sectormap_invalidate(struct sectormap *m, uint64_t off, uint64_t len)
{
	uint64_t end = len == 0 || off + len < off ? UINT64_MAX : off + len;

	pthread_mutex_lock(&m->lock);
	if (m->valid && off < m->win_end && end > m->win_start)
		m->valid = false;
	if (off < m->before.logical + m->before.length &&
	    end > m->before.logical)
		m->before.length = 0;
	pthread_mutex_unlock(&m->lock);
}
