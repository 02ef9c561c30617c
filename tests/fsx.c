/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsx: a file-system exerciser in the spirit of the classic fsx.  It runs a
 * long random sequence of operations on one file (write, read, truncate,
 * fallocate with and without KEEP_SIZE, hole punching, zeroing, mmap reads
 * and MAP_SHARED writes with msync, copy_file_range inside the file, fsync,
 * close and reopen, and optionally O_DIRECT reads and writes, aligned or,
 * on a FUSE mount, not) and checks
 * every result against an in-memory model of what the file must contain.
 *
 * Everything random comes from one generator seeded by -S, so the same seed
 * and options replay the same sequence.  On the first difference the
 * program prints what it expected and what it found, decodes where the bad
 * data came from, prints the last operations (the replay log) and exits 1.
 *
 * The data written by operation N at file offset P is recognisable: each
 * aligned 8-byte word holds N + 1 in its low half and P / 8 (scrambled) in
 * its high half, so stale, misplaced or shifted data names its origin.
 * Holes and truncated tails read as zeros, never as a valid word.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/falloc.h>

/* O_DIRECT transfers are aligned to this, which suits 512 and 4K devices. */
#define FSX_DIO_ALIGN 4096
#define FSX_OFF_SCRAMBLE 0x5a5a5a5aU

enum fsx_op {
	OP_READ,
	OP_WRITE,
	OP_MAPREAD,
	OP_MAPWRITE,
	OP_TRUNCATE,
	OP_FALLOC,
	OP_FALLOC_KEEP,
	OP_PUNCH,
	OP_ZERO,
	OP_COPY,
	OP_DREAD,
	OP_DWRITE,
	OP_FSYNC,
	OP_REOPEN,
	OP_COUNT
};

/*
 * Names, relative weights, and the option letter (for -X) that turns each
 * operation off.  Reads and writes dominate, as in real use; the rarer
 * operations still come up thousands of times in a 100,000-operation run.
 */
static const struct {
	const char *name;
	unsigned weight;
} fsx_ops[OP_COUNT] = {
	[OP_READ]	= { "read", 18 },
	[OP_WRITE]	= { "write", 18 },
	[OP_MAPREAD]	= { "mapread", 8 },
	[OP_MAPWRITE]	= { "mapwrite", 8 },
	[OP_TRUNCATE]	= { "truncate", 6 },
	[OP_FALLOC]	= { "falloc", 4 },
	[OP_FALLOC_KEEP] = { "falloc_keep", 4 },
	[OP_PUNCH]	= { "punch", 5 },
	[OP_ZERO]	= { "zero", 3 },
	[OP_COPY]	= { "copy_range", 8 },
	[OP_DREAD]	= { "dread", 5 },
	[OP_DWRITE]	= { "dwrite", 5 },
	[OP_FSYNC]	= { "fsync", 1 },
	[OP_REOPEN]	= { "reopen", 1 },
};

/* One entry of the replay log. */
struct fsx_logent {
	unsigned long n;	/* operation number, from 1 */
	enum fsx_op op;
	off_t off;
	size_t len;
	off_t arg;		/* the copy destination, the new size, ... */
	off_t size_before;
	long long res;		/* bytes done, or -errno */
};

/* Options. */
static const char *fsx_fname;
static unsigned long fsx_nops = 10000;
static uint64_t fsx_seed;
static size_t fsx_maxlen = 256 * 1024;
static size_t fsx_maxop = 64 * 1024;
static unsigned fsx_loglen = 64;
static unsigned long fsx_check_every = 1000;
static bool fsx_direct;
/* -U: O_DIRECT at any offset, length and buffer address, as FUSE allows. */
static size_t fsx_dio_align = FSX_DIO_ALIGN;
static size_t fsx_dio_skew;	/* the buffer starts this far from aligned */
static bool fsx_verbose;
static bool fsx_disabled[OP_COUNT];
static bool fsx_user_disabled[OP_COUNT];	/* by -X, for the replay line */
static const char *fsx_argv0 = "fsx";

