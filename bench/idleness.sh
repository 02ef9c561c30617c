#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/idleness.sh: does anticipation beat deceptive idleness?
#
#	bench/idleness.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# Three processes each read their own file sequentially with small
# synchronous reads (8 KiB, psync, O_DIRECT) and think for a short time
# between reads (fio thinktime 1 ms, below anticipatory's antic_expire of
# 6 ms), on a mount with -o disk_model=hdd.  Each process has at most one
# read queued, so when its read completes the queue holds only the others'
# reads, far away: deadline seeks to one of them, and every read pays a
# seek and half a revolution ("deceptive idleness", Iyer and Druschel,
# SOSP 2001).  Anticipatory waits a little for the process that just
# completed and serves its next, contiguous read for the transfer time
# only.  The control run thinks 20 ms, longer than antic_expire: waiting
# cannot pay, anticipatory learns the think time and stops waiting, and the
# gain should disappear.
#
# Schedulers alternate (deadline anticipatory deadline ...) for ROUNDS
# rounds on one mount, switching through .control/scheduler; the median of
# the aggregate throughput is reported with anticipatory / deadline.
#
# Options: -t SECONDS per fio run (default 8), -r ROUNDS (default 3), -d DIR
# for the work directory (default /var/tmp).  RESULTS_DIR receives the fio
# JSON of every run (THINK-SCHED-rN.json), the daemon's stats before and
# after each run, and summary.txt.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=idleness RUNTIME=8
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

THINKS="1 20"			# ms
SCHEDS="deadline anticipatory"
readers_bench "$THINKS" 1000 "$SCHEDS"

summarize "$ROUNDS" "$THINKS" "$SCHEDS" <<'PY' | tee "$RESULTS/summary.txt"
rounds = int(sys.argv[1])
thinks, scheds = sys.argv[2].split(), sys.argv[3].split()

def load(think, s, r):
    """Aggregate MiB/s and the per-process MiB/s of one run."""
    each = fio_bws("think%s-%s-r%d" % (think, s, r))
    return None if each is None else (sum(each), each)

print("%-6s %-13s %10s %10s %10s %s" % ("think", "scheduler", "MiB/s",
      "min proc", "max proc", "(aggregate: median; per process: of that run)"))
med = {}
for think in thinks:
    for s in scheds:
        runs = [load(think, s, r) for r in range(1, rounds + 1)]
        if None in runs:
            print("%-6s %-13s %10s" % (think + "ms", s, "err"))
            continue
        runs.sort(key=lambda x: x[0])
        agg, each = runs[len(runs) // 2]
        med[think, s] = statistics.median(x[0] for x in runs)
        print("%-6s %-13s %10.2f %10.2f %10.2f" % (think + "ms", s,
              med[think, s], min(each), max(each)))
print()
print("anticipatory / deadline, aggregate throughput")
for think in thinks:
    a = med.get((think, "anticipatory"))
    d = med.get((think, "deadline"))
    if a is not None and d:
        print("  think %3s ms: %6.2f" % (think, a / d))
print()
print("median of %d rounds; target: >= 2 with think 1 ms; about 1 with"
      " think 20 ms (> antic_expire)" % rounds)
PY
