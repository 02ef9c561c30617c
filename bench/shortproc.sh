#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/shortproc.sh: a stream of short processes, each reading one small
# file and exiting, nothing else running (issue 27).
#
#	bench/shortproc.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# 300 files of 4 KiB, 64 KiB apart on the disk, each read by a cat of its
# own, one after the other, on a mount with -o disk_model=hdd.  An idling
# scheduler that does not learn that a process exited waits a whole idle
# window (cfq and bfq: slice_idle, 8 ms) after each one for a read that
# never comes; with exits told (procwatch.c) the wait ends at the exit.
# Reported: seconds for the stream, milliseconds per process, and the
# ratio to deadline's time.  Target: cfq and bfq at most 1.5 x deadline.
#
# Schedulers alternate for ROUNDS rounds (median reported); the files are
# evicted from the page cache before each run, so every read reaches the
# scheduler (the "cache" column says how much was still resident).
# SECONDS (default 60) caps one run.  SCHEDS in the environment runs a
# subset.  RESULTS_DIR gets each run's time, the daemon's stats around
# each run, and summary.txt.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=shortproc RUNTIME=60
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

NFILES=300 FSIZE=4k
SCHEDS=${SCHEDS:-deadline noop anticipatory cfq bfq}

mount_fs hdd "disk_model=hdd"
spread "$B/small" $NFILES $FSIZE 64k

{
	describe_machine
	echo "workload:  $NFILES processes one after the other, each a cat of one $FSIZE file; nothing else"
	echo "hdd model: defaults (seek_ms 8, rpm 7200, mb_per_s 150); scheduler tunables at their defaults"
} | tee "$RESULTS/machine.txt"
echo

total=$(( ROUNDS * $(echo "$SCHEDS" | wc -w) ))
n=0
for r in $(seq "$ROUNDS"); do
	for s in $SCHEDS; do
		n=$((n + 1))
		printf '[%d/%d] %s, round %d\n' $n $total "$s" "$r"
		switch_to hdd "$s"
		cat "$W/hdd/.control/stats" >"$RESULTS/$s-r$r.stats-before"
		save_counters hdd "$s-r$r-before"
		# shellcheck disable=SC2046
		timed_cats "$s-r$r" $(printf "$W/hdd/small/f%d " $(seq $NFILES))
		cat "$W/hdd/.control/stats" >"$RESULTS/$s-r$r.stats-after"
		save_counters hdd "$s-r$r-after"
	done
done

summarize "$RESULTS" "$ROUNDS" "$SCHEDS" "$RUNTIME" "$NFILES" <<'PY' | tee "$RESULTS/summary.txt"
import statistics, sys

rounds, scheds = int(sys.argv[2]), sys.argv[3].split()
cap, nfiles = float(sys.argv[4]), int(sys.argv[5])

def fmt(x):
    return ">%.0f" % cap if x == float("inf") else "%.2f" % x

med = {}
for s in scheds:
    xs = [timed_secs("%s-r%d" % (s, r)) for r in range(1, rounds + 1)]
    med[s] = (statistics.median([x for x in xs if x is not None])
              if any(x is not None for x in xs) else None, xs)
base = med.get("deadline", (None,))[0]
print("%d processes, each a cat of one small file; seconds (median of %d)"
      % (nfiles, rounds))
print("%-13s %9s %10s %11s %6s  %s" % ("scheduler", "seconds", "ms/process",
      "x deadline", "cache", "rounds (s)"))
for s in scheds:
    m, xs = med[s]
    if m is None:
        print("%-13s %9s" % (s, "err"))
        continue
    print("%-13s %9s %10s %11s %5s%%  %s" % (s, fmt(m),
          fmt(1000 * m / nfiles) if m != float("inf") else ">",
          fmt(m / base) if base and m != float("inf") else "-",
          read_result("%s-r1" % s, "cache"),
          " ".join(fmt(x) for x in xs if x is not None)))
print()
print("Target (issue 27): cfq and bfq at most 1.5 x deadline's time.")
PY
