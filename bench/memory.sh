#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What the daemon keeps after a burst of large writes: on a fresh noop
# mount, 4 fio jobs write SIZE each (at least 1m) in 1 MiB O_DIRECT
# writes, 16 in flight per job (the mount gives the files direct backing
# descriptors), then 16 jobs write SIZE/4 each in buffered 1 MiB writes;
# two seconds after, the daemon's VmRSS and VmHWM, the CPU it used, and
# fio's write rate of the direct burst.  With MEMORY_BASE=DAEMON, that
# other build of fuse-iosched is measured too, alternately (base, then
# this build, each round).
#
#	bench/memory.sh [-r ROUNDS] [-s SIZE] [-d DIR] RESULTS_DIR
#
# RESULTS_DIR gets each run's figures (BUILD-rROUND.txt) and the table
# (memory.txt): medians over the rounds.  Not part of make check.
BENCH=memory RUNTIME=60 SIZE=64m
. "$(dirname "$0")/lib.sh" "$@"

# burst NAME DAEMON ROUND: one mount, one burst, its figures.
burst() {
	FUSE_IOSCHED=$2 mount_fs "$1" scheduler=noop "$W/daemon-$1.log"
	pid=${DAEMON[$1]}
	fio --name=direct --directory="$W/$1" --rw=write --bs=1m \
		--ioengine=libaio --direct=1 --iodepth=16 --numjobs=4 \
		--size="$SIZE" --group_reporting --output-format=terse \
		--output="$RESULTS/$1-r$3.fio" || die "fio failed on $1"
	fio --name=buffered --directory="$W/$1" --rw=write --bs=1m \
		--ioengine=psync --numjobs=16 --size="$SIZE" --io_size=$((${SIZE%m} / 4))m \
		--output=/dev/null || die "fio failed on $1"
	sleep 2
	{
		awk '$1 == "VmRSS:" || $1 == "VmHWM:" { print $1, $2 }' "/proc/$pid/status"
		# utime + stime, in clock ticks, after the command's parentheses.
		awk '{ sub(/.*\) /, ""); printf "cpu_s %.2f\n", ($12 + $13) / 100 }' "/proc/$pid/stat"
		# terse v3: the write bandwidth (KiB/s) is field 48.
		awk -F';' '{ printf "MiB/s %.0f\n", $48 / 1024 }' "$RESULTS/$1-r$3.fio"
	} >"$RESULTS/$1-r$3.txt"
	fusermount3 -u "$W/$1"
	MOUNTS=${MOUNTS/$W\/$1 /}
	wait "$pid" || die "$1's daemon exited with status $?"
	rm -rf "${B:?}"/*
}

BUILDS="this"
[ -z "${MEMORY_BASE:-}" ] || BUILDS="base this"
for r in $(seq "$ROUNDS"); do
	for b in $BUILDS; do
		d=$FUSE_IOSCHED
		[ "$b" = this ] || d=$MEMORY_BASE
		burst "$b" "$d" "$r"
	done
done

python3 - "$RESULTS" "$BUILDS" >"$RESULTS/memory.txt" <<'PY'
import glob, statistics, sys
res, builds = sys.argv[1], sys.argv[2].split()
keys = ["VmRSS:", "VmHWM:", "cpu_s", "MiB/s"]
print("| build | RSS MB after | peak RSS MB | daemon CPU s | direct MiB/s |")
print("|-------|--------------|-------------|--------------|--------------|")
for b in builds:
    v = {k: [] for k in keys}
    for f in sorted(glob.glob("%s/%s-r*.txt" % (res, b))):
        for line in open(f):
            k, x = line.split()
            v[k].append(float(x))
    m = {k: statistics.median(v[k]) for k in keys}
    print("| %s | %.0f | %.0f | %.2f | %.0f |" % (b, m["VmRSS:"] / 1024,
          m["VmHWM:"] / 1024, m["cpu_s"], m["MiB/s"]))
PY
cat "$RESULTS/memory.txt"
