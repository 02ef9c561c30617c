#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/ssd.sh: kyber's read latency under a write flood, on the ssd model.
#
#	bench/ssd.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# The workload: 4 readers of random 4 KiB at depth 1 each, against a
# writer streaming 1 MiB at depth 16, on the ssd model at its defaults
# (8 channels, reads 80 us, 500 MB/s per channel, a 32 GiB write cache
# draining at 1 GB/s) with 16 dispatch threads, so that the device holds
# up to 16 requests.  The writes are acknowledged from the cache in about
# 4 ms (16 MiB at 4 GB/s): within kyber's 10 ms target, so congestion
# (reads queued in the device behind writes) throttles them.  Shown two
# ways:
#
# 1. fuse-iosched-replay on a synthetic trace of that workload, closed
#    loop for 10 s (the cache has room throughout) and 20 s (it fills at
#    about 11 s under noop, see fuse-iosched(8)): the schedulers and the
#    model alone, the same on every run and at any load.  Configurations: idle (the readers
#    alone, noop), noop, deadline, kyber.
# 2. The mount: fio with O_DIRECT on a mount with -o disk_model=ssd,
#    configurations alternating for ROUNDS rounds of RUNTIME seconds:
#    idle, noop, deadline, kyber (its defaults: read_lat_nsec 2 ms,
#    write_lat_nsec 10 ms) and kyber-w1s (write_lat_nsec 1 s).  Here the
#    host's time counts too: a read's p99 alone is this machine's floor,
#    and the writes go no faster than the daemon can copy them into the
#    backing file (about 1 GB/s on a loaded 2-CPU machine, one pwritev at
#    a time per file), so the 16 MiB the writer keeps in flight take some
#    17 ms, over 10 ms (then kyber, by the kernel's rule, does not
#    throttle writes; kyber-w1s shows what it does when they meet their
#    target).
#
# Reported: read p50 and p99, for the mount also the p99 after its first
# 2 s (kyber needs some 100 ms timer runs to throttle), write MiB/s and
# p50 latency, and kyber's counters (timer runs, congested ones, write
# depth changes).  Every read and write on
# the mount is O_DIRECT and charged by the model; the daemon's backing
# file is read through the page cache, but the model charges the time
# either way, so no cache serves a figure.  Medians over the rounds.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=ssd RUNTIME=8
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

CONFIGS="idle noop deadline kyber kyber-w1s"
# After this many ms kyber has had its timer runs: the steady state.
STEADY_MS=2000
mount_fs ssd "disk_model=ssd,threads=16,max_background=64"
layout "$B/r.dat" 1g

REPLAY=${FUSE_IOSCHED_REPLAY:-$HERE/../replay/fuse-iosched-replay}
[ -x "$REPLAY" ] || REPLAY=$(command -v fuse-iosched-replay) ||
	die "no fuse-iosched-replay: build it or set FUSE_IOSCHED_REPLAY"
READERS=4
# Replay durations: within the cache, and past the time it fills.
REPLAY_S="10 20"
: >"$W/empty.conf"

{
	describe_machine
	echo "workload:  $READERS readers of 4k random O_DIRECT reads at depth 1 each against 1M sequential O_DIRECT writes at depth 16"
	echo "ssd model: $("$FUSE_IOSCHED" --print-config \
		-o "config=$W/empty.conf${MODULE_DIR:+,module_dir=$MODULE_DIR}" |
		grep '^ssd_' | tr '\n' ' ')threads=16"
} | tee "$RESULTS/machine.txt"
echo

# The replay: a trace of the same workload (every request issued at 0, so
# that closed loop issues each process's next one as its last completes),
# the readers' alone for idle.
python3 - "$RESULTS" "$READERS" <<'PY'
import random, sys
out, readers = sys.argv[1], int(sys.argv[2])
random.seed(16)
hdr = "# fuse-iosched trace 1: dev cpu seq time pid action rwbs sector + count [comm]\n"
def line(seq, pid, rwbs, sector, count, comm):
    return "0,0 0 %d 0.000000000 %d Q %s %d + %d [%s]\n" % (
        seq, pid, rwbs, sector, count, comm)
rd = [(101 + r, "RS", random.randrange(1 << 18) * 8, 8, "reader")
      for r in range(readers) for _ in range(1024)]
# The writer's depth 16: 16 processes each writing every 16th MiB.
wr = [(201 + k, "WS", (1 << 22) + (j * 16 + k) * 2048, 2048, "writer")
      for j in range(64) for k in range(16)]
for name, rqs in (("idle", rd), ("flood", rd + wr)):
    with open("%s/%s.trace" % (out, name), "w") as f:
        f.write(hdr)
        for i, r in enumerate(rqs, 1):
            f.write(line(i, *r))
PY
for s in $REPLAY_S; do
	for t in idle flood; do
		scheds=noop,deadline,kyber
		[ $t = idle ] && scheds=noop
		"$REPLAY" -o "config=$W/empty.conf" \
			${MODULE_DIR:+-o "module_dir=$MODULE_DIR"} -m ssd \
			-o threads=16 -s $scheds --closed-loop --time-based="$s" \
			--json "$RESULTS/$t.trace" >"$RESULTS/replay-$t-$s.json" ||
			die "fuse-iosched-replay failed on $t"
	done
