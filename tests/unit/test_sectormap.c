/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sectormap.c on its own: mapped offsets agree with FIEMAP, holes and
 * FIEMAP-less filesystems get the contiguous per-file fallback, and the
 * cache notices allocation after invalidate and after writeback.
 *
 * The FIEMAP part runs in the current directory (the build tree) and is
 * skipped with a note if that filesystem does not support FIEMAP; the
 * fallback part uses /dev/shm (tmpfs) when present.  A skipped part makes
 * the whole test report a skip (77), which tests/run-test turns into a
 * failure under CI=true.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "daemon.h"

#define FALLBACK_MIN (1ULL << 62)
#define MiB (1024ULL * 1024)

static int failures;
/* Parts that could not run here; see main(). */
static int skipped;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			failures++;					\
		}							\
	} while (0)

/* The sector FIEMAP gives for off, or 0 if unmapped or not usable. */
static uint64_t fiemap_sector(int fd, uint64_t off)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent fe[1];
	} req;
	const struct fiemap_extent *fe = &req.fe[0];

	memset(&req, 0, sizeof req);
	req.fm.fm_start = off;
	req.fm.fm_length = 1;
	req.fm.fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, &req.fm) == -1 ||
	    req.fm.fm_mapped_extents == 0 || fe->fe_logical > off ||
	    (fe->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
			     FIEMAP_EXTENT_ENCODED |
			     FIEMAP_EXTENT_DATA_INLINE |
			     FIEMAP_EXTENT_NOT_ALIGNED)))
		return 0;
	return (fe->fe_physical + off - fe->fe_logical) >> 9;
}

static int make_file(const char *dir, char *path, size_t size)
{
	int fd;

	snprintf(path, size, "%s/test_sectormap.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd == -1) {
		perror(path);
		exit(99);
	}
	return fd;
}

static void write_at(int fd, uint64_t off, size_t len, bool sync)
{
	char *buf = malloc(len);

	memset(buf, 0x5a, len);
	if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len) {
		perror("pwrite");
		exit(99);
	}
	if (sync && fsync(fd) == -1) {
		perror("fsync");
		exit(99);
	}
	free(buf);
}

static bool fiemap_works(int fd)
{
	struct fiemap fm;

	memset(&fm, 0, sizeof fm);
	fm.fm_length = FIEMAP_MAX_OFFSET;
	return ioctl(fd, FS_IOC_FIEMAP, &fm) == 0;
}

static struct sectormap *map_of(int fd)
{
	struct stat st;
	struct sectormap *m;

	if (fstat(fd, &st) == -1) {
		perror("fstat");
		exit(99);
	}
	m = sectormap_new(st.st_dev, st.st_ino);
	CHECK(m != NULL);
	if (m == NULL)
		exit(1);
	return m;
}

