#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/thinktime.sh: where does anticipation stop paying?  The think-time
# sweep of Iyer and Druschel's deceptive-idleness experiment.
#
#	bench/thinktime.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# bench/idleness.sh's workload (three processes each reading its own file
# sequentially, 8 KiB psync O_DIRECT reads, hdd model) at think times
# from 0.5 to 30 ms, anticipatory against deadline.  Anticipation should
# win well below antic_expire (6 ms), and the gain should end where the
# scheduler's think-time estimate crosses antic_expire: the kernel caps
# one think-time sample at 20 ms (MAX_THINKTIME), so above that the
# estimate saturates and anticipatory behaves like deadline.  A ratio
# below 1 at long think times is time lost idling for a process that
# will not come back in time.
#
# Every read is O_DIRECT and charged by the model: no cache serves any
# figure.  Schedulers alternate on one mount for ROUNDS rounds; medians.
# Options: -t SECONDS per fio run (default 5), -r ROUNDS, -d DIR.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=thinktime RUNTIME=5
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

THINKS="500 1000 2000 4000 6000 8000 12000 20000 30000"	# us
SCHEDS="deadline anticipatory"
readers_bench "$THINKS" 1 "$SCHEDS"

summarize "$ROUNDS" "$THINKS" "$SCHEDS" <<'PY' | tee "$RESULTS/summary.txt"
rounds = int(sys.argv[1])
thinks, scheds = sys.argv[2].split(), sys.argv[3].split()

def agg(think, s, r):
    each = fio_bws("think%s-%s-r%d" % (think, s, r))
    return None if each is None else sum(each)


def waits(think):
    """anticipatory's counters over its rounds at this think time."""
    tot = {}
    for r in range(1, rounds + 1):
        for k, v in counters_delta("think%s-anticipatory-r%d" % (think, r)).items():
            tot[k] = tot.get(k, 0) + v
    return tot

print("%-9s %12s %14s %8s %8s %8s %8s" % ("think ms", "deadline",
      "anticipatory", "AS/DL", "waits", "hits", "timeouts"))
for t in thinks:
    m = {}
    for s in scheds:
        xs = [agg(t, s, r) for r in range(1, rounds + 1)]
        xs = [x for x in xs if x is not None]
        m[s] = statistics.median(xs) if xs else None
    d, a = m.get("deadline"), m.get("anticipatory")
    c = waits(t)
    print("%-9g %12s %14s %8s %8s %8s %8s" % (int(t) / 1000.0,
          "err" if d is None else "%.2f" % d,
          "err" if a is None else "%.2f" % a,
          "%.2f" % (a / d) if a is not None and d else "-",
          c.get("antic_started", "-"), c.get("antic_hits", "-"),
          c.get("antic_timeouts", "-")))
print()
print("aggregate MiB/s of 3 readers, median of %d rounds; waits, hits and"
      " timeouts: anticipatory's counters summed over its rounds.  Expected"
      " as in the kernel: AS/DL well above 1 below antic_expire (6 ms), and"
      " the waits stopping above it: the think-time estimate, each sample"
      " capped at 20 ms (MAX_THINKTIME), passes antic_expire." % rounds)
PY
