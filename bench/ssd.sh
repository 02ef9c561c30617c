#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/ssd.sh: kyber's read latency under a write flood, on the ssd model.
#
#	bench/ssd.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# On a mount with -o disk_model=ssd (defaults: 4 channels, reads 80 us,
# a 32 MiB write buffer draining at 300 MB/s) and 16 dispatch threads,
# so that the device holds up to 16 requests: 4 KiB random O_DIRECT reads
# at depth 1 while a writer streams 1 MiB O_DIRECT writes at depth 16.
# Once the buffer is full, writes hold the channels and reads queued in
# the device behind them wait.  Kyber throttles writes in flight to keep
# reads near read_lat_nsec (2 ms); noop and deadline let the writes fill
# the device.  Reported: read p50 and p99, and the write throughput.
#
# Every read and write is O_DIRECT on the mount and charged by the model;
# the daemon's backing file is read through the page cache, but the model
# charges the time either way, so no cache serves a figure.
# Schedulers alternate for ROUNDS rounds; medians.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=ssd RUNTIME=8
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

SCHEDS="noop deadline kyber"
mount_fs ssd "disk_model=ssd,threads=16,max_background=64"
layout "$B/r.dat" 1g

{
	describe_machine
	echo "workload:  4k random O_DIRECT reads at depth 1 against 1M sequential O_DIRECT writes at depth 16"
	echo "ssd model: defaults (4 channels, read 80 us, 500 MB/s per channel, 32 MiB buffer draining at 300 MB/s), threads=16"
} | tee "$RESULTS/machine.txt"
echo

total=$(( $(echo "$SCHEDS" | wc -w) * ROUNDS ))
n=0
for r in $(seq "$ROUNDS"); do
	for s in $SCHEDS; do
		n=$((n + 1))
		printf '[%d/%d] %s, round %d\n' $n $total "$s" "$r"
		switch_to ssd "$s"
		fio --output-format=json --output="$RESULTS/$s-r$r.json" \
			--time_based --runtime="$RUNTIME" --direct=1 \
			--name=reader --filename="$W/ssd/r.dat" --rw=randread \
			--bs=4k --ioengine=psync --size=1g \
			--name=writer --filename="$W/ssd/w.dat" --rw=write \
			--bs=1m --ioengine=libaio --iodepth=16 --size=1g \
			>/dev/null 2>"$RESULTS/$s-r$r.err" || true
		[ -s "$RESULTS/$s-r$r.err" ] || rm -f "$RESULTS/$s-r$r.err"
	done
done

python3 - "$RESULTS" "$ROUNDS" "$SCHEDS" <<'PY' | tee "$RESULTS/summary.txt"
import json, os, statistics, sys

results, rounds, scheds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()

def run(s, r):
    try:
        text = open(os.path.join(results, "%s-r%d.json" % (s, r))).read()
        jobs = json.loads(text[text.index("{"):])["jobs"]
    except (OSError, ValueError, KeyError):
        return None
    rd = [j for j in jobs if j["jobname"] == "reader"][0]["read"]
    wr = [j for j in jobs if j["jobname"] == "writer"][0]["write"]
    pct = rd["clat_ns"].get("percentile", {})
    return (pct.get("50.000000", 0) / 1e6, pct.get("99.000000", 0) / 1e6,
            wr["bw"] / 1024.0)

print("%-10s %12s %12s %14s" % ("scheduler", "read p50 ms", "read p99 ms",
      "write MiB/s"))
for s in scheds:
    xs = [x for x in (run(s, r) for r in range(1, rounds + 1)) if x]
    if not xs:
        print("%-10s %12s" % (s, "err"))
        continue
    print("%-10s %12.2f %12.2f %14.1f" % (s,
          statistics.median(x[0] for x in xs),
          statistics.median(x[1] for x in xs),
          statistics.median(x[2] for x in xs)))
print()
print("medians of %d rounds.  Target (issue 16): kyber's read p99 near"
      " read_lat_nsec (2 ms), noop's and deadline's far above." % rounds)
PY
