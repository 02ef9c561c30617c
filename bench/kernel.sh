#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/kernel.sh: fuse-iosched's schedulers beside the kernel's own, on
# the same disk.
#
#	bench/kernel.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# An ext4 image on a loop device with direct I/O (losetup --direct-io=on,
# so the loop device's requests reach the image file without the page
# cache in between), mounted.  The same fio workloads run:
#
#   kernel:S  on the ext4 mount, with S in /sys/block/loopN/queue/scheduler
#             (bfq, mq-deadline, kyber: those this kernel has);
#   fuse:S    on fuse-iosched mounted over the ext4 mount, with the loop
#             scheduler "none" and fuse-iosched's S (bfq, deadline, kyber).
#
# Workloads, SECONDS each (default 10):
#   levels  two sequential 16 KiB O_DIRECT readers, ionice -c2 -n0 and
#           -c2 -n7: the ratio of their throughputs (kernel bfq's weights
#           are 80 : 10), and their sum as the throughput column;
#   idle    a best-effort and an idle-class (-c3) reader: the idle
#           reader's share of the total (the kernel starves it);
#   flood   4 KiB random O_DIRECT reads at depth 1 while a writer streams
#           1 MiB O_DIRECT|O_SYNC writes at depth 16: read p99 latency.
#
# Caches: none.  On kernel:S every read and write is O_DIRECT on ext4,
# and the loop device's direct I/O passes it to the image file.  On
# fuse:S the mount has backing_io=direct, so the daemon reaches ext4 with
# O_DIRECT too; the files are still evicted before each run, in case an
# earlier run read them through a cache.
#
# The disk below counts: since Linux 6.15 the loop driver passes each
# request's I/O priority on to its I/O on the image file, which meets the
# scheduler of the disk holding it (mq-deadline, say), so on kernel:S an
# idle-class reader is held back there too, whatever S is; so is fuse:S's,
# whose daemon passes each request's priority on to its direct I/O in
# the same way.  With -d on a tmpfs the image is in
# memory, no scheduler is below the loop device, and kernel:S shows S
# alone (no cache either: the tmpfs pages are the image itself).
#
# A kernel without bfq skips the kernel:bfq rows; bench/kernel-vm.sh runs
# this script on Debian's kernel under qemu instead.
#
# Configurations alternate for ROUNDS rounds; medians.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=kernel RUNTIME=10
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
for c in losetup mkfs.ext4 ionice; do
	command -v $c >/dev/null || die "needs $c"
done

FSIZE=1g IMAGE_SIZE=4G
KERNEL_SCHEDS="bfq mq-deadline kyber"
FUSE_SCHEDS="bfq deadline kyber"

loop_setup $IMAGE_SIZE
for f in r1 r2 w; do
	layout "$B/$f.dat" $FSIZE
done
mount_fs fuse "backing_io=direct"

have=$(sed 's/[][]//g' "$QUEUE/scheduler")
CONFIGS=''
MISSING=''
for s in $KERNEL_SCHEDS; do
	case " $have " in
	*" $s "*) CONFIGS="$CONFIGS kernel:$s" ;;
	*) MISSING="$MISSING $s" ;;
	esac
done
for s in $FUSE_SCHEDS; do
	CONFIGS="$CONFIGS fuse:$s"
done

{
	describe_machine
	echo "loop:      $LOOP, direct I/O $(cat "$QUEUE/../loop/dio" 2>/dev/null || echo '?'), ext4 image of $IMAGE_SIZE in $W"
	echo "kernel schedulers on the loop device: $have"
	for s in $MISSING; do
		echo "kernel has no $s (loop scheduler choices: $have):" \
		     "kernel:$s skipped; bench/kernel-vm.sh runs this on a" \
		     "kernel that has it"
	done
	case " $MISSING " in
	*" bfq "*)
		echo "NO KERNEL BFQ: CONFIG_IOSCHED_BFQ $(kconfig IOSCHED_BFQ)," \
		     "CONFIG_MODULES $(kconfig MODULES) on $(uname -r);" \
		     "fuse:bfq's -n0/-n7 cannot be set beside the kernel's" \
		     "here: compare it with the weights' 8 (80:10), or run" \
		     "bench/kernel-vm.sh" ;;
	esac
	echo "configs:  $CONFIGS"
} | tee "$RESULTS/machine.txt"
echo

# setup CONFIG: pick the loop device's scheduler and the mount to use.
setup() {
	loop_config "$1"
	evict "$B/r1.dat" "$B/r2.dat" "$B/w.dat"
}

