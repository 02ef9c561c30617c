/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Aligned buffers for direct ios, cached per thread.  A direct io needs
 * its data in aligned memory: its read buffer, its copy of a write's data,
 * a bounce buffer.  posix_memalign of a large buffer is a fresh mmap whose
 * every page faults on first touch, and munmap takes it away again: that
 * cost, once per direct io, was most of what a 1 MiB O_DIRECT write spent
 * in the daemon besides the copies.
 *
 * Each thread keeps at most one page-aligned buffer per power-of-two size
 * from 4 KiB to 1 MiB (2 MiB per thread at most), with no lock: the
 * thread that takes a buffer (diobuf_get) owns it through the io's part,
 * and the thread that gives it back (diobuf_put, from io_free: the thread
 * that ended the io) keeps it in its own cache, or frees it when it
 * already holds one of that size.  Without a disk model the submitting
 * thread usually performs and ends its own io, so buffers come back to
 * the thread that took them.  A thread's cache is freed when the thread
 * exits (the key's destructor), and the calling thread's by diobuf_flush.
 */
#include <pthread.h>
#include <stdlib.h>

#include "fuse-iosched.h"

#define DIOBUF_ALIGN 4096	/* also the smallest cached size */
#define DIOBUF_MIN_SHIFT 12
#define DIOBUF_MAX_SHIFT 20	/* 1 MiB: libfuse's largest request */
#define DIOBUF_CLASSES (DIOBUF_MAX_SHIFT - DIOBUF_MIN_SHIFT + 1)

struct diobuf_cache {
	void *buf[DIOBUF_CLASSES];	/* buf[i]: 1 << (12 + i) bytes */
};

static pthread_key_t diobuf_key;
static pthread_once_t diobuf_once = PTHREAD_ONCE_INIT;
static int diobuf_key_err;

static void diobuf_cache_free(void *arg)
{
	struct diobuf_cache *c = arg;

	for (int i = 0; i < DIOBUF_CLASSES; i++)
		free(c->buf[i]);
	free(c);
}

static void diobuf_key_init(void)
{
	diobuf_key_err = pthread_key_create(&diobuf_key, diobuf_cache_free);
}

/* The size class of a buffer of len bytes aligned to align, or -1 when
 * such buffers are not cached. */
static int diobuf_class(size_t len, unsigned align)
{
	int shift = DIOBUF_MIN_SHIFT;

	if (align > DIOBUF_ALIGN || len > (size_t)1 << DIOBUF_MAX_SHIFT)
		return -1;
	while (((size_t)1 << shift) < len)
		shift++;
	return shift - DIOBUF_MIN_SHIFT;
}

/* This thread's cache, made on first use; NULL without memory. */
static struct diobuf_cache *diobuf_cache(void)
{
	struct diobuf_cache *c;

	pthread_once(&diobuf_once, diobuf_key_init);
	if (diobuf_key_err != 0)
		return NULL;
	c = pthread_getspecific(diobuf_key);
	if (c != NULL)
		return c;
	c = calloc(1, sizeof *c);
	if (c != NULL && pthread_setspecific(diobuf_key, c) != 0) {
		free(c);
		return NULL;
	}
	return c;
}

void *diobuf_get(size_t len, unsigned align)
{
	int i = diobuf_class(len, align);
	struct diobuf_cache *c;
	void *buf;

	if (i < 0) {
		/* Rounded up: a bounce copy may read to the aligned end. */
		len = (len + align - 1) & ~((size_t)align - 1);
		if (posix_memalign(&buf, align, len ? len : align) != 0)
			return NULL;
		return buf;
	}
	c = diobuf_cache();
	if (c != NULL && c->buf[i] != NULL) {
		buf = c->buf[i];
		c->buf[i] = NULL;
		return buf;
	}
	if (posix_memalign(&buf, DIOBUF_ALIGN, (size_t)1 << (i + DIOBUF_MIN_SHIFT)) != 0)
		return NULL;
	return buf;
}

void diobuf_put(void *buf, size_t len, unsigned align)
{
	int i = diobuf_class(len, align);
	struct diobuf_cache *c;

	if (buf == NULL)
		return;
	if (i >= 0 && (c = diobuf_cache()) != NULL && c->buf[i] == NULL) {
		c->buf[i] = buf;
		return;
	}
	free(buf);
}

void diobuf_flush(void)
{
	struct diobuf_cache *c;

	pthread_once(&diobuf_once, diobuf_key_init);
	if (diobuf_key_err != 0)
		return;
	c = pthread_getspecific(diobuf_key);
	if (c != NULL) {
		pthread_setspecific(diobuf_key, NULL);
		diobuf_cache_free(c);
	}
}
