/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The disk models (-o disk_model=hdd or ssd): the service time of a
 * single-spindle disk or of a flash device behind a write cache, charged
 * to every io at the dispatch boundary.  What they model, and why their
 * defaults, is in fuse-iosched(8), DISK MODEL.
 *
 * Invariants:
 * - Cost and wait are apart: diskmodel_book charges an io on the clock it
 *   is given and returns when the io would end, without sleeping (the
 *   replay runs it on virtual time); only diskmodel_wait sleeps.
 * - The state behind dm->lock is taken in turn by the dispatch workers
 *   (diskmodel_next, or the io_uring engine's diskmodel_try_next): the
 *   hdd asks the queue for its next io only once the head is free, so
 *   the elevator chooses at that moment.
 * - A worker performs the syscall at dispatch and sleeps until the end
 *   the model booked: the copy is part of the service time, never
 *   charged on top of it.
 * - Costs are averages, never random draws: runs are reproducible.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuse-iosched.h"

/*
 * The seek curve: under a constant force the arm's time grows with the
 * square root of the distance (Ruemmler and Wilkes, "An introduction to
 * disk drive modeling", 1994, without the long seeks' coast phase):
 *
 *	seek(d) = track + (full - track) * sqrt(min(d, STROKE) / STROKE)
 *
 * over a virtual device of 1 TiB.  Farther distances cost a full stroke:
 * sectormap.c's fallback sectors lie 2^62 away from real ones.
 */
#define DISKMODEL_STROKE (1ULL << (40 - 9))
#define DISKMODEL_TRACK_NS 500000ULL	/* track-to-track seek: 0.5 ms */
#define DISKMODEL_MS 1000000ULL
/* sqrt(d / STROKE) in fixed point, FRAC_BITS after the point. */
#define DISKMODEL_FRAC_BITS 24

enum diskmodel_kind {
	DISKMODEL_HDD,
	DISKMODEL_SSD,
};

struct diskmodel {
	/* Set at creation, read-only after. */
	enum diskmodel_kind kind;
	uint64_t track_ns;	/* hdd: the shortest seek */
	uint64_t full_ns;	/* hdd: a full-stroke seek */
	uint64_t rotation_ns;	/* hdd: half a revolution */
	unsigned mb_per_s;	/* transfer: hdd's, or each ssd channel's */
	unsigned channels;	/* ssd: 1 to DISKMODEL_SSD_CHANNELS_MAX */
	uint64_t read_ns;	/* ssd: a read's access time */
	uint64_t buffer_bytes;	/* ssd: the write buffer */
	unsigned drain_mb_per_s; /* ssd: the flash's program rate */

	pthread_mutex_t lock;	/* taken in turn by the workers */
	uint64_t head;		/* hdd: sector after the last io booked; lock */
	uint64_t busy_until_ns;	/* hdd: when the last io booked ends; lock */
	/* ssd: when each channel ends what it was given; lock */
	uint64_t channel_free_ns[DISKMODEL_SSD_CHANNELS_MAX];
	/* ssd: when the write buffer would be empty, if no write came; lock */
	uint64_t drained_ns;
};

bool diskmodel_name_valid(const char *name)
{
	return strcmp(name, "none") == 0 || strcmp(name, "hdd") == 0 ||
	       strcmp(name, "ssd") == 0;
}

struct diskmodel *diskmodel_new(unsigned seek_ms, unsigned rpm,
				unsigned mb_per_s)
{
	struct diskmodel *dm;
	uint64_t avg_ns = seek_ms * DISKMODEL_MS;

	if (rpm == 0 || mb_per_s == 0) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof *dm);
	if (dm == NULL)
		return NULL;
	dm->track_ns = avg_ns < DISKMODEL_TRACK_NS ? avg_ns : DISKMODEL_TRACK_NS;
	/* The distance between two uniformly random positions has a mean
	 * square root of 8/15 of the stroke's: random I/O averages seek_ms,
	 * as data sheets quote it. */
	dm->full_ns = dm->track_ns + (avg_ns - dm->track_ns) * 15 / 8;
	dm->rotation_ns = 60 * 1000 * DISKMODEL_MS / rpm / 2;
	dm->mb_per_s = mb_per_s;
	pthread_mutex_init(&dm->lock, NULL);
	return dm;
}