# job NAME IONICE FIO-ARGS...: one fio process under ionice, JSON to NAME.json.
job() {
	local name=$1 prio=$2
	shift 2
	# shellcheck disable=SC2086
	ionice $prio fio --name="$name" --time_based --runtime="$RUNTIME" \
		--output-format=json --output="$RESULTS/$name.json" "$@" \
		>/dev/null 2>"$RESULTS/$name.err" || true
	[ -s "$RESULTS/$name.err" ] || rm -f "$RESULTS/$name.err"
}

SEQ="--rw=read --bs=16k --direct=1 --ioengine=psync --size=$FSIZE"
total=$(( $(echo "$CONFIGS" | wc -w) * 3 * ROUNDS ))
n=0
for r in $(seq "$ROUNDS"); do
	for c in $CONFIGS; do
		t=${c/:/-}-r$r
		n=$((n + 1)); printf '[%d/%d] %s levels, round %d\n' $n $total "$c" "$r"
		setup "$c"
		# shellcheck disable=SC2086
		job "levels-$t-a" "-c2 -n0" --filename="$M/r1.dat" $SEQ &
		# shellcheck disable=SC2086
		job "levels-$t-b" "-c2 -n7" --filename="$M/r2.dat" $SEQ &
		wait

		n=$((n + 1)); printf '[%d/%d] %s idle class, round %d\n' $n $total "$c" "$r"
		setup "$c"
		# shellcheck disable=SC2086
		job "idle-$t-a" "-c2 -n4" --filename="$M/r1.dat" $SEQ &
		# shellcheck disable=SC2086
		job "idle-$t-b" "-c3" --filename="$M/r2.dat" $SEQ &
		wait

		n=$((n + 1)); printf '[%d/%d] %s read under a write flood, round %d\n' $n $total "$c" "$r"
		setup "$c"
		job "flood-$t-a" "-c2 -n4" --filename="$M/r1.dat" --rw=randread \
			--bs=4k --direct=1 --ioengine=psync --size=$FSIZE &
		job "flood-$t-b" "-c2 -n4" --filename="$M/w.dat" --rw=write \
			--bs=1m --direct=1 --sync=1 --ioengine=libaio --iodepth=16 \
			--size=$FSIZE &
		wait
	done
done
echo none >"$QUEUE/scheduler"

summarize "$RESULTS" "$ROUNDS" "$CONFIGS" <<'PY' | tee "$RESULTS/summary.txt"
import json, os, statistics, sys

results, rounds, configs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()

job, bw = fio_job, fio_bw

def p99(name):
    j = job(name)
    if j is None:
        return None
    pct = j["read"]["clat_ns"].get("percentile", {})
    return pct.get("99.000000", 0) / 1e6

def med(f):
    xs = [f(r) for r in range(1, rounds + 1)]
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def fmt(x, spec):
    return "err" if x is None else spec % x

print("%-18s %10s %10s %12s %12s %12s" % ("config", "-n0/-n7", "idle share",
      "read p99 ms", "write MiB/s", "levels MiB/s"))
for c in configs:
    t = c.replace(":", "-")
    def ratio(r):
        a, b = bw("levels-%s-r%d-a" % (t, r)), bw("levels-%s-r%d-b" % (t, r))
        return None if a is None or b is None else (a / b if b else float("inf"))
    def share(r):
        a, b = bw("idle-%s-r%d-a" % (t, r)), bw("idle-%s-r%d-b" % (t, r))
        return None if a is None or b is None or a + b == 0 else b / (a + b)
    def total(r):
        a, b = bw("levels-%s-r%d-a" % (t, r)), bw("levels-%s-r%d-b" % (t, r))
        return None if a is None or b is None else a + b
    print("%-18s %10s %10s %12s %12s %12s" % (c, fmt(med(ratio), "%.2f"),
          fmt(med(share), "%.3f"),
          fmt(med(lambda r: p99("flood-%s-r%d-a" % (t, r))), "%.2f"),
          fmt(med(lambda r: bw("flood-%s-r%d-b" % (t, r), "write")), "%.1f"),
          fmt(med(total), "%.1f")))
print()
print("medians of %d rounds.  -n0/-n7: throughput ratio of two sequential"
      " readers (kernel bfq weights 80:10); idle share: the -c3 reader's"
      " share against a best-effort reader (0 = starved); read p99: 4 KiB"
      " random reads at depth 1 under 1 MiB O_SYNC direct writes; levels"
      " MiB/s: the two readers' sum." % rounds)
PY
