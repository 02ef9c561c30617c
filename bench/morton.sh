#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/morton.sh: small dependent reads against a streaming write, Andrew
# Morton's test of the anticipatory scheduler (LKML, January 2003).
#
#	bench/morton.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# One process reads 150 files of 32 KiB, 4 MiB apart on the disk, one after
# the other (cat, as a stand-in for his kernel compile: each read depends
# on the one before)
# while another streams a large write (dd bs=1M).  Morton's figures on
# 2.5.59: 400 s under deadline, 70 s under anticipatory, 48 s on an idle
# disk.  Here on the hdd model: the cat's time on an idle disk, and its
# time under each scheduler with dd running, as a ratio to the idle time,
# on two mounts of the same backing directory, one without and one with
# -o writeback_cache (with it, dd's writes reach the scheduler from the
# kernel's writeback, in large asynchronous batches, without dd's pid).
#
# The cat starts once dd has streamed for 2 s, and dd is stopped when the
# cat is done (or after SECONDS, default 60, the cap on one cat: a cat that
# hits it is reported as ">").  Before every cat, the small files are
# evicted from the page cache (POSIX_FADV_DONTNEED on the mount's files),
# so every read reaches the scheduler: the "cache" column shows how much of
# them was still resident when the cat started (should be 0 %).  dd's
# writes are served by the page cache under writeback_cache (the figure
# measures how the scheduler treats the writeback stream), by nothing
# without it (each write is dd's own, synchronous).  Morton's own disk
# and page cache are not comparable; the ratios are.
#
# Two shapes of reader (SHAPES, default both): "one", one cat for all the
# files, and "each", one cat per file, 150 processes one after the other
# (as a shell script or a build reads: each process reads one file and
# exits; issue 27), where a scheduler must see that a process exited and
# that the next one reads close by.
#
# Runs alternate over the schedulers (idle first, then each scheduler with
# the writer) for ROUNDS rounds, the median is reported.  SCHEDS and
# SHAPES in the environment run a subset.  RESULTS_DIR gets
# each run's time, the daemon's stats and iosched tunables around each run,
# and summary.txt.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=morton RUNTIME=60
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

NFILES=150 FSIZE=32k
SCHEDS=${SCHEDS:-noop deadline anticipatory cfq bfq}
SHAPES=${SHAPES:-one each}
MODES="sync wbc"

mount_fs sync "disk_model=hdd"
mount_fs wbc "disk_model=hdd,writeback_cache"
# Spread over the disk as a source tree is, 4 MiB apart.
spread "$B/small" $NFILES $FSIZE 4M

{
	describe_machine
	echo "workload:  cat of $NFILES files of $FSIZE one after the other, against dd bs=1M streaming a write"
	echo "shapes:    $SHAPES (one: one cat for all files; each: one cat per file)"
	echo "hdd model: defaults (seek_ms 8, rpm 7200, mb_per_s 150); scheduler tunables at their defaults"
	echo "mounts:    sync (no writeback_cache), wbc (-o writeback_cache)"
} | tee "$RESULTS/machine.txt"
echo