/* Data in [0, 2 MiB) and [8 MiB, 9 MiB), a hole between. */
static void test_fiemap(void)
{
	static const uint64_t offs[] = {
		0, 512, 4096, 65536 + 1024, 2 * MiB - 512, 8 * MiB,
		8 * MiB + 12345, 9 * MiB - 1,
	};
	char path[256];
	struct sectormap *m;
	uint64_t s, hole, want;
	unsigned i;
	int fd;

	fd = make_file(".", path, sizeof path);
	unlink(path);
	if (!fiemap_works(fd)) {
		fprintf(stderr, "note: no FIEMAP in the build tree: skipped\n");
		skipped++;
		close(fd);
		return;
	}
	write_at(fd, 0, 2 * MiB, true);
	write_at(fd, 8 * MiB, MiB, true);
	m = map_of(fd);

	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		want = fiemap_sector(fd, offs[i]);
		s = sectormap_lookup(m, fd, offs[i], 4096);
		CHECK(want != 0);
		CHECK(s == want);
		/* A second lookup is served from the cache, same answer. */
		CHECK(sectormap_lookup(m, fd, offs[i], 4096) == s);
	}

	/* The hole: where the extent before it would continue. */
	hole = sectormap_lookup(m, fd, 4 * MiB, 4096);
	CHECK(hole == fiemap_sector(fd, 2 * MiB - 512) + (2 * MiB + 512) / 512);
	CHECK(sectormap_lookup(m, fd, 4 * MiB + 4096, 4096) == hole + 8);
	CHECK(sectormap_lookup(m, fd, 4 * MiB + 511, 1) == hole);
	/* Fetched again once "unmapped" is stale: from the hole, the same. */
	usleep(150 * 1000);
	CHECK(sectormap_lookup(m, fd, 4 * MiB + 8192, 4096) == hole + 16);

	/* Filling the hole shows after an invalidate of that range. */
	write_at(fd, 4 * MiB, MiB, true);
	sectormap_invalidate(m, 4 * MiB, MiB);
	s = sectormap_lookup(m, fd, 4 * MiB, 4096);
	CHECK(s < FALLBACK_MIN);
	CHECK(s == fiemap_sector(fd, 4 * MiB));

	/* Truncation: beyond the new end is unmapped after invalidate. */
	if (ftruncate(fd, MiB) == 0) {
		sectormap_invalidate(m, MiB, 0);
		CHECK(sectormap_lookup(m, fd, 8 * MiB, 4096) ==
		      fiemap_sector(fd, MiB - 512) + (7 * MiB + 512) / 512);
		CHECK(sectormap_lookup(m, fd, 0, 4096) == fiemap_sector(fd, 0));
	}

	/*
	 * Appending without fsync: delayed allocation makes it unmapped at
	 * first; after writeback it is found again without any invalidate,
	 * once the unmapped answer is older than its lifetime.
	 */
	write_at(fd, 3 * MiB, 64 * 1024, false);
	s = sectormap_lookup(m, fd, 3 * MiB, 4096);
	CHECK(s != 0);
	if (fsync(fd) == 0) {
		usleep(250 * 1000);
		want = fiemap_sector(fd, 3 * MiB);
		CHECK(want != 0);
		CHECK(sectormap_lookup(m, fd, 3 * MiB, 4096) == want);
	}

	sectormap_free(m);
	close(fd);
}

/* Many extents: more than one FIEMAP window. */
static void test_many_extents(void)
{
	char path[256];
	struct sectormap *m;
	unsigned i, checked = 0;
	int fd;

	fd = make_file(".", path, sizeof path);
	unlink(path);
	if (!fiemap_works(fd)) {
		close(fd);
		return;
	}
	/* Every other 4 KiB block: 200 extents separated by holes. */
	for (i = 0; i < 200; i++)
		write_at(fd, (uint64_t)i * 8192, 4096, false);
	if (fsync(fd) == -1) {
		perror("fsync");
		exit(99);
	}
	m = map_of(fd);
	/* Backwards, so that windows are fetched out of order. */
	for (i = 200; i-- > 0;) {
		uint64_t off = (uint64_t)i * 8192 + 100;
		uint64_t want = fiemap_sector(fd, off);

		if (want == 0)
			continue;
		CHECK(sectormap_lookup(m, fd, off, 4096) == want);
		CHECK(sectormap_lookup(m, fd, off + 4096, 4096) == want + 8);
		checked++;
	}
	CHECK(checked > 100);
	sectormap_free(m);
	close(fd);
}

/*
 * Fresh files, written and not yet placed (delayed allocation): each is
 * estimated contiguous, the next one after the last, within the limit;
 * once placed, the file answers from FIEMAP and the next estimate follows
 * the placement seen.
 */
