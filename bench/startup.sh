#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/startup.sh: BFQ's headline result, an application's start-up time
# under heavy background I/O (Valente et al.).
#
#	bench/startup.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# "Starting an application" is reading 300 small files (16 KiB each, a
# stand-in for its binary, libraries and configuration) one after the
# other with cat, 2 MiB apart on the disk, on a mount with -o
# disk_model=hdd: alone, and under
# two sequential readers and a sequential writer (fio, 128 KiB O_DIRECT,
# own file each), for bfq, cfq, deadline and noop.  Reported: the time
# under load as a ratio to the time alone.  Valente's target for bfq
# (issue 16): within 2 x the idle time.
#
# Caches: the small files are evicted from the page cache before each
# start (POSIX_FADV_DONTNEED on the mount's files; the "cache" column is
# what was still resident, which should be 0 %), and the background I/O
# is O_DIRECT, so every figure is the scheduler's and the model's; the
# backing directory's page cache does not matter, since the hdd model
# charges the time either way.  A start is capped at SECONDS (default 60),
# reported as ">".  Schedulers alternate for ROUNDS rounds; medians.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=startup RUNTIME=60
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

NFILES=300 FSIZE=16k BIGSIZE=1g
SCHEDS="noop deadline cfq bfq"

mount_fs hdd "disk_model=hdd"
# An application's files lie apart on the disk, 2 MiB apart.
spread "$B/app" $NFILES $FSIZE 2M
layout "$B/r1.dat" $BIGSIZE
layout "$B/r2.dat" $BIGSIZE
sync

{
	describe_machine
	echo "workload:  cat of $NFILES files of $FSIZE one after the other, alone and under 2 sequential readers + 1 sequential writer (128k O_DIRECT)"
	echo "hdd model: defaults; scheduler tunables at their defaults"
} | tee "$RESULTS/machine.txt"
echo

# background: the two readers and the writer, until killed.
background() {
	local m=$W/hdd
	for f in r1 r2; do
		fio --name=$f --filename="$m/$f.dat" --rw=read --bs=128k \
			--direct=1 --ioengine=psync --time_based --runtime=3600 \
			--output=/dev/null >/dev/null 2>&1 &
		BGPIDS="$BGPIDS $!"
		BG="$BG $!"
	done
	fio --name=w --filename="$m/w.dat" --rw=write --bs=128k --size=$BIGSIZE \
		--direct=1 --ioengine=psync --time_based --runtime=3600 \
		--output=/dev/null >/dev/null 2>&1 &
	BGPIDS="$BGPIDS $!"
	BG="$BG $!"
}

# start TAG: one start of the application: its files, read by one cat.
start() {
	# shellcheck disable=SC2046
	timed_cat "$1" $(printf "$W/hdd/app/f%d " $(seq $NFILES))
}

total=$(( ROUNDS * 2 * $(echo "$SCHEDS" | wc -w) ))
n=0
for r in $(seq "$ROUNDS"); do
	for s in $SCHEDS; do
		switch_to hdd "$s"
		n=$((n + 1))
		printf '[%d/%d] %s, alone, round %d\n' $n $total "$s" "$r"
		start "idle-$s-r$r"
		n=$((n + 1))
		printf '[%d/%d] %s, under load, round %d\n' $n $total "$s" "$r"
		BG=
		background
		sleep 2
		cat "$W/hdd/.control/stats" >"$RESULTS/load-$s-r$r.stats-before"
		start "load-$s-r$r"
		cat "$W/hdd/.control/stats" >"$RESULTS/load-$s-r$r.stats-after"
		# shellcheck disable=SC2086
		kill $BG 2>/dev/null || true
		# shellcheck disable=SC2086
		wait $BG 2>/dev/null || true
	done
done

summarize "$RESULTS" "$ROUNDS" "$SCHEDS" "$RUNTIME" <<'PY' | tee "$RESULTS/summary.txt"
import os, statistics, sys

rounds = int(sys.argv[2])
scheds, cap = sys.argv[3].split(), float(sys.argv[4])

def runs(kind, s):
    xs = [timed_secs("%s-%s-r%d" % (kind, s, r)) for r in range(1, rounds + 1)]
    return [x for x in xs if x is not None]

def med(kind, s):
    xs = runs(kind, s)
    return statistics.median(xs) if xs else None

def fmt(x):
    return "err" if x is None else (">%.0f" % cap if x == float("inf") else "%.2f" % x)

print("start-up: cat of 300 x 16 KiB files; seconds, median of %d" % rounds)
print("%-10s %8s %12s %9s %7s  %s" % ("scheduler", "alone", "under load",
      "x alone", "cache", "rounds under load (s)"))
alone_all = [med("idle", s) for s in scheds]
alone_all = [x for x in alone_all if x is not None]
ref = statistics.median(alone_all) if alone_all else None
for s in scheds:
    a, l = med("idle", s), med("load", s)
    ratio = None if a is None or l is None or ref is None else l / ref
    print("%-10s %8s %12s %9s %6s%%  %s" % (s, fmt(a), fmt(l),
          ">" if ratio == float("inf") else fmt(ratio),
          read_result("load-%s-r1" % s, "cache"),
          " ".join(fmt(x) for x in runs("load", s))))
print()
print("x alone: against the median of all schedulers' times alone (%s s)."
      "  Target (issue 16): bfq within 2 x." % fmt(ref))
print("cache: share of the small files resident when a start began (round 1);"
      " background I/O is O_DIRECT: no figure is a cache's.")
PY
