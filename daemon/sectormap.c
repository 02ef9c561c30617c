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
 * Everything else gets the fallback: a stable, contiguous range per file,
 * far above any real device,
 *
 *   base   = 2^62 + (hash64(dev, ino) mod 2^37) * 2^24
 *   sector = base + off / 512
 *
 * Each file owns a slot of 2^24 sectors (8 GiB) within [2^62, 2^62 + 2^61),
 * and offsets in one file stay contiguous, so sequential access looks
 * sequential to the scheduler.  With 2^37 slots, two files share or border
 * a slot only by a hash collision, and a file over 8 GiB runs into a
 * neighbour's slot only if that slot is taken: no overlap in practice.
 * It is used for holes and unwritten ranges too, and for every offset of a
 * file on a filesystem without FIEMAP (tmpfs, many network and FUSE
 * filesystems); such a map remembers that and never asks again.
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

	pthread_mutex_t lock;	/* protects everything below */
	bool no_fiemap;		/* the filesystem does not do FIEMAP */
	bool valid;		/* the window below describes the file */
	uint64_t win_start;	/* [win_start, win_end): the window */
	uint64_t win_end;
	uint64_t fetched_ns;	/* when the window was fetched */
	struct sectormap_extent *ext;	/* usable extents, sorted */
	unsigned nr;
};

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

static uint64_t sectormap_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
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

/*
 * Fetch the window of extents starting at off.  On an error other than
 * "not supported" the window is empty (all unmapped) and will be fetched
 * again after the TTL.  Called with m->lock held.
 */
static void sectormap_fetch(struct sectormap *m, int fd, uint64_t off)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent fe[SECTORMAP_WINDOW];
	} req;
	struct sectormap_extent *ext;
	const struct fiemap_extent *last;
	unsigned i, n, nr = 0;

	m->valid = true;
	m->fetched_ns = sectormap_now_ns();
	m->win_start = off;
	m->win_end = UINT64_MAX;
	m->nr = 0;

	memset(&req.fm, 0, sizeof req.fm);
	req.fm.fm_start = off;
	req.fm.fm_length = FIEMAP_MAX_OFFSET - off;
	req.fm.fm_flags = 0;	/* no FIEMAP_FLAG_SYNC: never force writeback */
	req.fm.fm_extent_count = SECTORMAP_WINDOW;
	if (ioctl(fd, FS_IOC_FIEMAP, &req.fm) == -1) {
		if (errno == EOPNOTSUPP || errno == ENOTTY) {
			m->no_fiemap = true;
			log_debug("sectormap: no FIEMAP on this filesystem, "
				  "using the fallback map");
		}
		return;
	}

	n = req.fm.fm_mapped_extents;
	if (n > SECTORMAP_WINDOW)
		n = SECTORMAP_WINDOW;
	if (n == 0)
		return;

	/* The first extent may begin before off: it is described too. */
	if (req.fe[0].fe_logical < off)
		m->win_start = req.fe[0].fe_logical;
	/* A full window without the last extent: what follows is unknown. */
	last = &req.fe[n - 1];
	if (n == SECTORMAP_WINDOW && !(last->fe_flags & FIEMAP_EXTENT_LAST))
		m->win_end = last->fe_logical + last->fe_length;

	ext = realloc(m->ext, n * sizeof *ext);
	if (ext == NULL) {
		m->win_end = m->win_start;	/* fetch again next time */
		return;
	}
	m->ext = ext;
	for (i = 0; i < n; i++) {
		const struct fiemap_extent *fe = &req.fe[i];

		if (fe->fe_flags & SECTORMAP_UNUSABLE || fe->fe_length == 0)
			continue;
		ext[nr].logical = fe->fe_logical;
		ext[nr].physical = fe->fe_physical;
		ext[nr].length = fe->fe_length;
		nr++;
	}
	m->nr = nr;
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

static bool sectormap_in_window(const struct sectormap *m, uint64_t off)
{
	return m->valid && off >= m->win_start && off < m->win_end;
}

uint64_t sectormap_lookup(struct sectormap *m, int fd, uint64_t off)
{
	uint64_t sector;
	bool found = false;

	pthread_mutex_lock(&m->lock);
	if (!m->no_fiemap) {
		if (!sectormap_in_window(m, off))
			sectormap_fetch(m, fd, off);
		found = sectormap_search(m, off, &sector);
		if (!found && !m->no_fiemap &&
		    sectormap_now_ns() - m->fetched_ns >=
		    SECTORMAP_UNMAPPED_TTL_NS) {
			/* Maybe allocated by writeback since. */
			sectormap_fetch(m, fd, off);
			found = sectormap_search(m, off, &sector);
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
	pthread_mutex_unlock(&m->lock);
}
