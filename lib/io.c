/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * struct io, one queued unit of I/O: its parts (the requests merged into
 * it, each with its buffer and, once performed, its result), the buffers,
 * and a result spread over the parts.  Who submits an io (request.c, the
 * replay, the unit tests) builds it here and finishes it through io->end;
 * the queue merges and dispatches it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuse-iosched.h"

/*
 * A direct io's buffer comes from malloc, aligned by hand, not from
 * posix_memalign: glibc before 2.38 does not reuse freed aligned chunks
 * well when small allocations come between them (its bug 14581): each
 * large direct write grew the heap by about its size, and the daemon kept
 * hundreds of MB after a burst.  The start of the malloc'd block is kept
 * in the pointer-sized slot just below the aligned buffer.
 */
void *io_alloc_buf(const struct io *io, size_t len)
{
	size_t align = io->dio_align;
	uintptr_t at;
	char *base;

	/* malloc(0) may return NULL: every buffer has at least one byte. */
	if (align == 0)
		return malloc(len ? len : 1);
	/* Rounded up, so that the copy into a bounce buffer never reads
	 * past the end of it. */
	len = (len + align - 1) & ~(align - 1);
	/* The slot below the buffer must be aligned for a pointer too. */
	if (align < sizeof(void *))
		align = sizeof(void *);
	base = malloc(sizeof(void *) + align - 1 + (len ? len : align));
	if (base == NULL)
		return NULL;
	at = ((uintptr_t)base + sizeof(void *) + align - 1) &
	     ~(uintptr_t)(align - 1);
	((void **)at)[-1] = base;
	return (void *)at;
}

void io_free_buf(const struct io *io, void *buf)
{
	if (io->dio_align == 0 || buf == NULL)
		free(buf);
	else
		free(((void **)buf)[-1]);
}

void io_init(struct io *io, struct io_part *p, enum elv_dir dir,
	     uint64_t file, uint64_t off, size_t len)
{
	memset(io, 0, sizeof *io);
	memset(p, 0, sizeof *p);
	p->len = len;
	io->parts = io->parts_tail = p;
	io->nr_parts = 1;
	io->fd = -1;
	io->rq.dir = dir;
	io->rq.file = file;
	io->rq.offset = off;
	io->rq.bytes = len;
	io->rq.nr_sectors = (len + (1u << IOSCHED_SECTOR_SHIFT) - 1) >>
			    IOSCHED_SECTOR_SHIFT;
	if (io->rq.nr_sectors == 0)
		io->rq.nr_sectors = 1;
}

struct io *io_new(enum elv_dir dir, uint64_t file, int fd,
		  unsigned dio_align, uint64_t off, size_t len)
{
	struct io *io;
	struct io_part *p;

	io = malloc(sizeof *io);
	p = malloc(sizeof *p);
	if (io == NULL || p == NULL)
		goto fail;
	io_init(io, p, dir, file, off, len);
	io->fd = fd;
	io->dio_align = dio_align;
	io->dio_unaligned = dio_align != 0 && ((off | len) & (dio_align - 1));
	return io;

fail:
	free(p);
	free(io);
	return NULL;
}

void io_free(struct io *io)
{
	struct io_part *p, *next;

	for (p = io->parts; p != NULL; p = next) {
		next = p->next;
		if (p->own != NULL)
			free(p->own);
		else if (p->lender == NULL && !p->borrowed)
			io_free_buf(io, p->buf);
		free(p);
	}
	free(io);
}

/*
 * Set each part's result from the bytes the syscalls moved (done) and the
 * error that stopped them (err, 0 for a short read at end of file): parts
 * wholly done get their length, the part where it stopped gets what it
 * got (a short read or write), later parts get the error (or 0 for reads
 * past the end).  A writeback write cut short by an error gets the error
 * instead: the kernel takes a short count there as done, and the rest
 * would be lost without a word.  So does a read: FUSE takes a short read
 * for the end of the file (or a hole), and would show zeros or a shorter
 * file where the error was.
 */
void io_spread(struct io *io, size_t done, int err)
{
	struct io_part *p;

	for (p = io->parts; p != NULL; p = p->next) {
		if (done >= p->len) {
			p->result = (ssize_t)p->len;
			done -= p->len;
		} else if (done > 0 && err &&
			   (io->rq.dir == ELV_READ || p->whole)) {
			p->result = -err;
			done = 0;
		} else if (done > 0) {
			p->result = (ssize_t)done;
			done = 0;
		} else {
			p->result = err ? -err : 0;
		}
	}
}