/* State. */
static int fsx_fd = -1;
static int fsx_dfd = -1;		/* O_DIRECT, with -d */
static unsigned char *fsx_good;		/* the model: fsx_maxlen bytes */
static unsigned char *fsx_buf;		/* what the file gave back */
static unsigned char *fsx_dbuf;		/* aligned bounce buffer for O_DIRECT */
static off_t fsx_size;			/* the model's size */
static uint64_t fsx_rng;
static unsigned long fsx_opnum;
static unsigned long fsx_done[OP_COUNT];
static struct fsx_logent *fsx_log;
static unsigned long fsx_logged;
static long fsx_pagesize;
static sigjmp_buf fsx_sigbus_jmp;
static volatile sig_atomic_t fsx_in_map;

/* splitmix64: small, fast and good enough to drive a test. */
static uint64_t fsx_random(void)
{
	uint64_t z = (fsx_rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0. */
static uint64_t fsx_below(uint64_t n)
{
	return fsx_random() % n;
}

static void fsx_log_dump(void)
{
	unsigned long first, i;
	struct fsx_logent *e;

	first = fsx_logged > fsx_loglen ? fsx_logged - fsx_loglen : 0;
	fprintf(stderr, "last %lu operations (of %lu):\n", fsx_logged - first,
		fsx_logged);
	for (i = first; i < fsx_logged; i++) {
		e = &fsx_log[i % fsx_loglen];
		fprintf(stderr, "  #%-7lu %-11s off 0x%-6llx len 0x%-6zx",
			e->n, fsx_ops[e->op].name, (long long)e->off, e->len);
		if (e->op == OP_COPY)
			fprintf(stderr, " to 0x%-6llx", (long long)e->arg);
		else if (e->op == OP_TRUNCATE)
			fprintf(stderr, " size 0x%-4llx", (long long)e->arg);
		else
			fprintf(stderr, "%15s", "");
		fprintf(stderr, " (size 0x%llx) => %lld\n",
			(long long)e->size_before, e->res);
	}
	fprintf(stderr, "replay: %s -S %" PRIu64 " -N %lu -l %zu -o %zu%s%s",
		fsx_argv0, fsx_seed, fsx_opnum, fsx_maxlen, fsx_maxop,
		fsx_direct ? " -d" : "", fsx_dio_align == 1 ? " -U" : "");
	/* Operations turned off on the way are turned off again on replay. */
	for (i = 0; i < OP_COUNT; i++)
		if (fsx_user_disabled[i])
			fprintf(stderr, " -X %s", fsx_ops[i].name);
	fprintf(stderr, " -v FILE\n");
}

__attribute__((format(printf, 1, 2), noreturn))
static void fsx_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fsx: FAILED at operation %lu (seed %" PRIu64 "): ",
		fsx_opnum, fsx_seed);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fsx_log_dump();
	exit(1);
}

__attribute__((format(printf, 1, 2), noreturn))
static void fsx_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fsx: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* The pattern byte that operation n writes at file offset p. */
static unsigned char fsx_pattern(unsigned long n, off_t p)
{
	uint64_t w = ((uint64_t)((uint32_t)(p >> 3) ^ FSX_OFF_SCRAMBLE) << 32) |
		     (uint32_t)(n + 1);

	return (unsigned char)(w >> ((p & 7) * 8));
}

static void fsx_fill(unsigned char *dst, off_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		dst[i] = fsx_pattern(fsx_opnum, off + (off_t)i);
}

/*
 * Say what the bad bytes are: zeros, or a word of ours naming the
 * operation and offset it was written for.  Data moved by a copy at an
 * unaligned distance straddles words, so every alignment is tried.
 */
static void fsx_explain(const unsigned char *got, off_t off, size_t len,
			off_t bad)
{
	uint64_t v, n, from;
	off_t start;
	int i;

	for (start = bad; start < bad + 8; start++) {
		if (start + 8 > off + (off_t)len)
			break;
		v = 0;
		for (i = 7; i >= 0; i--)
			v = (v << 8) | got[start - off + i];
		if (v == 0 && start == bad) {
			fprintf(stderr, "  the bad bytes at 0x%llx are zeros "
				"(a hole, or lost data)\n", (long long)bad);
			return;
		}
		n = (uint32_t)v;
		from = (((v >> 32) ^ FSX_OFF_SCRAMBLE) & 0xffffffffU) * 8;
		if (n == 0 || n > fsx_opnum || from >= fsx_maxlen)
			continue;
		fprintf(stderr, "  the 8 bytes at 0x%llx are what operation #%"
			PRIu64 " wrote at file offset 0x%" PRIx64 "%s\n",
			(long long)start, n - 1, from,
			from == (uint64_t)start ? "" : " (MISPLACED)");
		return;
	}
	fprintf(stderr, "  the bad bytes at 0x%llx are not data this program "
		"wrote\n", (long long)bad);
}

