#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/priorities.sh: do I/O priorities divide the disk as cfq's did?
#
#	bench/priorities.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# On a mount with -o disk_model=hdd, under cfq, cfq with slice_idle 40 ms,
# bfq and deadline (which, as the kernel's mq-deadline, keeps the classes
# apart but ignores the levels: its ratio should be about 1, and its -c3
# reader should get a few per cent while the other reads):
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
# cfq's counters (.control/stats) over each run say how its slices ended.
# Through FUSE on a busy machine a reader now and then takes longer than
# slice_idle (8 ms) to issue its next read; its slice then ends early
# (expired_idle_timer), which costs the long slice of level 0 more than
# the short one of level 7 and lowers the ratio.  The row with slice_idle
# 40 ms shows how much of the gap to 4.5 that is.
#
# Every read reaches the scheduler: O_DIRECT, and the daemon serves the
# backing file through the page cache, but the hdd model charges the time
# whether the backing page cache holds the data or not, so no cache can
# serve a figure here.  Configurations alternate for ROUNDS rounds; medians.
# Options: -t SECONDS per run (default 10), -r ROUNDS (default 3), -d DIR.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=priorities RUNTIME=10
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
command -v ionice >/dev/null || die "needs ionice (util-linux)"
[ "$RUNTIME" -ge 4 ] || die "-t: at least 4 seconds"

BS=16k SIZE=512m
export BS SIZE
# NAME|SCHEDULER|TUNABLE=VALUE ... (set after the switch)
CONFIGS='cfq|cfq|
cfq-idle40|cfq|slice_idle=40
bfq|bfq|
deadline|deadline|'

mount_fs hdd "disk_model=hdd"
layout "$B/f1.dat" $SIZE
layout "$B/f2.dat" $SIZE

{
	describe_machine
	echo "workload:  sequential $BS psync O_DIRECT readers, own file each, separate processes under ionice"
	echo "hdd model: defaults; scheduler tunables at their defaults but where named"
} | tee "$RESULTS/machine.txt"
echo

# configure SCHEDULER SETTINGS: switch (a fresh instance, its tunables at
# their defaults), then set the tunables.
configure() {
	switch_to hdd noop
	switch_to hdd "$1"
	for t in $2; do
		echo "${t#*=}" >"$W/hdd/.control/iosched/${t%%=*}" ||
			die "$1: cannot set $t"
	done
}

# pair TAG IONICE1 FILE1 SECONDS1 IONICE2 FILE2 SECONDS2 [log]: two readers
# at once, TAG-a and TAG-b, the first with a bandwidth log when asked;
# the scheduler's counters before and after.
pair() {
	save_counters hdd "$1-before"
	# shellcheck disable=SC2086
	ionice $2 bash -c "$READER; reader $W/hdd/f$3.dat $1-a $4 ${8:-}" &
	p1=$!
	# shellcheck disable=SC2086
	ionice $5 bash -c "$READER; reader $W/hdd/f$6.dat $1-b $7" &
	p2=$!
	wait $p1 $p2
	save_counters hdd "$1-after"
}

total=$(( 2 * $(echo "$CONFIGS" | wc -l) * ROUNDS ))
n=0
for r in $(seq "$ROUNDS"); do
	while IFS='|' read -r c s settings; do
		n=$((n + 1))
		printf '[%d/%d] %s, -n0 against -n7, round %d\n' $n $total "$c" "$r"
		configure "$s" "$settings"
		pair "levels-$c-r$r" "-c2 -n0" 1 "$RUNTIME" "-c2 -n7" 2 "$RUNTIME"

		n=$((n + 1))
		printf '[%d/%d] %s, -c3 with a best-effort reader for %d s, round %d\n' \
			$n $total "$c" $((RUNTIME / 2)) "$r"
		configure "$s" "$settings"
		pair "idle-$c-r$r" "-c3" 1 "$RUNTIME" "-c2 -n4" 2 \
			$((RUNTIME / 2)) log
	done <<EOF
$CONFIGS
EOF
done

summarize "$ROUNDS" "$CONFIGS" "$RUNTIME" <<'PY' | tee "$RESULTS/summary.txt"
rounds, runtime = int(sys.argv[1]), int(sys.argv[3])
configs = [l.split("|") for l in sys.argv[2].splitlines()]
half = runtime / 2.0
kernel = {"cfq": "4.5 (slices 180:40)", "bfq": "8.8 (weights 80:10)",
          "deadline": "1 (mq-deadline: no levels)"}
shown = ["set_active", "expired_slice_used", "expired_idle_timer",
         "expired_empty", "expired_rq_limit", "preempt", "arm_idle",
         "idle_hit"]

def phases(name):
    """Mean MiB/s of the bandwidth log during and after the BE reader.
    fio writes no line for a 500 ms bucket without a completion: a bucket
    missing from the log counts as 0."""
    logs = glob.glob(os.path.join(RESULTS, name + "_bw*.log"))
    if not logs:
        return None
    windows = ((1, half - 0.5), (half + 1, runtime - 0.5))
    kib = [0.0, 0.0]
    for line in open(logs[0]):
        f = line.split(",")
        t = int(f[0]) / 1000.0
        for i, (lo, hi) in enumerate(windows):
            if lo <= t <= hi:
                kib[i] += int(f[1]) / 1024.0
    return tuple(k / (int((hi - lo) / 0.5) + 1)
                 for k, (lo, hi) in zip(kib, windows))

def counter_rows(prefix):
    rows = []
    for c, s, _ in configs:
        if s != "cfq":
            continue
        ds = [counters_delta("%s-%s-r%d" % (prefix, c, r))
              for r in range(1, rounds + 1)]
        rows.append([c] + [median([d.get(k) for d in ds]) for k in shown])
    return rows

print("1. two sequential readers, ionice -c2 -n0 and -c2 -n7")
rows = []
for c, s, _ in configs:
    runs = []
    for r in range(1, rounds + 1):
        a = fio_bw("levels-%s-r%d-a" % (c, r))
        b = fio_bw("levels-%s-r%d-b" % (c, r))
        if a is not None and b is not None:
            runs.append((a / b if b else float("inf"), a, b))
    rows.append([c, median(x[1] for x in runs), median(x[2] for x in runs),
                 median(x[0] for x in runs), kernel[s]])
table(["config", "-n0 MiB/s", "-n7 MiB/s", "ratio", "kernel"], rows)
print()
print("   cfq's counters over each run (medians)")
table(["config"] + shown, counter_rows("levels"))
print()
print("2. ionice -c3 reader; a best-effort reader for the first %g s of %d" %
      (half, runtime))
rows = []
for c, s, _ in configs:
    runs = []
    for r in range(1, rounds + 1):
        p = phases("idle-%s-r%d-a" % (c, r))
        be = fio_bw("idle-%s-r%d-b" % (c, r))
        if p is not None and be is not None:
            runs.append((p[0], p[1], be))
    rows.append([c, median(x[0] for x in runs), median(x[1] for x in runs),
                 median(x[2] for x in runs)])
table(["config", "-c3 during", "-c3 after", "BE MiB/s"], rows)
print("   (MiB/s; kernel cfq: ~0 during, all after)")
print()
print("   cfq's counters over each run (medians)")
table(["config"] + shown, counter_rows("idle"))
print()
print("medians of %d rounds; O_DIRECT reads, every one through the scheduler"
      " and charged by the hdd model (no cache can serve them)" % rounds)
PY
