#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/cgroup-isolation.sh: does a control group's read limit hold on the
# mount, and does it leave another group's reader alone?  (Issue 28's
# first target: a reader in a group limited to 10 MiB/s reads at 10 MiB/s
# +- 10 %, a reader in another group beside it is within 10 % of its rate
# alone, and with -o groups=off the limit is not applied.)
#
#	bench/cgroup-isolation.sh [-t SECONDS] [-r ROUNDS] [-s SIZE] [-d DIR]
#		RESULTS_DIR
#
# Two real control groups (v1 blkio, else v2 io, as tests/lib.sh's
# cg_setup makes them): A, limited to 10 MiB/s of reads on the backing
# directory's disk in the kernel's own file (blkio.throttle.read_bps_device
# or io.max, on the disk's MAJ:MIN), and B, without limits.  Each reader
# is fio reading its own file of SIZE (default 256m) sequentially with
# 256 KiB psync O_DIRECT reads (every read reaches the daemon), for
# SECONDS (default 8) after a second of ramp that is not counted.  Four
# mounts of the same backing directory, each with scheduler $SCHED
# (environment; default noop, the daemon's default):
#
#   groups     limits applied, no disk model (the real disk under DIR)
#   off        -o groups=off, no disk model
#   hdd        limits applied, -o disk_model=hdd (the device the readers
#              share is the model's: one head, seeks between the files)
#   hdd-off    -o disk_model=hdd,groups=off
#
# In each round, for each mount: (a) B alone, and (b) B while A reads at
# the same time, (c) A's rate in that run; (a) and (b) swap order from
# one round to the next, mounts alternate within a round.  The table
# gives medians over the rounds: B alone, B beside A, B's ratio (b)/(a)
# (the target: at least 0.90 with groups), A's rate and A over its limit
# (the target: 0.90 to 1.10 with groups; far above 1 without).  Without
# the model B's rate is the real disk's and the CPU's, both shared with
# whatever else runs, so those rows need a quiet machine; the hdd rows
# depend on the model, and on the scheduler: with one head, each of A's
# reads between two of B's costs B two seeks, which no limit on A's
# bytes removes (a scheduler that idles for B, anticipatory or bfq, may).
# The load average is printed at the start, before each run and at the
# end.
#
# A default run: 4 mounts x 3 rounds x 2 runs of 9 s, about 4 minutes
# with the layout of the two files.  Needs root, fio, python3 and a
# blkio (v1) or io (v2) controller; DIR must be on a block device.
# RESULTS_DIR gets every run's fio JSON and summary.txt.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=cgroup-isolation RUNTIME=8 SIZE=256m
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

LIMIT_MIB=10
SCHED=${SCHED:-noop}
BS=256k
CONFIGS="groups off hdd hdd-off"
declare -A OPTS=([groups]="" [off]="groups=off" [hdd]="disk_model=hdd"
	[hdd-off]="disk_model=hdd,groups=off")

# The groups, as tests/lib.sh's cg_setup: v1 blkio if mounted, else v2 io;
# the backing directory's disk (a partition's disk, where the kernel
# keeps limits).
if [ -e /sys/fs/cgroup/blkio/blkio.throttle.read_bps_device ]; then
	CG_ROOT=/sys/fs/cgroup/blkio CG_V=1
elif grep -qw io /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	CG_ROOT=/sys/fs/cgroup CG_V=2
	echo +io >"$CG_ROOT/cgroup.subtree_control" ||
		die "cannot enable the io controller"
else
	die "no blkio (v1) or io (v2) controller mounted"
fi
CG_DEV=$(stat -c '%Hd:%Ld' "$B")
if [ -e "/sys/dev/block/$CG_DEV/partition" ]; then
	CG_DEV=$(cat "/sys/dev/block/$CG_DEV/../dev")
fi
[ -e "/sys/dev/block/$CG_DEV" ] || die "$WORKDIR is on no block device"
CG=$CG_ROOT/fuse-iosched-bench-$$

