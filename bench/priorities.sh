#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/priorities.sh: do I/O priorities divide the disk as cfq's did?
#
#	bench/priorities.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# On a mount with -o disk_model=hdd, under cfq and bfq:
#
#  1. Two sequential readers (16 KiB psync O_DIRECT, own file each) started
#     together as separate processes at ionice -c2 -n0 and -c2 -n7.  The
#     kernel's cfq gives each its slice in turn, 180 ms against 40 ms with
#     the defaults (slice_sync 100 ms, +/- 20 ms per level from 4), so the
#     ratio of throughputs should be about 4.5; the kernel's bfq weights
#     them 80 : 10 (8.8 measured on a loop device, issue 16).
#  2. The idle class: a reader at ionice -c3 runs for SECONDS, a
#     best-effort reader for the first half only.  The kernel serves the
#     idle class only once the disk has been idle of others for
#     CFQ_IDLE_GRACE (100 ms), so the -c3 reader should get next to nothing
#     in the first half ("during") and the whole disk in the second
#     ("after").  Measured from fio's bandwidth log, 500 ms buckets,
#     leaving out the first and last second and the 500 ms after the
#     best-effort reader stops.
#
# Every read reaches the scheduler: O_DIRECT, and the daemon serves the
# backing file through the page cache, but the hdd model charges the time
# whether the backing page cache holds the data or not, so no cache can
# serve a figure here.  Schedulers alternate for ROUNDS rounds; medians.
# Options: -t SECONDS per run (default 10), -r ROUNDS (default 3), -d DIR.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=priorities RUNTIME=10
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
command -v ionice >/dev/null || die "needs ionice (util-linux)"
[ "$RUNTIME" -ge 4 ] || die "-t: at least 4 seconds"

BS=16k SIZE=512m
SCHEDS="cfq bfq"

mount_fs hdd "disk_model=hdd"
layout "$B/f1.dat" $SIZE
layout "$B/f2.dat" $SIZE

{
	describe_machine
	echo "workload:  sequential $BS psync O_DIRECT readers, own file each, separate processes under ionice"
	echo "hdd model: defaults; scheduler tunables at their defaults"
} | tee "$RESULTS/machine.txt"
echo

# reader FILE_NO NAME SECONDS [BWLOG]: one fio reader, JSON to NAME.json.
reader() {
	fio --name="$2" --filename="$W/hdd/f$1.dat" --rw=read --bs=$BS \
		--ioengine=psync --direct=1 --size=$SIZE --time_based \
		--runtime="$3" ${4:+--write_bw_log="$RESULTS/$2" --log_avg_msec=500} \
		--output-format=json --output="$RESULTS/$2.json" \
		>/dev/null 2>"$RESULTS/$2.err" || true
	[ -s "$RESULTS/$2.err" ] || rm -f "$RESULTS/$2.err"
}
READER="$(declare -f reader); W=$W RESULTS=$RESULTS BS=$BS SIZE=$SIZE"

total=$(( 2 * 2 * ROUNDS ))
n=0
for r in $(seq "$ROUNDS"); do
	for s in $SCHEDS; do
		n=$((n + 1))
		printf '[%d/%d] %s, -n0 against -n7, round %d\n' $n $total "$s" "$r"
		switch_to hdd "$s"
		ionice -c2 -n0 bash -c "$READER; reader 1 levels-$s-r$r-n0 $RUNTIME" &
		p1=$!
		ionice -c2 -n7 bash -c "$READER; reader 2 levels-$s-r$r-n7 $RUNTIME" &
		p2=$!
		wait $p1 $p2

		n=$((n + 1))
		printf '[%d/%d] %s, -c3 with a best-effort reader for %d s, round %d\n' \
			$n $total "$s" $((RUNTIME / 2)) "$r"
		ionice -c3 bash -c "$READER; reader 1 idle-$s-r$r-c3 $RUNTIME log" &
		p1=$!
		ionice -c2 -n4 bash -c "$READER; reader 2 idle-$s-r$r-be $((RUNTIME / 2))" &
		p2=$!
		wait $p1 $p2
	done
done

python3 - "$RESULTS" "$ROUNDS" "$SCHEDS" "$RUNTIME" <<'PY' | tee "$RESULTS/summary.txt"
import glob, json, os, statistics, sys

results, rounds = sys.argv[1], int(sys.argv[2])
scheds, runtime = sys.argv[3].split(), int(sys.argv[4])
half = runtime / 2.0

def bw(name):
    try:
        text = open(os.path.join(results, name + ".json")).read()
        j = json.loads(text[text.index("{"):])["jobs"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return None
    return None if j.get("error") else j["read"]["bw"] / 1024.0

def phases(name):
    """Mean MiB/s of the bandwidth log during and after the BE reader."""
    logs = glob.glob(os.path.join(results, name + "_bw*.log"))
    if not logs:
        return None
    during, after = [], []
    for line in open(logs[0]):
        f = line.split(",")
        t, kib = int(f[0]) / 1000.0, int(f[1]) / 1024.0
        if 1 <= t <= half - 0.5:
            during.append(kib)
        elif half + 1 <= t <= runtime - 0.5:
            after.append(kib)
    if not during or not after:
        return None
    return statistics.mean(during), statistics.mean(after)

print("1. two sequential readers, ionice -c2 -n0 and -c2 -n7")
print("%-6s %12s %12s %8s %s" % ("sched", "-n0 MiB/s", "-n7 MiB/s", "ratio",
      " kernel"))
kernel = {"cfq": "4.5 (slices 180:40)", "bfq": "8.8 (weights 80:10)"}
for s in scheds:
    runs = []
    for r in range(1, rounds + 1):
        a, b = bw("levels-%s-r%d-n0" % (s, r)), bw("levels-%s-r%d-n7" % (s, r))
        if a is not None and b is not None:
            runs.append((a / b if b else float("inf"), a, b))
    if not runs:
        print("%-6s %12s" % (s, "err"))
        continue
    print("%-6s %12.2f %12.2f %8.2f  %s" % (s,
          statistics.median(x[1] for x in runs),
          statistics.median(x[2] for x in runs),
          statistics.median(x[0] for x in runs), kernel[s]))
print()
print("2. ionice -c3 reader; a best-effort reader for the first %g s of %d" %
      (half, runtime))
print("%-6s %14s %14s %14s %s" % ("sched", "-c3 during", "-c3 after",
      "BE MiB/s", " (MiB/s; kernel cfq: ~0 during, all after)"))
for s in scheds:
    runs = []
    for r in range(1, rounds + 1):
        p, be = phases("idle-%s-r%d-c3" % (s, r)), bw("idle-%s-r%d-be" % (s, r))
        if p is not None and be is not None:
            runs.append((p[0], p[1], be))
    if not runs:
        print("%-6s %14s" % (s, "err"))
        continue
    print("%-6s %14.2f %14.2f %14.2f" % (s,
          statistics.median(x[0] for x in runs),
          statistics.median(x[1] for x in runs),
          statistics.median(x[2] for x in runs)))
print()
print("medians of %d rounds; O_DIRECT reads, every one through the scheduler"
      " and charged by the hdd model (no cache can serve them)" % rounds)
PY
