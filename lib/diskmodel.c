/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The disk models (-o disk_model=hdd or ssd): the service time of a
 * single-spindle disk or of a flash device, charged to every io at the
 * dispatch boundary.
 *
 * Solid-state and virtual disks hide seek costs, so on them sorting by
 * sector and anticipation buy nothing measurable.  With the model, a
 * dispatch worker completes an io only once its modelled service time
 * has passed, so every scheduler sees the same slow device below it, and
 * sees the cost as service time (the completion comes later), which is
 * what sorting and anticipation are designed for.
 *
 * The worker performs the syscall at dispatch and then sleeps until the
 * slot's end: the io completes when the model is done with it or when
 * the syscall is, whichever is later.  The syscall moves the data whose
 * transfer the model charges, as a device's DMA happens within its
 * service time; sleeping first and copying after would charge the
 * transfer twice, and make a large write's service time the model's plus
 * the host's copy (1 MiB into the page cache takes a millisecond or more
 * on a loaded machine), which kyber would count as device latency.
 *
 * An io costs
 *
 *	seek(distance) + rotation + transfer
 *
 * where distance is in sectors from the end of the previous io served to
 * the start of this one.  A contiguous io (distance 0) pays the transfer
 * only: the head is already there, and the data is the next under it.
 * Any other pays a seek and, on average, half a revolution of rotational
 * latency.  Transfer is bytes at mb_per_s (10^6 bytes per second, as disk
 * makers count).  Costs are averages, not random draws, so that runs are
 * reproducible and tests can rely on them.
 *
 * The seek curve.  The arm accelerates over the first half of a seek and
 * decelerates over the second, so under a constant force the time grows
 * with the square root of the distance; Ruemmler and Wilkes ("An
 * introduction to disk drive modeling", IEEE Computer, 1994) fit
 * a + b * sqrt(d) to short seeks and a line to long ones, whose coast
 * phase we leave out.  Here
 *
 *	seek(d) = track + (full - track) * sqrt(min(d, STROKE) / STROKE)
 *
 * with track the track-to-track time (0.5 ms, or seek_ms if smaller) and
 * STROKE a virtual device of 1 TiB.  The distance between two uniformly
 * random positions has a mean square root of 8/15 of the stroke's, so
 * full = track + (seek_ms - track) * 15/8 makes seek_ms the average seek
 * of random I/O, which is what data sheets quote: 8 ms gives a full
 * stroke of about 14.6 ms, close to real 7200 rpm drives.  Distances past
 * the stroke cost a full stroke: sectormap.c's fallback sectors (files
 * without FIEMAP) lie 2^62 and more away from real ones and 8 GiB apart
 * from each other, and must not turn into absurd delays.
 *
 * One head: the model serves one io at a time, in the order the elevator
 * hands them out.  A worker takes the head (dm->lock), waits until the
 * io being served before has ended, asks the queue for the next io, books
 * the head for it and lets go; then it performs the I/O and sleeps
 * until its slot ends.  The elevator therefore chooses each io at the moment
 * the head frees, as for a disk without command queueing, with every
 * request that arrived meanwhile to choose from.
 *
 * The ssd model is what kyber is for: a device that serves several
 * requests at once, where reads are cheap and writes are absorbed by a
 * write cache until it fills.  It has ssd_channels channels, each serving
 * one io at a time; an io goes to the channel that frees first, so the
 * device behaves as one queue served in parallel, as an NVMe or NCQ device
 * that takes every command the host sends (here: one per dispatch worker,
 * so the device's depth is the threads setting).
 *
 *	read:	ssd_read_us + transfer
 *	write:	(wait for room in the cache) + transfer
 *
 * with transfer at ssd_mb_per_s per channel.  Writes land in a write
 * cache of ssd_buffer_mib that the flash drains at ssd_drain_mb_per_s
 * whatever else happens (a fluid queue: the level falls linearly with
 * time).  While it has room a write is acknowledged after its transfer,
 * far sooner than it could be programmed, as real drives acknowledge
 * writes from their cache; the channel it held is the flash work that
 * makes a read queued behind it wait: read latency rises with the writes
 * piled up in the device, which is what a scheduler that limits writes in
 * flight (kyber) avoids.  Once the cache is full, a write holds its
 * channel until enough has drained, and a sustained writer's writes take
 * what it keeps in flight divided by the drain rate.
 *
 * The defaults are a current NVMe drive with TLC flash: 8 channels (the
 * usual controller's), 80 us to read a page, 500 MB/s per channel (4 GB/s
 * in all, PCIe 3.0 x4 to 4.0 speeds), a 32 GiB cache (drives of about
 * 1 TB run tens of GiB of their flash as a fast SLC cache; a DRAM buffer
 * of a few MiB would fill within milliseconds of a flood and stand for
 * no real drive's write acknowledgement) and 1 GB/s to TLC once it is
 * full (the sustained rate such drives fall to).  A 1 MiB writer at
 * depth 16 then writes in about 4 ms, well within kyber's 10 ms target,
 * for about 10 s before the cache is full; after that its writes take
 * 17 ms, miss the target, and kyber, by the kernel's rule, gives them
 * depth rather than take it (fuse-iosched(8), kyber).  With the earlier
 * defaults (4 channels, 32 MiB, 300 MB/s) the cache filled 20 ms into a
 * flood and such writes took 56 ms under every scheduler.
 *
 * Cost and wait are apart: diskmodel_book charges an io on a clock it is
 * given and returns when it would end, without sleeping, so a replay tool
 * can run the model on virtual time; only diskmodel_wait sleeps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuse-iosched.h"

/* The virtual device, for the seek curve: 1 TiB in sectors. */
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