static void test_fresh(void)
{
	char path1[256], path2[256];
	struct sectormap *m1, *m2;
	uint64_t a, b, placed;
	int fd1, fd2;

	fd1 = make_file(".", path1, sizeof path1);
	fd2 = make_file(".", path2, sizeof path2);
	unlink(path1);
	unlink(path2);
	if (!fiemap_works(fd1)) {
		close(fd1);
		close(fd2);
		return;
	}
	write_at(fd1, 0, MiB, false);
	write_at(fd2, 0, MiB, false);
	m1 = map_of(fd1);
	m2 = map_of(fd2);
	a = sectormap_lookup(m1, fd1, 0, MiB);
	CHECK(a < FALLBACK_MIN);
	CHECK(sectormap_lookup(m1, fd1, 65536, 4096) == a + 128);
	b = sectormap_lookup(m2, fd2, 0, MiB);
	CHECK(b >= a + MiB / 512);

	/* Placed: the real sector, and the cursor follows it. */
	if (fsync(fd1) == 0) {
		usleep(250 * 1000);
		placed = fiemap_sector(fd1, MiB - 512);
		CHECK(placed != 0);
		CHECK(sectormap_lookup(m1, fd1, MiB - 512, 512) == placed);
		sectormap_free(m2);
		m2 = map_of(fd2);
		CHECK(sectormap_lookup(m2, fd2, 0, 4096) ==
		      (placed + 1 + 7) / 8 * 8);
	}

	/* Never beyond the device. */
	sectormap_set_layout(&(struct sectormap_layout){ 64 * MiB });
	sectormap_free(m2);
	m2 = map_of(fd2);
	CHECK(sectormap_lookup(m2, fd2, 0, 4096) < 64 * MiB / 512);
	CHECK(sectormap_lookup(m2, fd2, 100 * MiB, 4096) < 64 * MiB / 512);
	sectormap_set_layout(&(struct sectormap_layout){ 0 });

	sectormap_free(m1);
	sectormap_free(m2);
	close(fd1);
	close(fd2);
}

/* A filesystem without FIEMAP: every offset gets the fallback. */
static void test_fallback(void)
{
	char path1[256], path2[256];
	struct sectormap *m1, *m2, *again;
	uint64_t a, b;
	struct stat st;
	int fd1, fd2;

	if (access("/dev/shm", W_OK) == -1) {
		fprintf(stderr, "note: no /dev/shm: fallback test skipped\n");
		skipped++;
		return;
	}
	fd1 = make_file("/dev/shm", path1, sizeof path1);
	fd2 = make_file("/dev/shm", path2, sizeof path2);
	unlink(path1);
	unlink(path2);
	if (fiemap_works(fd1)) {
		fprintf(stderr, "note: /dev/shm does FIEMAP: skipped\n");
		skipped++;
		goto out;
	}
	write_at(fd1, 0, MiB, false);
	write_at(fd2, 0, MiB, false);
	m1 = map_of(fd1);
	m2 = map_of(fd2);

	a = sectormap_lookup(m1, fd1, 0, 4096);
	b = sectormap_lookup(m2, fd2, 0, 4096);
	CHECK(a >= FALLBACK_MIN);
	CHECK(b >= FALLBACK_MIN);
	CHECK(a != b);
	/* 1 MiB apart at least: the files' ranges do not overlap. */
	CHECK(a > b ? a - b >= 2048 : b - a >= 2048);
	CHECK(sectormap_lookup(m1, fd1, 65536, 4096) == a + 128);
	CHECK(sectormap_lookup(m1, fd1, MiB - 1, 4096) == a + 2047);
	CHECK(sectormap_lookup(m1, fd1, 100ULL << 30, 4096) == a + (200ULL << 20));
	sectormap_invalidate(m1, 0, 0);
	CHECK(sectormap_lookup(m1, fd1, 0, 4096) == a);

	/* Stable: a new map of the same file says the same. */
	fstat(fd1, &st);
	again = sectormap_new(st.st_dev, st.st_ino);
	CHECK(sectormap_lookup(again, fd1, 4096, 4096) == a + 8);
	sectormap_free(again);

	sectormap_free(m1);
	sectormap_free(m2);
out:
	close(fd1);
	close(fd2);
}

int main(void)
{
	log_open(false, LOG_WARNING);
	test_fiemap();
	test_many_extents();
	test_fresh();
	test_fallback();
	if (failures != 0) {
		fprintf(stderr, "test_sectormap: %d failures\n", failures);
		return 1;
	}
	if (skipped != 0) {
		fprintf(stderr, "test_sectormap: %d parts skipped\n", skipped);
		return 77;
	}
	printf("test_sectormap: ok\n");
	return 0;
}
