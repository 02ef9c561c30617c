#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/fairness.sh: do identical readers get the same share, and do I/O
# priorities change the shares?
#
#	bench/fairness.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# On a mount with -o disk_model=hdd (so that the device, not the CPU, is
# what the readers share):
#
#  1. Four identical readers, each reading its own file sequentially with
#     16 KiB psync O_DIRECT reads, under noop, deadline, cfq and bfq.
#     Jain's fairness index of their throughputs, (sum x)^2 / (n sum x^2):
#     1 when all are equal, 1/n when one gets everything.  Aggregate
#     throughput is shown beside it: fairness bought by idling costs some.
#  2. Two such readers, started together as separate processes under
#     ionice: best-effort level 0 against level 7, and best-effort (level
#     4) against the idle class, under cfq and bfq.  Reported as the
#     throughput ratio of the first to the second (1 = priorities ignored).
#
# Schedulers alternate (A B C D A B C D ...) for ROUNDS rounds, switching
# through .control/scheduler; medians over rounds are reported.
#
# Options: -t SECONDS per run (default 6), -r ROUNDS (default 3), -d DIR for
# the work directory (default /var/tmp).  RESULTS_DIR receives the fio JSON
# of every run and summary.txt.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=fairness RUNTIME=6
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
command -v ionice >/dev/null || die "needs ionice (util-linux)"

NREAD=4 BS=16k SIZE=256m
export BS SIZE
SCHEDS="noop deadline cfq bfq"
PRIO_SCHEDS="cfq bfq"
# name | ionice of the first reader | ionice of the second
PAIRS='be0-be7|-c2 -n0|-c2 -n7
be-idle|-c2 -n4|-c3'

mount_fs hdd "disk_model=hdd"
for i in $(seq $NREAD); do
	layout "$B/f$i.dat" $SIZE
done

{
	describe_machine
	echo "workload:  $NREAD readers (part 1) or 2 (part 2), own file each, sequential $BS psync O_DIRECT reads"
	echo "hdd model: defaults (seek_ms 8, rpm 7200, mb_per_s 150)"
} | tee "$RESULTS/machine.txt"
echo

total=$(( (4 + 2 * 2) * ROUNDS ))
n=0
for r in $(seq "$ROUNDS"); do
	for s in $SCHEDS; do
		n=$((n + 1))
		printf '[%d/%d] %d readers, %s, round %d\n' $n $total $NREAD "$s" "$r"
		switch_to hdd "$s"
		# One fio process per reader, like four programs.
		pids=
		for i in $(seq $NREAD); do
			reader "$W/hdd/f$i.dat" "four-$s-r$r-p$i" "$RUNTIME" &
			pids="$pids $!"
		done
		# shellcheck disable=SC2086
		wait $pids
	done
	for s in $PRIO_SCHEDS; do
		while IFS='|' read -r pair first second; do
			n=$((n + 1))
			printf '[%d/%d] %s, %s, round %d\n' $n $total "$pair" "$s" "$r"
			switch_to hdd "$s"
			# shellcheck disable=SC2086
			ionice $first bash -c "$READER; reader $W/hdd/f1.dat $pair-$s-r$r-a $RUNTIME" &
			p1=$!
			# shellcheck disable=SC2086
			ionice $second bash -c "$READER; reader $W/hdd/f2.dat $pair-$s-r$r-b $RUNTIME" &
			p2=$!
			wait $p1 $p2
		done <<EOF
$PAIRS
EOF
	done
done

summarize "$ROUNDS" "$NREAD" "$SCHEDS" "$PRIO_SCHEDS" "$PAIRS" <<'PY' | tee "$RESULTS/summary.txt"
rounds, nread = int(sys.argv[1]), int(sys.argv[2])
scheds, prio_scheds = sys.argv[3].split(), sys.argv[4].split()
pairs = [l.split("|") for l in sys.argv[5].splitlines()]

def jain(xs):
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) else 0

print("1. %d identical sequential readers" % nread)
rows = []
for s in scheds:
    runs = []
    for r in range(1, rounds + 1):
        xs = [fio_bw("four-%s-r%d-p%d" % (s, r, i)) for i in range(1, nread + 1)]
        if None not in xs:
            runs.append((jain(xs), sum(xs), xs))
    if len(runs) < rounds:
        rows.append([s, None])
        continue
    runs.sort(key=lambda x: x[0])
    j, agg, xs = runs[len(runs) // 2]
    rows.append([s, "%.3f" % j, median(x[1] for x in runs), min(xs), max(xs)])
table(["scheduler", "Jain", "MiB/s", "min proc", "max proc"], rows)
print("(Jain: median of %d rounds; MiB/s: median aggregate; min/max: the"
      " median-Jain run's; target >= 0.95 under cfq)" % rounds)
print()
print("2. two readers under ionice: throughput of the first / the second")
rows = []
for s in prio_scheds:
    for pair, first, second in pairs:
        runs = []
        for r in range(1, rounds + 1):
            a = fio_bw("%s-%s-r%d-a" % (pair, s, r))
            b = fio_bw("%s-%s-r%d-b" % (pair, s, r))
            if a is not None and b is not None:
                runs.append((a / b if b else float("inf"), a, b))
        desc = "%s vs %s" % (first.replace(" ", ""), second.replace(" ", ""))
        if len(runs) < rounds:
            rows.append([s, desc, None])
            continue
        rows.append([s, desc, median(x[1] for x in runs),
                     median(x[2] for x in runs), median(x[0] for x in runs)])
table(["scheduler", "pair", "first MiB/s", "second", "ratio"], rows)
print("(medians of %d rounds; 1.00 = priorities make no difference)" % rounds)
PY