/* Compare got[0, len) with the model at off; fail on a difference. */
static void fsx_compare(const unsigned char *got, off_t off, size_t len,
			const char *what)
{
	size_t i, first, nbad = 0, j;

	if (memcmp(got, fsx_good + off, len) == 0)
		return;
	for (i = 0; i < len; i++)
		if (got[i] != fsx_good[off + i])
			break;
	first = i;
	for (; i < len; i++)
		if (got[i] != fsx_good[off + i])
			nbad++;
	fprintf(stderr, "fsx: %s: data differs from the model at file offset "
		"0x%llx (%zu bad bytes in 0x%llx+0x%zx), file size 0x%llx\n",
		what, (long long)(off + (off_t)first), nbad, (long long)off, len,
		(long long)fsx_size);
	fprintf(stderr, "  offset   expected got\n");
	for (j = first; j < len && j < first + 16; j++)
		fprintf(stderr, "  0x%-6llx 0x%02x     0x%02x%s\n",
			(long long)(off + (off_t)j), fsx_good[off + j], got[j],
			got[j] != fsx_good[off + j] ? "  <-" : "");
	fsx_explain(got, off, len, off + (off_t)first);
	fsx_fail("%s: data mismatch", what);
}

static void fsx_sigbus(int sig)
{
	if (fsx_in_map)
		siglongjmp(fsx_sigbus_jmp, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void fsx_open(void)
{
	fsx_fd = open(fsx_fname, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fsx_fd < 0)
		fsx_fail("open %s: %s", fsx_fname, strerror(errno));
	if (!fsx_direct)
		return;
	fsx_dfd = open(fsx_fname, O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fsx_dfd < 0)
		fsx_fail("open %s with O_DIRECT: %s", fsx_fname,
			 strerror(errno));
}

static void fsx_close(void)
{
	if (close(fsx_fd) != 0)
		fsx_fail("close: %s", strerror(errno));
	fsx_fd = -1;
	if (fsx_dfd >= 0 && close(fsx_dfd) != 0)
		fsx_fail("close (O_DIRECT): %s", strerror(errno));
	fsx_dfd = -1;
}

/* The model grows to newsize; the bytes beyond the old size are zero. */
static void fsx_model_extend(off_t newsize)
{
	if (newsize > fsx_size)
		fsx_size = newsize;
}

/* Expected length of a read of len bytes at off. */
static size_t fsx_expect_read(off_t off, size_t len)
{
	if (off >= fsx_size)
		return 0;
	return (size_t)(fsx_size - off) < len ? (size_t)(fsx_size - off) : len;
}

/* Read it all back and check: size and every byte. */
static void fsx_check_all(const char *why)
{
	struct stat st;
	size_t done = 0;
	ssize_t n;

	if (fstat(fsx_fd, &st) != 0)
		fsx_fail("fstat: %s", strerror(errno));
	if (st.st_size != fsx_size)
		fsx_fail("%s: file size 0x%llx, the model says 0x%llx", why,
			 (long long)st.st_size, (long long)fsx_size);
	while (done < (size_t)fsx_size) {
		n = pread(fsx_fd, fsx_buf + done, (size_t)fsx_size - done,
			  (off_t)done);
		if (n < 0)
			fsx_fail("%s: pread: %s", why, strerror(errno));
		if (n == 0)
			fsx_fail("%s: early end of file at 0x%zx of 0x%llx",
				 why, done, (long long)fsx_size);
		done += (size_t)n;
	}
	fsx_compare(fsx_buf, 0, (size_t)fsx_size, why);
	/* Past the end: nothing. */
	n = pread(fsx_fd, fsx_buf, 1, fsx_size);
	if (n != 0)
		fsx_fail("%s: read at end of file gave %zd", why, n);
}

static long long fsx_do_read(off_t off, size_t len)
{
	size_t want = fsx_expect_read(off, len);
	ssize_t n;

	n = pread(fsx_fd, fsx_buf, len, off);
	if (n < 0)
		fsx_fail("pread 0x%llx+0x%zx: %s", (long long)off, len,
			 strerror(errno));
	if ((size_t)n != want)
		fsx_fail("pread 0x%llx+0x%zx returned 0x%zx, expected 0x%zx "
			 "(size 0x%llx)", (long long)off, len, (size_t)n, want,
			 (long long)fsx_size);
	fsx_compare(fsx_buf, off, (size_t)n, "read");
	return n;
}

static long long fsx_do_write(off_t off, size_t len)
{
	ssize_t n;

	fsx_fill(fsx_buf, off, len);
	n = pwrite(fsx_fd, fsx_buf, len, off);
	if (n < 0)
		fsx_fail("pwrite 0x%llx+0x%zx: %s", (long long)off, len,
			 strerror(errno));
	if ((size_t)n != len)
		fsx_fail("short pwrite 0x%llx+0x%zx: 0x%zx", (long long)off,
			 len, (size_t)n);
	memcpy(fsx_good + off, fsx_buf, len);
	fsx_model_extend(off + (off_t)len);
	return n;
}

/* Map [off, off + len) of the file; returns the address of off. */
static unsigned char *fsx_map(off_t off, size_t len, int prot, void **base,
			      size_t *maplen)
{
	off_t pg = off & ~(off_t)(fsx_pagesize - 1);
	void *p;

	*maplen = (size_t)(off - pg) + len;
	p = mmap(NULL, *maplen, prot, MAP_SHARED, fsx_fd, pg);
	if (p == MAP_FAILED)
		fsx_fail("mmap 0x%llx+0x%zx: %s", (long long)pg, *maplen,
			 strerror(errno));
	*base = p;
	return (unsigned char *)p + (off - pg);
}

/*
 * A copy from or to a mapping.  A fault (SIGBUS: the file system could not
 * supply a page, or the file is shorter than it claims) is a failure with
 * the replay log, not a crash without one.
 */
static void fsx_map_copy(void *dst, const void *src, size_t len,
			 const char *what)
{
	if (sigsetjmp(fsx_sigbus_jmp, 1) != 0) {
		fsx_in_map = 0;
		fsx_fail("SIGBUS %s a mapping (0x%zx bytes, file size 0x%llx)",
			 what, len, (long long)fsx_size);
	}
	fsx_in_map = 1;
	memcpy(dst, src, len);
	fsx_in_map = 0;
}

static long long fsx_do_mapread(off_t off, size_t len)
{
	unsigned char *p;
	size_t maplen, tail = 0;
	void *base;

	if (fsx_size == 0)
		return 0;
	/* Inside the file: a mapping past the end faults. */
	off %= fsx_size;
	if (off + (off_t)len > fsx_size)
		len = (size_t)(fsx_size - off);
	p = fsx_map(off, len, PROT_READ, &base, &maplen);
	/* The last page beyond the end of the file must read as zeros. */
	if (off + (off_t)len == fsx_size && fsx_size % fsx_pagesize != 0)
		tail = (size_t)(fsx_pagesize - fsx_size % fsx_pagesize);
	fsx_map_copy(fsx_buf, p, len + tail, "reading");
	if (munmap(base, maplen) != 0)
		fsx_fail("munmap: %s", strerror(errno));
	fsx_compare(fsx_buf, off, len, "mapread");
	while (tail > 0) {
		if (fsx_buf[len + tail - 1] != 0)
			fsx_fail("mapread: byte 0x%llx past the end of file "
				 "(size 0x%llx) is 0x%02x, not zero",
				 (long long)(off + (off_t)(len + tail - 1)),
				 (long long)fsx_size, fsx_buf[len + tail - 1]);
		tail--;
	}
	return (long long)len;
}

static long long fsx_do_mapwrite(off_t off, size_t len)
{
	unsigned char *p;
	size_t maplen;
	void *base;

	/* Grow the file first: stores past its end would fault. */
	if (off + (off_t)len > fsx_size) {
		if (ftruncate(fsx_fd, off + (off_t)len) != 0)
			fsx_fail("mapwrite: ftruncate to 0x%llx: %s",
				 (long long)(off + (off_t)len), strerror(errno));
		fsx_model_extend(off + (off_t)len);
	}
	p = fsx_map(off, len, PROT_READ | PROT_WRITE, &base, &maplen);
	fsx_fill(fsx_buf, off, len);
	fsx_map_copy(p, fsx_buf, len, "writing");
	if (msync(base, maplen, MS_SYNC) != 0)
		fsx_fail("msync: %s", strerror(errno));
	if (munmap(base, maplen) != 0)
		fsx_fail("munmap: %s", strerror(errno));
	memcpy(fsx_good + off, fsx_buf, len);
	return (long long)len;
}

static long long fsx_do_truncate(off_t newsize)
{
	if (ftruncate(fsx_fd, newsize) != 0)
		fsx_fail("ftruncate to 0x%llx: %s", (long long)newsize,
			 strerror(errno));
	if (newsize < fsx_size)
		memset(fsx_good + newsize, 0, (size_t)(fsx_size - newsize));
	fsx_size = newsize;
	return 0;
}

/*
 * fallocate in one of its modes.  A mode the file system does not support
 * (EOPNOTSUPP) turns that operation off for the rest of the run, and the
 * summary says so; any other error is a failure.
 */
static long long fsx_do_falloc(enum fsx_op op, off_t off, size_t len)
{
	int mode = 0;

	switch (op) {
	case OP_FALLOC_KEEP:
		mode = FALLOC_FL_KEEP_SIZE;
		break;
	case OP_PUNCH:
		mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
		break;
	case OP_ZERO:
		mode = FALLOC_FL_ZERO_RANGE;
		break;
	default:
		break;
	}
	if (fallocate(fsx_fd, mode, off, (off_t)len) != 0) {
		if (errno == EOPNOTSUPP) {
			fprintf(stderr, "fsx: %s is not supported here: "
				"turned off\n", fsx_ops[op].name);
			fsx_disabled[op] = true;
			return -EOPNOTSUPP;
		}
		fsx_fail("fallocate(%s) 0x%llx+0x%zx: %s", fsx_ops[op].name,
			 (long long)off, len, strerror(errno));
	}
	switch (op) {
	case OP_FALLOC:
		fsx_model_extend(off + (off_t)len);
		break;
	case OP_PUNCH:
		if (off < fsx_size)
			memset(fsx_good + off, 0,
			       fsx_expect_read(off, len));
		break;
	case OP_ZERO:
		memset(fsx_good + off, 0, len);
		fsx_model_extend(off + (off_t)len);
		break;
	default:
		break;
	}
	return 0;
}

/* Copy [src, src + len) to dst inside the file; the ranges do not overlap. */
static long long fsx_do_copy(off_t src, off_t dst, size_t len)
{
	loff_t in = src, out = dst;
	size_t left = len;
	ssize_t n;

	while (left > 0) {
		n = copy_file_range(fsx_fd, &in, fsx_fd, &out, left, 0);
		if (n < 0) {
			if (errno == EOPNOTSUPP || errno == ENOSYS) {
				fprintf(stderr, "fsx: copy_file_range is not "
					"supported here: turned off\n");
				fsx_disabled[OP_COPY] = true;
				return -errno;
			}
			fsx_fail("copy_file_range 0x%llx -> 0x%llx +0x%zx: %s",
				 (long long)in, (long long)out, left,
				 strerror(errno));
		}
		if (n == 0)
			break;
		if ((size_t)n > left)
			fsx_fail("copy_file_range copied 0x%zx of 0x%zx",
				 (size_t)n, left);
		memcpy(fsx_good + out - n, fsx_good + in - n, (size_t)n);
		fsx_model_extend(out);
		left -= (size_t)n;
	}
	/* It stops only at the end of the source. */
	if (left > 0 && in < fsx_size)
		fsx_fail("copy_file_range stopped at 0x%llx, before the end "
			 "of file 0x%llx", (long long)in, (long long)fsx_size);
	return (long long)(len - left);
}

static long long fsx_do_dread(off_t off, size_t len)
{
	size_t want = fsx_expect_read(off, len);
	ssize_t n;

	n = pread(fsx_dfd, fsx_dbuf + fsx_dio_skew, len, off);
	if (n < 0)
		fsx_fail("O_DIRECT pread 0x%llx+0x%zx: %s", (long long)off,
			 len, strerror(errno));
	if ((size_t)n != want)
		fsx_fail("O_DIRECT pread 0x%llx+0x%zx returned 0x%zx, "
			 "expected 0x%zx (size 0x%llx)", (long long)off, len,
			 (size_t)n, want, (long long)fsx_size);
	fsx_compare(fsx_dbuf + fsx_dio_skew, off, (size_t)n, "O_DIRECT read");
	return n;
}

static long long fsx_do_dwrite(off_t off, size_t len)
{
	ssize_t n;

	fsx_fill(fsx_dbuf + fsx_dio_skew, off, len);
	n = pwrite(fsx_dfd, fsx_dbuf + fsx_dio_skew, len, off);
	if (n < 0)
		fsx_fail("O_DIRECT pwrite 0x%llx+0x%zx: %s", (long long)off,
			 len, strerror(errno));
	if ((size_t)n != len)
		fsx_fail("short O_DIRECT pwrite 0x%llx+0x%zx: 0x%zx",
			 (long long)off, len, (size_t)n);
	memcpy(fsx_good + off, fsx_dbuf + fsx_dio_skew, len);
	fsx_model_extend(off + (off_t)len);
	return n;
}

static enum fsx_op fsx_pick_op(void)
{
	unsigned total = 0, r, i;

	for (i = 0; i < OP_COUNT; i++)
		if (!fsx_disabled[i])
			total += fsx_ops[i].weight;
	r = (unsigned)fsx_below(total);
	for (i = 0; i < OP_COUNT; i++) {
		if (fsx_disabled[i])
			continue;
		if (r < fsx_ops[i].weight)
			return (enum fsx_op)i;
		r -= fsx_ops[i].weight;
	}
	return OP_READ;
}

/* One random operation, logged, done and checked. */
static void fsx_step(void)
{
	struct fsx_logent *e;
	enum fsx_op op;
	off_t off, arg = 0;
	size_t len;
	long long res = 0;
	struct stat st;

	op = fsx_pick_op();
	/* Draw everything, whatever the operation, to keep replays stable. */
	off = (off_t)fsx_below(fsx_maxlen);
	len = 1 + (size_t)fsx_below(fsx_maxop);
	arg = (off_t)fsx_below(fsx_maxlen + 1);

	switch (op) {
	case OP_READ:
		/* Mostly inside the file, sometimes across or past its end. */
		off = (off_t)((uint64_t)off % (uint64_t)(fsx_size + fsx_size / 8 + 1));
		break;
	case OP_DREAD:
	case OP_DWRITE:
		off &= ~((off_t)fsx_dio_align - 1);
		len = (len + fsx_dio_align - 1) & ~(fsx_dio_align - 1);
		if (op == OP_DREAD)
			off = (off_t)((uint64_t)off %
				      (uint64_t)(fsx_size + (off_t)fsx_dio_align)) &
			      ~((off_t)fsx_dio_align - 1);
		break;
	case OP_COPY:
		/* The source starts inside the file; dst is arg. */
		if (fsx_size > 0)
			off = (off_t)((uint64_t)off % (uint64_t)fsx_size);
		break;
	default:
		break;
	}
	if (off + (off_t)len > (off_t)fsx_maxlen) {
		if ((size_t)off >= fsx_maxlen)
			off = (off_t)fsx_maxlen - 1;
		len = fsx_maxlen - (size_t)off;
		if (op == OP_DREAD || op == OP_DWRITE) {
			len &= ~(fsx_dio_align - 1);
			if (len == 0) {
				off -= (off_t)fsx_dio_align;
				len = fsx_dio_align;
			}
		}
	}
	if (op == OP_COPY) {
		if (arg + (off_t)len > (off_t)fsx_maxlen)
			arg = (off_t)(fsx_maxlen - len);
		/* Same file: overlapping ranges are EINVAL, not a test. */
		if (fsx_size == 0 || (arg < off + (off_t)len &&
				      off < arg + (off_t)len))
			op = OP_READ;
	}

	fsx_opnum++;
	e = &fsx_log[fsx_logged++ % fsx_loglen];
	e->n = fsx_opnum;
	e->op = op;
	e->off = off;
	e->len = len;
	e->arg = arg;
	e->size_before = fsx_size;
	e->res = 0;
	if (fsx_verbose)
		printf("#%lu %s 0x%llx+0x%zx arg 0x%llx size 0x%llx\n",
		       fsx_opnum, fsx_ops[op].name, (long long)off, len,
		       (long long)arg, (long long)fsx_size);

	switch (op) {
	case OP_READ:
		res = fsx_do_read(off, len);
		break;
	case OP_WRITE:
		res = fsx_do_write(off, len);
		break;
	case OP_MAPREAD:
		res = fsx_do_mapread(off, len);
		break;
	case OP_MAPWRITE:
		res = fsx_do_mapwrite(off, len);
		break;
	case OP_TRUNCATE:
		res = fsx_do_truncate(arg);
		break;
	case OP_FALLOC:
	case OP_FALLOC_KEEP:
	case OP_PUNCH:
	case OP_ZERO:
		res = fsx_do_falloc(op, off, len);
		break;
	case OP_COPY:
		res = fsx_do_copy(off, arg, len);
		break;
	case OP_DREAD:
		res = fsx_do_dread(off, len);
		break;
	case OP_DWRITE:
		res = fsx_do_dwrite(off, len);
		break;
	case OP_FSYNC:
		if (fsync(fsx_fd) != 0)
			fsx_fail("fsync: %s", strerror(errno));
		break;
	case OP_REOPEN:
		fsx_close();
		fsx_open();
		break;
	case OP_COUNT:
		break;
	}
	e->res = res;
	fsx_done[op]++;

	/* The size is cheap to check every time. */
	if (fstat(fsx_fd, &st) != 0)
		fsx_fail("fstat: %s", strerror(errno));
	if (st.st_size != fsx_size)
		fsx_fail("after %s: file size 0x%llx, the model says 0x%llx",
			 fsx_ops[op].name, (long long)st.st_size,
			 (long long)fsx_size);
	if (fsx_check_every > 0 && fsx_opnum % fsx_check_every == 0)
		fsx_check_all("periodic check");
}

static void fsx_usage(void)
{
	unsigned i;

	fprintf(stderr,
"usage: %s [-dUqv] [-N ops] [-S seed] [-l maxlen] [-o maxop] [-L loglen]\n"
"           [-c check_every] [-X op]... FILE\n"
"  -N ops        operations to run (default 10000)\n"
"  -S seed       random seed (default: from the clock; printed)\n"
"  -l maxlen     largest file size (default 262144)\n"
"  -o maxop      largest transfer (default 65536)\n"
"  -L loglen     operations printed on failure (default 64)\n"
"  -c N          read the whole file back every N operations (0: never)\n"
"  -d            also do O_DIRECT reads and writes (a second descriptor)\n"
"  -U            with -d: at any offset, length and buffer address (FUSE\n"
"                takes them; a local filesystem does not)\n"
"  -X op         turn an operation off; one of:\n             ",
		fsx_argv0);
	for (i = 0; i < OP_COUNT; i++)
		fprintf(stderr, " %s", fsx_ops[i].name);
	fprintf(stderr,
"\n  -v            print every operation\n"
"  -q            no summary\n");
	exit(2);
}

static unsigned long long fsx_number(const char *s, const char *what)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || *s == '-')
		fsx_die("bad %s: %s", what, s);
	return v;
}

