#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/kyber-equal.sh: read latency under writers held to the same
# throughput on both sides, the kernel's schedulers against ours.
#
#	[WRITE_RATE=256m] bench/kyber-equal.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# The kernel's figures for a reader under a write flood (KERNEL-REFERENCE:
# kyber's p99 2.5 ms with its writers at 3.9 GB/s) cannot be set beside a
# FUSE mount's as they are: the mount sustains a third of that write
# throughput, and a reader queued behind a third of the writes waits less.
# Here both sides write at the same rate, set with fio's rate= on each of
# the two writers (WRITE_RATE per writer, default 256m: 512 MiB/s in all,
# well below what the mount sustains), so that the reader's p99 compares
# the schedulers and not the load.
#
# An ext4 image on a loop device with direct I/O (losetup --direct-io=on),
# mounted; fuse-iosched mounted over it with backing_io=direct and no disk
# model.  Pairs, each run alternately (kernel, ours, next pair, ...):
#
#   kernel:kyber        vs fuse:kyber
#   kernel:mq-deadline  vs fuse:deadline
#   kernel:none         vs fuse:noop
#
# kernel:S writes S to /sys/block/loopN/queue/scheduler and runs fio on
# the ext4 mount; fuse:S sets the loop device to none and S on the mount.
# The workload, SECONDS each (default 10): one 4 KiB O_DIRECT random
# reader (psync, depth 1) and two sequential 128 KiB O_DIRECT writers
# (libaio, depth 32), each on a file of its own, as in KERNEL-REFERENCE.
# No cache serves a figure: every read and write is O_DIRECT down to the
# image file.  The summary prints the reader's p99 on each side, their
# ratio, and the writers' total on each side, which must be equal (within
# a few per cent) for the p99s to compare: a side that cannot reach
# 2 x WRITE_RATE is flagged.  Medians of ROUNDS rounds.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=kyber-equal RUNTIME=10
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
for c in losetup mkfs.ext4; do
	command -v $c >/dev/null || die "needs $c"
done

WRITE_RATE=${WRITE_RATE:-256m}
FSIZE=512m IMAGE_SIZE=3G
PAIRS='kyber|kyber
mq-deadline|deadline
none|noop'

loop_setup $IMAGE_SIZE
for f in r w1 w2; do
	layout "$B/$f.dat" $FSIZE
done
mount_fs fuse "backing_io=direct"

have=$(sed 's/[][]//g' "$QUEUE/scheduler")
CONFIGS=''
while IFS='|' read -r k f; do
	case " $have " in
	*" $k "*) CONFIGS="$CONFIGS kernel:$k fuse:$f" ;;
	*) echo "kernel has no $k (loop: $have): its pair skipped" >&2 ;;
	esac
done <<EOF
$PAIRS
EOF
[ -n "$CONFIGS" ] || die "no kernel scheduler of the pairs on $LOOP"

{
	describe_machine
	echo "loop:      $LOOP, direct I/O $(cat "$QUEUE/../loop/dio" 2>/dev/null || echo '?'), ext4 image of $IMAGE_SIZE"
	echo "workload:  4k randread psync O_DIRECT against 2 x 128k write libaio depth 32 O_DIRECT, rate=$WRITE_RATE each"
	echo "configs:  $CONFIGS"
} | tee "$RESULTS/machine.txt"
echo

# run TAG: the reader and the two writers in one fio, JSON to TAG.json
# (jobs in order: reader, w1, w2).
run() {
	fio --output-format=json --output="$RESULTS/$1.json" \
		--time_based --runtime="$RUNTIME" --direct=1 --size=$FSIZE \
		--name=reader --filename="$M/r.dat" --rw=randread --bs=4k \
		--ioengine=psync \
		--name=w1 --filename="$M/w1.dat" --rw=write --bs=128k \
		--ioengine=libaio --iodepth=32 --rate="$WRITE_RATE" \
		--name=w2 --filename="$M/w2.dat" --rw=write --bs=128k \
		--ioengine=libaio --iodepth=32 --rate="$WRITE_RATE" \
		>/dev/null 2>"$RESULTS/$1.err" || true
	[ -s "$RESULTS/$1.err" ] || rm -f "$RESULTS/$1.err"
}

# one CONFIG ROUND: a run of CONFIG (loop_config).
one() {
	loop_config "$1"
	run "${1/:/-}-r$2"
}
each_run one
echo none >"$QUEUE/scheduler"

summarize "$ROUNDS" "$CONFIGS" "$WRITE_RATE" <<'PY' | tee "$RESULTS/summary.txt"
rounds, configs, rate = int(sys.argv[1]), sys.argv[2].split(), sys.argv[3]

def jobs(tag):
    j = fio_jobs(tag)
    return None if not j or len(j) != 3 or any(x.get("error") for x in j) \
        else j

def p99(tag):
    j = jobs(tag)
    if j is None:
        return None
    return j[0]["read"]["clat_ns"].get("percentile", {}).get(
        "99.000000", 0) / 1e6

def writes(tag):
    j = jobs(tag)
    return None if j is None else \
        sum(x["write"]["bw"] for x in j[1:]) / 1024.0

def med(f, c):
    return median(f("%s-r%d" % (c.replace(":", "-"), r))
                  for r in range(1, rounds + 1))

rows = []
for k, f in zip(configs[0::2], configs[1::2]):
    pk, pf = med(p99, k), med(p99, f)
    wk, wf = med(writes, k), med(writes, f)
    flag = ""
    if wk and wf and abs(wk - wf) > 0.05 * max(wk, wf):
        flag = "UNEQUAL"
    rows.append([k + " / " + f, pk, pf,
                 pf / pk if pk and pf is not None else None, wk, wf, flag])
table(["kernel / fuse", "p99 kernel", "p99 fuse", "fuse/kernel",
       "writes kernel", "writes fuse", ""], rows)
print()
print("reader p99 in ms, writers' total in MiB/s (rate=%s each); medians of"
      " %d rounds, configurations alternated; UNEQUAL: the writers' totals"
      " differ by more than 5 %%, the p99s do not compare" % (rate, rounds))
PY
echo "load:      $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at the end"