done

# setup CONFIG: a fresh instance of its scheduler (through noop, so that
# kyber's depths start again), with its tunables.
setup() {
	switch_to ssd noop
	case $1 in
	idle) ;;
	kyber-w1s)
		switch_to ssd kyber
		echo 1000000000 >"$W/ssd/.control/iosched/write_lat_nsec" ;;
	*)	switch_to ssd "$1" ;;
	esac
}

# run CONFIG ROUND: the readers, and the writer but for idle.
run() {
	local c=$1 r=$2 writer=

	setup "$c"
	[ "$c" = idle ] || writer="--name=writer --filename=$W/ssd/w.dat
		--rw=write --bs=1m --ioengine=libaio --iodepth=16 --size=1g"
	# shellcheck disable=SC2086
	(cd "$RESULTS" && fio --output-format=json \
		--output="$RESULTS/$c-r$r.json" \
		--time_based --runtime="$RUNTIME" --direct=1 \
		--name=reader --filename="$W/ssd/r.dat" --rw=randread \
		--bs=4k --ioengine=psync --size=1g --numjobs=$READERS \
		--write_lat_log="$c-r$r" --log_avg_msec=0 \
		$writer >/dev/null 2>"$RESULTS/$c-r$r.err") || true
	[ -s "$RESULTS/$c-r$r.err" ] || rm -f "$RESULTS/$c-r$r.err"
	rm -f "$RESULTS/$c-r$r"_{lat,slat}.*.log
	# A fresh instance per run: its counters are this run's.
	save_counters ssd "$c-r$r"
}
each_run run

summarize "$ROUNDS" "$CONFIGS" "$STEADY_MS" "$REPLAY_S" <<'PY' | tee "$RESULTS/summary.txt"
rounds, configs, steady_ms = int(sys.argv[1]), sys.argv[2].split(), int(sys.argv[3])
replay_s = sys.argv[4].split()

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))] if xs else None

# One run: read p50, p99, p99 after steady_ms, write MiB/s, counters.
def run(tag):
    jobs = fio_jobs(tag)
    lat = []
    for path in glob.glob(os.path.join(RESULTS, tag + "_clat.*.log")):
        lat += [(int(t), int(v) / 1e6) for t, v, *_ in
                (l.split(",") for l in open(path).read().split("\n")
                 if l.strip())]
    if not jobs or not lat:
        return None
    wr = [j for j in jobs if j["jobname"] == "writer"]
    wp = wr[0]["write"]["clat_ns"].get("percentile", {}) if wr else {}
    ctr = read_counters(tag)
    return (pct([v for _, v in lat], 50), pct([v for _, v in lat], 99),
            pct([v for t, v in lat if t >= steady_ms], 99),
            wr[0]["write"]["bw"] / 1024.0 if wr else 0.0,
            wp.get("50.000000", 0) / 1e6 if wr else None,
            ctr.get("windows", 0), ctr.get("congested", 0),
            ctr.get("write_adjust", 0))

# The replay: one JSON object per scheduler.
def replay(name):
    try:
        return json.load(open(os.path.join(RESULTS, "replay-%s.json" % name)))
    except (OSError, ValueError):
        return []

rows = []
for secs in replay_s:
    idle = None
    for name in ("idle", "flood"):
        for r in replay("%s-%s" % (name, secs)):
            c = "idle" if name == "idle" else r["scheduler"]
            if c == "idle":
                idle = r["read_p99_ms"]
            rows.append([c, int(secs), r["read_p50_ms"], r["read_p99_ms"],
                         r["read_p99_ms"] / idle if idle else None,
                         r["write_p99_ms"], r["mib_s"]])
print("replay (fuse-iosched-replay, closed loop, ssd model, threads=16):")
table(["config", "secs", "p50 ms", "p99 ms", "x idle", "write p99 ms",
       "MiB/s"], rows)
print()
print("mount:")
meds = {}
for c in configs:
    runs = [x for x in (run("%s-r%d" % (c, r)) for r in range(1, rounds + 1))
            if x]
    meds[c] = [median(x[i] for x in runs) for i in range(8)]
idle = meds["idle"][2]
rows = []
for c in configs:
    m = meds[c]
    rows.append([c] + m[:3] +
                [m[2] / idle if m[2] is not None and idle else None, m[3],
                 m[4] if c != "idle" else 0.0] +
                [None if x is None else int(x) for x in m[5:]])
table(["config", "p50 ms", "p99 ms", "p99 >2s ms", "x idle", "write MiB/s",
       "write p50 ms", "windows", "congested", "w adjust"], rows)
print()
print("medians of %d rounds; p99 >2s: reads after the first %d ms; x idle:"
      " that p99 against the reads alone; write p50: fio's completion"
      " latency of the writer's 1 MiB writes (kyber throttles writes only"
      " while they meet write_lat_nsec); windows, congested, w adjust:"
      " kyber's counters; replay MiB/s: reads and writes;"
      " the cache fills after about 11 s under noop." % (rounds, steady_ms))
print("Target (issue 16): kyber's read p99 near read_lat_nsec (2 ms), noop's"
      " and deadline's far above.")
PY
