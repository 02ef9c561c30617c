#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/latency.sh: does deadline bound read latency under a writer flood?
#
#	bench/latency.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# One synchronous reader does 4 KiB random O_DIRECT reads at a modest rate
# (20 per second) of its own file while two writers stream sequential
# 128 KiB O_DIRECT writes (libaio, 64 in flight each: as many as FUSE lets
# reach the daemon, max_background) into theirs.  The
# reader's latency (p50, p99, max) is measured under noop and deadline
# (and deadline with fifo_batch=1, as a diagnosis),
# once on a mount without a disk model (the real backing disk, through its
# page cache) and once on a mount with -o disk_model=hdd (one head, seeks
# cost milliseconds), alternating the schedulers (A B C A B C ...) for
# ROUNDS rounds; the median over rounds of each statistic is reported,
# with noop's over deadline's (how many times lower deadline's is).
#
# Under noop a read waits behind every write queued before it; deadline
# sorts, prefers reads and expires them after read_expire, so on the hdd
# model a read waits for at most about one write batch.
#
# Options: -t SECONDS per fio run (default 8), -r ROUNDS (default 3), -d DIR
# for the work directory (default /var/tmp).  RESULTS_DIR receives the fio
# JSON of every run (DISK-SCHED-rN.json), the reader's per-I/O latency logs,
# the daemon's stats before and after each run, summary.txt, and
# latency.png (the distributions, if gnuplot is installed).
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=latency RUNTIME=8
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

RATE=20 SIZE=256m
DISKS="real hdd"
# deadline-fb1 is deadline with fifo_batch=1: not a tuning to report as
# deadline's result, but the diagnosis of it (see bench/RESULTS.md).
SCHEDS="noop deadline deadline-fb1"

mount_fs real ""
mount_fs hdd "disk_model=hdd"
for f in r w1 w2; do
	layout "$B/$f.dat" $SIZE
done

{
	describe_machine
	echo "reader:    4 KiB randread, psync, O_DIRECT, $RATE IOPS; writers: 2 x seq 128 KiB, libaio, O_DIRECT, depth 64"
	echo "hdd model: defaults (seek_ms 8, rpm 7200, mb_per_s 150)"
} | tee "$RESULTS/machine.txt"
echo

total=$(( 2 * 3 * ROUNDS ))
n=0
for r in $(seq "$ROUNDS"); do
	for disk in $DISKS; do
		for s in $SCHEDS; do
			n=$((n + 1))
			printf '[%d/%d] %s %s round %d\n' $n $total "$disk" "$s" "$r"
			case $s in
			deadline-fb1)
				switch_to "$disk" deadline
				echo 1 >"$W/$disk/.control/iosched/fifo_batch" ;;
			*) switch_to "$disk" "$s" ;;
			esac
			drop_caches
			m=$W/$disk
			tag=$disk-$s-r$r
			cat "$m/.control/stats" >"$RESULTS/$tag.stats-before"
			cat >"$W/job.fio" <<JOB
[global]
time_based
runtime=$RUNTIME
direct=1
size=$SIZE
percentile_list=50:99:99.9

[reader]
filename=$m/r.dat
rw=randread
bs=4k
ioengine=psync
rate_iops=$RATE
write_lat_log=$RESULTS/$tag
log_avg_msec=0

; The two writers': a global section applies to the jobs below it.
[global]
rw=write
bs=128k
ioengine=libaio
iodepth=64

[writer1]
filename=$m/w1.dat

[writer2]
filename=$m/w2.dat
JOB
			cp "$W/job.fio" "$RESULTS/$tag.fio"
			fio --output-format=json --output="$RESULTS/$tag.json" \
				"$W/job.fio" >/dev/null 2>"$RESULTS/$tag.err" || true
			[ -s "$RESULTS/$tag.err" ] || rm -f "$RESULTS/$tag.err"
			cat "$m/.control/stats" >"$RESULTS/$tag.stats-after"
			# Only the completion latency log is used.
			rm -f "$RESULTS/${tag}_slat".*.log "$RESULTS/${tag}_lat".*.log
		done
	done
done

summarize "$RESULTS" "$ROUNDS" "$DISKS" "$SCHEDS" <<'PY' | tee "$RESULTS/summary.txt"
import glob, json, os, statistics, sys

results, rounds = sys.argv[1], int(sys.argv[2])
disks, scheds = sys.argv[3].split(), sys.argv[4].split()

def load(disk, s, r):
    data = fio_jobs("%s-%s-r%d" % (disk, s, r))
    if data is None:
        return None
    jobs = {j["jobname"]: j for j in data}
    if any(j.get("error") for j in jobs.values()):
        return None
    rd = jobs["reader"]["read"]["clat_ns"]
    pct = rd.get("percentile", {})
    wbw = sum(jobs[w]["write"]["bw"] for w in ("writer1", "writer2")) / 1024.0
    return {"p50": pct["50.000000"] / 1e6, "p99": pct["99.000000"] / 1e6,
            "max": rd["max"] / 1e6, "wbw": wbw,
            "n": jobs["reader"]["read"]["total_ios"]}

print("%-5s %-9s %9s %9s %9s %9s %7s" %
      ("disk", "scheduler", "p50 ms", "p99 ms", "max ms", "wr MiB/s", "reads"))
med = {}
for disk in disks:
    for s in scheds:
        runs = [load(disk, s, r) for r in range(1, rounds + 1)]
        if None in runs:
            print("%-5s %-9s %9s" % (disk, s, "err"))
            continue
        m = {k: statistics.median(x[k] for x in runs)
             for k in ("p50", "p99", "max", "wbw", "n")}
        med[disk, s] = m
        print("%-5s %-9s %9.2f %9.2f %9.2f %9.1f %7d" %
              (disk, s, m["p50"], m["p99"], m["max"], m["wbw"], m["n"]))
print()
print("noop / X: how many times lower X's read latency is than noop's"
      " (writers' MiB/s: X / noop)")
print("%-5s %-12s %9s %9s %9s %9s" % ("disk", "X", "p50", "p99", "max",
                                      "wr MiB/s"))
for disk in disks:
    for s in scheds[1:]:
        if (disk, "noop") not in med or (disk, s) not in med:
            continue
        a, b = med[disk, "noop"], med[disk, s]
        ratio = lambda k: a[k] / b[k] if b[k] else float("inf")
        print("%-5s %-12s %9.2f %9.2f %9.2f %9.2f" % (disk, s, ratio("p50"),
              ratio("p99"), ratio("max"), b["wbw"] / a["wbw"] if a["wbw"] else 0))
print()
print("median of %d rounds of each statistic; target: p99 ratio >= 5 on hdd"
      % rounds)

# Pooled distributions for the plot: one CDF file per disk and scheduler.
for disk in disks:
    for s in scheds:
        lat = []
        for f in glob.glob(os.path.join(results, "%s-%s-r*_clat.*.log" % (disk, s))):
            for line in open(f):
                parts = line.split(",")
                if len(parts) >= 2:
                    lat.append(int(parts[1]) / 1e6)
        lat.sort()
        with open(os.path.join(results, "cdf-%s-%s.dat" % (disk, s)), "w") as out:
            for i, v in enumerate(lat):
                out.write("%.4f %.5f\n" % (v, (i + 1) / len(lat)))
PY

if command -v gnuplot >/dev/null; then
	gnuplot -e "dir='$RESULTS'" "$HERE/latency.gnuplot" ||
		echo "latency: gnuplot failed" >&2
else
	echo "latency: no gnuplot (apt install gnuplot-nox): no plot" >&2
fi
