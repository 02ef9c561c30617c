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
# The files lie in an ext4 image on a loop device with direct I/O (as
# kernel.sh); kernel rows read them there, without FUSE, the loop
# device's scheduler set to each of KSCHEDS (none mq-deadline kyber bfq)
# this kernel has, with no disk model (this machine's disk: only their
# ratio to mq-deadline compares).  Schedulers alternate for ROUNDS rounds
# (median reported); the files are evicted from the page cache before
# each run, so every read reaches the scheduler (the "cache" column says
# how much was still resident).  SECONDS (default 60) caps one run.
# SCHEDS and KSCHEDS in the environment run a subset.  RESULTS_DIR gets
# each run's time, the daemon's stats around each run, and summary.txt.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=shortproc RUNTIME=60
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

NFILES=300 FSIZE=4k
SCHEDS=${SCHEDS:-deadline noop anticipatory cfq bfq}
KSCHEDS=${KSCHEDS:-mq-deadline none kyber bfq}

loop_setup 1G
mount_fs hdd "disk_model=hdd"
spread "$B/small" $NFILES $FSIZE 64k
kernel_configs "$KSCHEDS"
# shellcheck disable=SC2086 # a list
CONFIGS=$(printf 'hdd:%s ' $SCHEDS)$KCONFIGS

{
	describe_machine
	echo "workload:  $NFILES processes one after the other, each a cat of one $FSIZE file; nothing else"
	echo "hdd model: defaults (seek_ms 8, rpm 7200, mb_per_s 150); scheduler tunables at their defaults"
	echo "loop:      $LOOP, ext4 image of 1G in $W; kernel rows without a model"
	printf '%s' "$KNOTES"
} | tee "$RESULTS/machine.txt"
echo

# snapshot TAG WHEN: the mount's stats and counters, as TAG.stats-WHEN.
snapshot() {
	cat "$M/.control/stats" >"$RESULTS/$1.stats-$2"
	save_counters hdd "$1-$2"
}

# run CONFIG ROUND: the stream under CONFIG (hdd:SCHED or kernel:SCHED).
run() {
	local tag=${1/:/-}-r$2 mount=${1%%:*}

	loop_config "$1"
	[ "$mount" = kernel ] || snapshot "$tag" before
	# shellcheck disable=SC2046
	timed_cats "$tag" $(printf "$M/small/f%d " $(seq $NFILES))
	[ "$mount" = kernel ] || snapshot "$tag" after
}
each_run run

summarize "$RESULTS" "$ROUNDS" "$SCHEDS" "$RUNTIME" "$NFILES" \
	"${KCONFIGS//kernel:/}" <<'PY' | tee "$RESULTS/summary.txt"
import statistics, sys

rounds, scheds = int(sys.argv[2]), sys.argv[3].split()
cap, nfiles = float(sys.argv[4]), int(sys.argv[5])
kscheds = sys.argv[6].split()

def fmt(x):
    return ">%.0f" % cap if x == float("inf") else "%.2f" % x

def table(title, prefix, names, base_name):
    med = {}
    for s in names:
        xs = [timed_secs("%s-%s-r%d" % (prefix, s, r))
              for r in range(1, rounds + 1)]
        ok = [x for x in xs if x is not None]
        med[s] = (statistics.median(ok) if ok else None, xs)
    base = med.get(base_name, (None,))[0]
    print(title)
    print("%-13s %9s %10s %11s %6s  %s" % ("scheduler", "seconds",
          "ms/process", "x " + base_name, "cache", "rounds (s)"))
    for s in names:
        m, xs = med[s]
        if m is None:
            print("%-13s %9s" % (s, "err"))
            continue
        print("%-13s %9s %10s %11s %5s%%  %s" % (s, fmt(m),
              fmt(1000 * m / nfiles) if m != float("inf") else ">",
              fmt(m / base) if base and m != float("inf") else "-",
              read_result("%s-%s-r1" % (prefix, s), "cache"),
              " ".join(fmt(x) for x in xs if x is not None)))

table("%d processes, each a cat of one small file, through the mount (hdd"
      " model); seconds (median of %d)" % (nfiles, rounds), "hdd", scheds,
      "deadline")
if kscheds:
    print()
    table("the same on the loop device, the kernel's schedulers, no model",
          "kernel", kscheds, "mq-deadline")
print()
print("Target (issue 27): cfq and bfq at most 1.5 x deadline's time.")
PY