static void fsx_disable(const char *name)
{
	unsigned i;

	for (i = 0; i < OP_COUNT; i++) {
		if (strcmp(fsx_ops[i].name, name) == 0) {
			fsx_disabled[i] = true;
			fsx_user_disabled[i] = true;
			return;
		}
	}
	fsx_die("unknown operation %s", name);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	struct timespec ts;
	bool quiet = false, seeded = false;
	unsigned i;
	int c;

	fsx_argv0 = argv[0];
	while ((c = getopt(argc, argv, "N:S:l:o:L:c:dUX:vqh")) != -1) {
		switch (c) {
		case 'N':
			fsx_nops = fsx_number(optarg, "operation count");
			break;
		case 'S':
			fsx_seed = fsx_number(optarg, "seed");
			seeded = true;
			break;
		case 'l':
			fsx_maxlen = fsx_number(optarg, "file length");
			break;
		case 'o':
			fsx_maxop = fsx_number(optarg, "operation size");
			break;
		case 'L':
			fsx_loglen = fsx_number(optarg, "log length");
			break;
		case 'c':
			fsx_check_every = fsx_number(optarg, "check interval");
			break;
		case 'd':
			fsx_direct = true;
			break;
		case 'U':
			fsx_dio_align = 1;
			fsx_dio_skew = 3;
			break;
		case 'X':
			fsx_disable(optarg);
			break;
		case 'v':
			fsx_verbose = true;
			break;
		case 'q':
			quiet = true;
			break;
		default:
			fsx_usage();
		}
	}
	if (optind != argc - 1)
		fsx_usage();
	fsx_fname = argv[optind];
	if (fsx_maxlen < 2 * FSX_DIO_ALIGN || fsx_maxlen > (1UL << 30))
		fsx_die("file length must be in [%d, 1 GiB]", 2 * FSX_DIO_ALIGN);
	if (fsx_maxop < 1 || fsx_maxop > fsx_maxlen / 2)
		fsx_die("operation size must be in [1, file length / 2]");
	if (fsx_loglen < 1 || fsx_loglen > 1000000)
		fsx_die("log length must be in [1, 1000000]");
	if (!fsx_direct) {
		fsx_disabled[OP_DREAD] = true;
		fsx_disabled[OP_DWRITE] = true;
	}
	for (i = 0; i < OP_COUNT; i++)
		if (!fsx_disabled[i])
			break;
	if (i == OP_COUNT)
		fsx_die("every operation is turned off");
	if (!seeded) {
		clock_gettime(CLOCK_REALTIME, &ts);
		fsx_seed = (uint64_t)ts.tv_sec * 1000000007ULL ^
			   (uint64_t)ts.tv_nsec ^ (uint64_t)getpid();
	}
	fsx_rng = fsx_seed;
	fsx_pagesize = sysconf(_SC_PAGESIZE);

	fsx_good = calloc(1, fsx_maxlen + (size_t)fsx_pagesize);
	fsx_buf = calloc(1, fsx_maxlen + (size_t)fsx_pagesize);
	fsx_log = calloc(fsx_loglen, sizeof *fsx_log);
	if (fsx_good == NULL || fsx_buf == NULL || fsx_log == NULL ||
	    posix_memalign((void **)&fsx_dbuf, FSX_DIO_ALIGN,
			   fsx_maxlen + FSX_DIO_ALIGN) != 0)
		fsx_die("out of memory");

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fsx_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);

	/* Start from an empty file, so the model is exact from the start. */
	fsx_open();
	if (ftruncate(fsx_fd, 0) != 0)
		fsx_fail("ftruncate to 0: %s", strerror(errno));
	if (!quiet)
		printf("fsx: %s: seed %" PRIu64 ", %lu operations, file up to "
		       "%zu bytes, transfers up to %zu%s\n", fsx_fname,
		       fsx_seed, fsx_nops, fsx_maxlen, fsx_maxop,
		       fsx_direct ? ", O_DIRECT too" : "");
	fflush(stdout);

	while (fsx_opnum < fsx_nops)
		fsx_step();
	fsx_check_all("final check");
	fsx_close();

	if (!quiet) {
		printf("fsx: %lu operations passed:", fsx_opnum);
		for (i = 0; i < OP_COUNT; i++)
			printf(" %s %lu", fsx_ops[i].name, fsx_done[i]);
		printf("\n");
		for (i = 0; i < OP_COUNT; i++)
			if (fsx_disabled[i] && fsx_done[i] > 0)
				printf("fsx: %s turned off during the run\n",
				       fsx_ops[i].name);
	}
	free(fsx_good);
	free(fsx_buf);
	free(fsx_dbuf);
	free(fsx_log);
	return 0;
}