# run MODE SCHED TAG WRITER SHAPE: the cat(s), with dd streaming when
# WRITER is 1.
run() {
	local m=$W/$1 dd_pid=
	switch_to "$1" "$2"
	cat "$m/.control/stats" >"$RESULTS/$3.stats-before"
	save_counters "$1" "$3-before"
	if [ "$4" = 1 ]; then
		dd if=/dev/zero of="$m/big" bs=1M count=100000 2>/dev/null &
		dd_pid=$!
		BGPIDS="$BGPIDS $dd_pid"
		sleep 2
	fi
	# shellcheck disable=SC2046
	if [ "$5" = one ]; then
		timed_cat "$3" $(printf "$m/small/f%d " $(seq $NFILES))
	else
		# shellcheck disable=SC2046
		timed_cats "$3" $(printf "$m/small/f%d " $(seq $NFILES))
	fi
	cat "$m/.control/stats" >"$RESULTS/$3.stats-after"
	save_counters "$1" "$3-after"
	for f in "$m"/.control/iosched/*; do
		[ -e "$f" ] && echo "$(basename "$f") $(cat "$f")"
	done >"$RESULTS/$3.iosched" 2>/dev/null || true
	if [ -n "$dd_pid" ]; then
		kill "$dd_pid" 2>/dev/null || true
		wait "$dd_pid" 2>/dev/null || true
		# Unlinking drops what writeback has not sent yet.
		rm -f "$m/big"
		sleep 1
	fi
}

nshapes=$(echo "$SHAPES" | wc -w)
total=$(( ROUNDS * 2 * nshapes * (1 + $(echo "$SCHEDS" | wc -w)) ))
n=0
for r in $(seq "$ROUNDS"); do
	for shape in $SHAPES; do
		for mode in $MODES; do
			t=$mode-$shape
			n=$((n + 1))
			printf '[%d/%d] %s, idle disk, round %d\n' $n $total "$t" "$r"
			run "$mode" deadline "$t-idle-r$r" 0 "$shape"
			for s in $SCHEDS; do
				n=$((n + 1))
				printf '[%d/%d] %s, %s with dd, round %d\n' $n $total "$t" "$s" "$r"
				run "$mode" "$s" "$t-$s-r$r" 1 "$shape"
			done
		done
	done
done

modes=
for shape in $SHAPES; do
	for mode in $MODES; do
		modes="$modes $mode-$shape"
	done
done
summarize "$RESULTS" "$ROUNDS" "$SCHEDS" "$modes" "$RUNTIME" <<'PY' | tee "$RESULTS/summary.txt"
import os, statistics, sys

rounds = int(sys.argv[2])
scheds, modes, cap = sys.argv[3].split(), sys.argv[4].split(), float(sys.argv[5])

def fmt(x):
    return ">%.0f" % cap if x == float("inf") else "%.2f" % x

print("cat of 150 x 32 KiB files; seconds (median of %d) and ratio to the"
      " idle disk of the same mount" % rounds)
print("mount: sync or wbc (writeback_cache), then the shape: one cat for"
      " all files (one) or one cat per file (each)")
print("%-9s %-13s %9s %8s %7s  %s" % ("mount", "scheduler", "seconds",
      "x idle", "cache", "rounds (s)"))
for mode in modes:
    idle = [timed_secs("%s-idle-r%d" % (mode, r)) for r in range(1, rounds + 1)]
    idle = [x for x in idle if x is not None]
    if not idle:
        print("%-9s %-13s %9s" % (mode, "idle disk", "err"))
        continue
    i = statistics.median(idle)
    print("%-9s %-13s %9s %8s %6s%%  %s" % (mode, "idle disk", fmt(i), "1.00",
          read_result("%s-idle-r1" % mode, "cache"), " ".join(fmt(x) for x in idle)))
    for s in scheds:
        xs = [timed_secs("%s-%s-r%d" % (mode, s, r)) for r in range(1, rounds + 1)]
        xs = [x for x in xs if x is not None]
        if not xs:
            print("%-9s %-13s %9s" % (mode, s, "err"))
            continue
        m = statistics.median(xs)
        print("%-9s %-13s %9s %8s %6s%%  %s" % (mode, s, fmt(m),
              fmt(m / i) if m != float("inf") else ">",
              read_result("%s-%s-r1" % (mode, s), "cache"),
              " ".join(fmt(x) for x in xs)))
print()
print("anticipatory's counters, summed over its rounds")
names = ["antic_started", "antic_hits", "antic_close", "antic_timeouts",
         "antic_other", "antic_exits", "sync_batches", "async_batches", "fifo_expired",
         "writes_held"]
print("%-9s %s" % ("mount", " ".join("%14s" % n for n in names)))
for mode in modes:
    tot = {}
    for r in range(1, rounds + 1):
        for k, v in counters_delta("%s-anticipatory-r%d" % (mode, r)).items():
            tot[k] = tot.get(k, 0) + v
    if "anticipatory" in scheds:
        print("%-9s %s" % (mode, " ".join("%14s" % tot.get(n, "-") for n in names)))
print()
print("cache: share of the small files in the page cache when the cat started"
      " (round 1; evicted before each cat, so every read reaches the"
      " scheduler).  dd's writes: through the page cache and writeback"
      " (wbc) or synchronous from dd (sync).")
print("Morton, 2.5.59 on a real disk: deadline 8.3 x idle, anticipatory 1.5 x."
      "  Target (issues 15, 27): anticipatory <= 2 x idle and >= 4 x faster"
      " than deadline, on both mounts, in both shapes.")
PY