cg_cleanup() {
	bench_cleanup
	for g in "$CG/a" "$CG/b" "$CG"; do
		[ -d "$g" ] || continue
		for p in $(cat "$g/cgroup.procs" 2>/dev/null); do
			kill -9 "$p" 2>/dev/null
		done
		rmdir "$g" 2>/dev/null || echo "$BENCH: cannot remove $g" >&2
	done
}
trap cg_cleanup EXIT
mkdir "$CG" "$CG/a" "$CG/b"
if [ "$CG_V" = 1 ]; then
	echo "$CG_DEV $((LIMIT_MIB * 1048576))" \
		>"$CG/a/blkio.throttle.read_bps_device"
else
	echo +io >"$CG/cgroup.subtree_control"
	echo "$CG_DEV rbps=$((LIMIT_MIB * 1048576))" >"$CG/a/io.max"
fi

for c in $CONFIGS; do
	mount_fs "$c" "scheduler=$SCHED${OPTS[$c]:+,${OPTS[$c]}}"
	[ "$SCHED" = noop ] || switch_to "$c" "$SCHED"
done
layout "$B/a.dat" "$SIZE"
layout "$B/b.dat" "$SIZE"

load() { cut -d' ' -f1-3 /proc/loadavg; }

{
	describe_machine
	echo "groups:    cgroup v$CG_V, A limited to $LIMIT_MIB MiB/s of reads on $CG_DEV (kernel's file), B none"
	echo "workload:  one fio reader per group, own file of $SIZE, sequential $BS psync O_DIRECT, ${RUNTIME} s after 1 s ramp"
	echo "mounts:    groups (no model), off (groups=off), hdd (disk_model=hdd), hdd-off; scheduler $SCHED"
	echo "hdd model: defaults (seek_ms 8, rpm 7200, mb_per_s 150)"
} | tee "$RESULTS/machine.txt"
echo

# cg_fio GROUP NAME MOUNT: GROUP's reader of MOUNT's NAME.dat, into
# RESULTS/TAG-NAME.json (TAG set by the caller).
cg_fio() {
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG/$1" \
		fio --name="$2" --filename="$W/$3/$2.dat" --rw=read --bs=$BS \
		--ioengine=psync --direct=1 --size="$SIZE" --time_based \
		--ramp_time=1 --runtime="$RUNTIME" --output-format=json \
		--output="$RESULTS/$TAG-$2.json" >/dev/null \
		2>"$RESULTS/$TAG-$2.err" || true
	[ -s "$RESULTS/$TAG-$2.err" ] || rm -f "$RESULTS/$TAG-$2.err"
}

# alone CONFIG ROUND, beside CONFIG ROUND: the runs (a) and (b)-(c).
alone() {
	TAG=$1-alone-r$2
	cg_fio b b "$1"
}
beside() {
	local pid
	TAG=$1-beside-r$2
	cg_fio a a "$1" &
	pid=$!
	cg_fio b b "$1"
	wait $pid
}

run() {
	echo "  load $(load)"
	if [ $(($2 % 2)) -eq 1 ]; then
		alone "$1" "$2"
		beside "$1" "$2"
	else
		beside "$1" "$2"
		alone "$1" "$2"
	fi
}
each_run run
echo "load at the end: $(load)" | tee "$RESULTS/load-end.txt"
echo

summarize "$ROUNDS" "$LIMIT_MIB" "$CONFIGS" <<'PY' | tee "$RESULTS/summary.txt"
rounds, limit, configs = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3].split()
print(open(os.path.join(RESULTS, "machine.txt")).read().rstrip())
print(open(os.path.join(RESULTS, "load-end.txt")).read().rstrip())
print()
rows = []
for c in configs:
    def med(f):
        return median([f(r) for r in range(1, rounds + 1)])
    def bw(kind, who):
        return lambda r: fio_bw("%s-%s-r%d-%s" % (c, kind, r, who))
    def ratio(r):
        a, b = bw("alone", "b")(r), bw("beside", "b")(r)
        return b / a if a and b is not None else None
    def over(r):
        a = bw("beside", "a")(r)
        return a / limit if a is not None else None
    rows.append([c, med(bw("alone", "b")), med(bw("beside", "b")),
                 med(ratio), med(bw("beside", "a")), med(over)])
table(["mount", "B alone", "B beside A", "B ratio", "A MiB/s", "A/limit"],
      rows)
print()
print("MiB/s, median of %d rounds; B ratio: beside A over alone, per round"
      % rounds)
print("(target with groups >= 0.90); A/limit: A's rate over its %g MiB/s"
      " limit (target 0.90-1.10 with groups)" % limit)
PY
