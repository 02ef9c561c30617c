/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-iosched-replay's interfaces (replay/), on top of libcore's.
 * Errors: 0, or -1 with a one-line message in the err buffer given.
 */
#ifndef FUSE_IOSCHED_REPLAY_H
#define FUSE_IOSCHED_REPLAY_H

#include "fuse-iosched.h"

/* parse.c: traces for fuse-iosched-replay; -1 with a message */
struct replay_rq {
	uint64_t time_ns;	/* issue time, from the trace's first */
	uint64_t abs_ns;	/* issue time as recorded */
	uint64_t think_ns;	/* closed loop: after the previous completed */
	uint64_t sector;
	uint64_t seq;		/* position in the file */
	uint32_t nr_sectors;
	uint32_t proc;		/* index into procs */
	bool write;
	bool sync;
	bool sync_write;	/* O_SYNC, O_DSYNC, O_DIRECT: the kernel's WS */
};
/* A dispatch of our own format, with the times its C reported. */
struct replay_disp {
	uint64_t d_ns;		/* dispatch time, from the trace's first */
	uint64_t service_ns;	/* D to C, or UINT64_MAX if unknown */
	uint64_t wait_ns;	/* Q to D (C's wait), or UINT64_MAX */
	uint64_t sector;
	uint32_t nr_sectors;
	bool write;
};
/*
 * The settings of the mount a trace of ours was recorded on, from its
 * "# fuse-iosched mount:" header line; set false without one.
 */
struct replay_mount {
	bool set;
	char disk_model[8];		/* "none", "hdd" or "ssd" */
	unsigned seek_ms, rpm, mb_per_s;
	unsigned ssd_channels, ssd_read_us, ssd_mb_per_s, ssd_buffer_mib,
		 ssd_drain_mb_per_s;
	unsigned threads, nr_requests;
	char backing_io[16];
	unsigned seen;	/* REPLAY_MOUNT_*: the numbers the line gave */
};
/* Bits of replay_mount.seen, in parse_mount's order. */
enum {
	REPLAY_MOUNT_SEEK_MS = 1u << 0, REPLAY_MOUNT_RPM = 1u << 1,
	REPLAY_MOUNT_MB_PER_S = 1u << 2, REPLAY_MOUNT_SSD_CHANNELS = 1u << 3,
	REPLAY_MOUNT_SSD_READ_US = 1u << 4,
	REPLAY_MOUNT_SSD_MB_PER_S = 1u << 5,
	REPLAY_MOUNT_SSD_BUFFER_MIB = 1u << 6,
	REPLAY_MOUNT_SSD_DRAIN = 1u << 7, REPLAY_MOUNT_THREADS = 1u << 8,
	REPLAY_MOUNT_NR_REQUESTS = 1u << 9,
};

struct replay_trace {
	struct replay_rq *rq;	/* in issue order */
	size_t nr, cap;
	uint64_t span_ns;	/* the first issue to the last event */
	struct replay_disp *disp;	/* in dispatch order */
	size_t nr_disp, cap_disp;
	int64_t *procs;		/* process keys: pids, or MSR host+disk */
	uint32_t nr_procs;
	const char *format;	/* as named or detected */
	size_t nr_failed;	/* C events with an error */
	struct replay_mount mount;
};
/* "auto", "fuse-iosched", "blkparse" or "msr". */
bool parse_format_valid(const char *name);
/*
 * Lost events and a trace of ours without its first line: an error, or
 * with force a warning on stderr each; time going backwards and unknown
 * actions: a warning.
 */
int parse_trace(const char *path, const char *format, bool force,
		struct replay_trace *t, char *err, size_t size);
void parse_trace_free(struct replay_trace *t);

/* sim.c: one trace through one scheduler, in simulated time */
enum replay_lag {
	REPLAY_LAG_HEAD,
	REPLAY_LAG_ARRIVAL,
};
enum replay_model {
	REPLAY_MODEL_NONE,	/* transfer time only, one io at a time */
	REPLAY_MODEL_HDD,
	REPLAY_MODEL_SSD,
};
struct replay_opts {
	bool closed_loop;
	bool time_based;	/* closed loop: for a duration, fio-like */
	uint64_t duration_ns;	/* time-based: 0 is the recorded span */
	enum replay_model model;
	unsigned seek_ms, rpm, mb_per_s;	/* hdd; none: mb_per_s */
	struct diskmodel_ssd ssd;
	unsigned nr_requests;	/* per direction, as the mount's */
	unsigned threads;	/* ios in flight: the mount's workers */
	/* Host time from service end to completion, reads and writes. */
	uint64_t overhead_ns[2];
	/*
	 * Host time from "the device may take an io" to its start: when
	 * the head frees with ios queued (lag_ns[REPLAY_LAG_HEAD]), when an
	 * io arrives at an idle device (REPLAY_LAG_ARRIVAL).
	 */
	uint64_t lag_ns[2];
	/*
	 * The values behind those medians, as a trace of ours recorded them
	 * request by request, used in turn (none: the median every time).
	 */
	struct replay_host_seq {
		uint64_t *v;
		size_t n;
	} overhead_seq[2], lag_seq[2];
	bool cost;		/* time the scheduler's hooks */
	bool plot;		/* fill replay_result's buckets */
	/* Tunables to set, "name=value", and how many. */
	char **tunables;
	unsigned nr_tunables;
};
struct replay_result {
	uint64_t requests, merges, bytes;
	uint64_t start_ns, end_ns;	/* first issue, last completion */
	uint64_t *lat[2];		/* per direction, sorted */
	size_t nr_lat[2];
	double jain;
	double cost_ns;			/* per request, with opts->cost */
	/* Completed bytes per time bucket, with opts->plot. */
	uint64_t *buckets;
	size_t nr_buckets;
	uint64_t bucket_ns;
};
/* 0, or -1 with err set (an unknown tunable, a failing scheduler). */
int sim_run(const struct replay_trace *t, const struct elevator_type *type,
	    const struct replay_opts *o, struct replay_result *res,
	    char *err, size_t size);
void sim_result_free(struct replay_result *res);
/* The mount's host times from a trace of ours (0 from other traces): the
 * service time beyond the model's, per direction (overhead_ns), and the
 * delay before the device starts an io it could start (lag_ns). */
void sim_host_times(const struct replay_trace *t, struct replay_opts *o);
void sim_host_times_free(struct replay_opts *o);

#endif /* FUSE_IOSCHED_REPLAY_H */
