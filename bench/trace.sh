#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/trace.sh: what .control/trace costs the I/O path.
#
#	bench/trace.sh [-t SECONDS] [-r ROUNDS] [-s SIZE] [-d DIR] RESULTS_DIR
#
# overhead.sh's cheapest-to-disturb jobs (4 KiB random reads at depth 1,
# O_DIRECT; 4 KiB sequential O_DIRECT writes) on one noop mount, without
# a reader of .control/trace and with one (cat to a file), alternately;
# the median IOPS of each and their ratio.  With no reader the hot path
# pays one relaxed atomic load per event: the ratio should be 1 within
# noise.  Results (fio JSON, table) in RESULTS_DIR.
BENCH=trace
RUNTIME=5
SIZE=256m
. "$(dirname "$0")/lib.sh" "$@"

layout "$B/f" "$SIZE"
mount_fs m "scheduler=noop"
M=$W/m

run() { # JOB TRACED ROUND
	reader=
	if [ "$2" = yes ]; then
		cat "$M/.control/trace" >"$W/trace.out" &
		reader=$!
		sleep 0.2
	fi
	case $1 in
	randread) rw=randread ;;
	seqwrite) rw="write" ;;
	esac
	fio --name="$1" --filename="$M/f" --rw=$rw --bs=4k --direct=1 \
		--ioengine=psync --size="$SIZE" --runtime="$RUNTIME" \
		--time_based --output-format=json \
		--output="$RESULTS/$1-$2-$3.fio" || die "fio $1 failed"
	if [ -n "$reader" ]; then
		kill "$reader"
		wait "$reader" 2>/dev/null || true
		wc -l <"$W/trace.out" >"$RESULTS/$1-$2-$3.lines"
	fi
}

for r in $(seq "$ROUNDS"); do
	for job in randread seqwrite; do
		run $job no "$r"
		run $job yes "$r"
	done
done

{
describe_machine
echo
summarize "$RESULTS" "$ROUNDS" <<'PY'
import json, statistics, sys
res, rounds = sys.argv[1], int(sys.argv[2])
def iops(job, traced, r):
    j = fio_jobs("%s-%s-%d" % (job, traced, r), ext=".fio")[0]
    return j["read"]["iops"] + j["write"]["iops"]
print("job        no reader   one reader   ratio   trace lines (median)")
for job in ("randread", "seqwrite"):
    no = statistics.median(iops(job, "no", r) for r in range(1, rounds + 1))
    yes = statistics.median(iops(job, "yes", r) for r in range(1, rounds + 1))
    lines = statistics.median(int(open("%s/%s-yes-%d.lines" % (res, job, r)).read())
                              for r in range(1, rounds + 1))
    print("%-9s %10.0f %12.0f %7.3f   %d" % (job, no, yes, yes / no, lines))
PY
} | tee "$RESULTS/table.txt"