struct diskmodel *diskmodel_ssd_new(const struct diskmodel_ssd *p)
{
	struct diskmodel *dm;

	if (p->channels == 0 || p->channels > DISKMODEL_SSD_CHANNELS_MAX ||
	    p->mb_per_s == 0 || p->buffer_mib == 0 ||
	    p->drain_mb_per_s == 0) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof *dm);
	if (dm == NULL)
		return NULL;
	dm->kind = DISKMODEL_SSD;
	dm->channels = p->channels;
	dm->read_ns = (uint64_t)p->read_us * 1000;
	dm->mb_per_s = p->mb_per_s;
	dm->buffer_bytes = (uint64_t)p->buffer_mib << 20;
	dm->drain_mb_per_s = p->drain_mb_per_s;
	pthread_mutex_init(&dm->lock, NULL);
	return dm;
}

void diskmodel_free(struct diskmodel *dm)
{
	if (dm == NULL)
		return;
	pthread_mutex_destroy(&dm->lock);
	free(dm);
}

/* floor(sqrt(x)), bit by bit: exact, and no libm for one function. */
static uint64_t diskmodel_isqrt(uint64_t x)
{
	uint64_t root = 0, bit = 1ULL << 62;

	while (bit > x)
		bit >>= 2;
	while (bit != 0) {
		if (x >= root + bit) {
			x -= root + bit;
			root = (root >> 1) + bit;
		} else {
			root >>= 1;
		}
		bit >>= 2;
	}
	return root;
}

uint64_t diskmodel_seek_ns(const struct diskmodel *dm, uint64_t distance)
{
	uint64_t frac;

	if (distance == 0)
		return 0;
	if (distance > DISKMODEL_STROKE)
		distance = DISKMODEL_STROKE;
	/* sqrt(d / 2^31) * 2^24 = sqrt(d * 2^17); d * 2^17 <= 2^48. */
	frac = diskmodel_isqrt(distance << (2 * DISKMODEL_FRAC_BITS - 31));
	return dm->track_ns + (((dm->full_ns - dm->track_ns) * frac) >>
			       DISKMODEL_FRAC_BITS);
}

uint64_t diskmodel_cost_ns(const struct diskmodel *dm, uint64_t head,
			   const struct elv_request *rq)
{
	uint64_t distance = rq->sector > head ? rq->sector - head :
			    head - rq->sector;
	uint64_t cost = rq->bytes * 1000 / dm->mb_per_s;

	if (distance != 0)
		cost += diskmodel_seek_ns(dm, distance) + dm->rotation_ns;
	return cost;
}

/* Caller holds dm->lock. */
static uint64_t do_diskmodel_hdd_book(struct diskmodel *dm,
				      const struct elv_request *rq,
				      uint64_t now_ns)
{
	uint64_t start = now_ns > dm->busy_until_ns ? now_ns :
			 dm->busy_until_ns;

	dm->busy_until_ns = start + diskmodel_cost_ns(dm, dm->head, rq);
	dm->head = elv_rq_end_sector(rq);
	return dm->busy_until_ns;
}

/*
 * How long a write of bytes arriving at start_ns waits for room in the
 * ssd's buffer.  The level at start_ns is what has not drained by then;
 * room for bytes appears once level + bytes - buffer more have drained
 * (a write larger than the buffer waits until it is empty and then for
 * its excess, as if it streamed through).
 */
static uint64_t diskmodel_ssd_room_ns(const struct diskmodel *dm,
				      uint64_t bytes, uint64_t start_ns)
{
	uint64_t level = 0;

	if (dm->drained_ns > start_ns)
		level = (dm->drained_ns - start_ns) * dm->drain_mb_per_s /
			1000;
	if (level + bytes <= dm->buffer_bytes)
		return 0;
	return (level + bytes - dm->buffer_bytes) * 1000 /
	       dm->drain_mb_per_s;
}

uint64_t diskmodel_ssd_cost_ns(const struct diskmodel *dm,
			       const struct elv_request *rq, uint64_t start_ns)
{
	uint64_t transfer = rq->bytes * 1000 / dm->mb_per_s;

	if (rq->dir == ELV_READ)
		return dm->read_ns + transfer;
	return diskmodel_ssd_room_ns(dm, rq->bytes, start_ns) + transfer;
}

/* Caller holds dm->lock. */
static uint64_t do_diskmodel_ssd_book(struct diskmodel *dm,
				      const struct elv_request *rq,
				      uint64_t now_ns)
{
	unsigned c, first = 0;
	uint64_t start, end;

	for (c = 1; c < dm->channels; c++)
		if (dm->channel_free_ns[c] < dm->channel_free_ns[first])
			first = c;
	start = now_ns > dm->channel_free_ns[first] ? now_ns :
		dm->channel_free_ns[first];
	end = start + diskmodel_ssd_cost_ns(dm, rq, start);
	if (rq->dir != ELV_READ) {
		/* The buffer takes the bytes; the drain goes on from
		 * whichever is later, the io's start or the last drain. */
		if (dm->drained_ns < start)
			dm->drained_ns = start;
		dm->drained_ns += rq->bytes * 1000 / dm->drain_mb_per_s;
	}
	dm->channel_free_ns[first] = end;
	return end;
}

/* Caller holds dm->lock. */
static uint64_t do_diskmodel_book(struct diskmodel *dm,
				  const struct elv_request *rq, uint64_t now_ns)
{
	if (dm->kind == DISKMODEL_SSD)
		return do_diskmodel_ssd_book(dm, rq, now_ns);
	return do_diskmodel_hdd_book(dm, rq, now_ns);
}

uint64_t diskmodel_book(struct diskmodel *dm, const struct elv_request *rq,
			uint64_t now_ns)
{
	uint64_t end;

	pthread_mutex_lock(&dm->lock);
	end = do_diskmodel_book(dm, rq, now_ns);
	pthread_mutex_unlock(&dm->lock);
	return end;
}

/* Sleep until at_ns on clock_now_ns()'s clock (CLOCK_MONOTONIC). */
void diskmodel_wait(uint64_t at_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(at_ns / 1000000000u),
		.tv_nsec = (long)(at_ns % 1000000000u),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
			       NULL) == EINTR)
		;
}

struct io *diskmodel_next(struct diskmodel *dm, struct queue *q,
			  uint64_t *end_ns)
{
	struct io *io;

	pthread_mutex_lock(&dm->lock);
	/*
	 * The hdd chooses the next io only once the head is free; the ssd
	 * takes it at once, queueing it in the device behind what its
	 * channels hold, as a device with a deep command queue does.
	 */
	if (dm->kind == DISKMODEL_HDD)
		diskmodel_wait(dm->busy_until_ns);
	io = queue_next(q);
	if (io != NULL)
		*end_ns = do_diskmodel_book(dm, &io->rq, clock_now_ns());
	pthread_mutex_unlock(&dm->lock);
	return io;
}

struct io *diskmodel_try_next(struct diskmodel *dm, struct queue *q,
			      uint64_t *end_ns, uint64_t *free_ns)
{
	struct io *io = NULL;
	uint64_t now = clock_now_ns();

	*free_ns = 0;
	pthread_mutex_lock(&dm->lock);
	/* As diskmodel_next, without the wait: the head frees at free_ns. */
	if (dm->kind == DISKMODEL_HDD && dm->busy_until_ns > now)
		*free_ns = dm->busy_until_ns;
	else if ((io = queue_try_next(q)) != NULL)
		*end_ns = do_diskmodel_book(dm, &io->rq, clock_now_ns());
	pthread_mutex_unlock(&dm->lock);
	return io;
}
