#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/replay.sh: does fuse-iosched-replay agree with the mount?
#
#	bench/replay.sh [-t SECONDS] [-r ROUNDS] [-s SIZE] [-d DIR] RESULTS_DIR
#
# On a mount with the hdd disk model, under deadline and then
# anticipatory, two workloads run while .control/trace is recorded:
#   seq3:   three sequential 64 KiB O_DIRECT readers, 1 ms think time each;
#   rw:     such a reader under a streaming 1 MiB O_DIRECT writer.
# Each trace is then replayed closed loop for the recorded time
# (--time-based, as fio ran) through deadline and anticipatory.  The mount's own figures come from its trace (issue to
# completion of each request, bytes over the time from the first issue to
# the last completion: the definitions the replay uses).  The table gives,
# for each workload, each scheduler's trace replayed through each
# scheduler, the median over the rounds of the replay's MiB/s and read
# latency p50 beside the mount's under the scheduler replayed, and their
# difference; and whether both order the schedulers the same way.  Traces, fio and replay
# output and the table in RESULTS_DIR; figures of one run in
# bench/RESULTS.md.
BENCH=replay
RUNTIME=5
SIZE=256m
. "$(dirname "$0")/lib.sh" "$@"

REPLAY=${FUSE_IOSCHED_REPLAY:-$HERE/../replay/fuse-iosched-replay}
[ -x "$REPLAY" ] || REPLAY=$(command -v fuse-iosched-replay) ||
	die "no fuse-iosched-replay: build it or set FUSE_IOSCHED_REPLAY"
OUT=$RESULTS
SCHEDS="deadline anticipatory"

for j in 0 1 2; do layout "$B/seq.$j.0" "$SIZE"; done
layout "$B/rd.0.0" "$SIZE"

# run WORKLOAD SCHED ROUND: the workload on a fresh mount, traced.
run() {
	name=$1-$2-$3
	mount_fs "$name" "disk_model=hdd,scheduler=$2" "$OUT/$name.log"
	m=$W/$name
	cat "$m/.control/trace" >"$OUT/$name.trace" &
	reader=$!
	BGPIDS="$reader $BGPIDS"
	sleep 0.2
	common="--directory=$m --direct=1 --ioengine=psync --runtime=$RUNTIME
		--time_based --output-format=json"
	case $1 in
	seq3)
		fio $common --name=seq --rw=read --bs=64k --thinktime=1000 \
			--numjobs=3 --size="$SIZE" --output="$OUT/$name.fio" ;;
	rw)
		fio $common --name=rd --rw=read --bs=64k --thinktime=1000 \
			--size="$SIZE" --name=wr --rw=write --bs=1m --size="$SIZE" \
			--output="$OUT/$name.fio" ;;
	esac || die "fio failed on $name"
	sleep 0.5
	kill "$reader"
	wait "$reader" 2>/dev/null || true
	BGPIDS=${BGPIDS/$reader /}
	fusermount3 -u "$m" || die "cannot unmount $m"
	MOUNTS=${MOUNTS/$m /}
	rm -f "$B/wr.1.0"
}

for r in $(seq "$ROUNDS"); do
	for wl in seq3 rw; do
		for s in $SCHEDS; do
			run $wl $s $r
			for t in $SCHEDS; do
				"$REPLAY" -o "config=$W/empty.conf" \
					${MODULE_DIR:+-o "module_dir=$MODULE_DIR"} \
					-s $t --closed-loop --time-based --json \
					"$OUT/$wl-$s-$r.trace" >"$OUT/$wl-$s-$r.replay-$t.json" ||
					die "replay of $wl-$s-$r through $t failed"
			done
		done
	done
done

{
describe_machine
echo
python3 - "$OUT" "$ROUNDS" $SCHEDS <<'PY'
import json, statistics, sys

out, rounds, scheds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def mount_figures(path):
    """MiB/s and read p50 (ms) of a recorded trace, as the replay counts."""
    queued, lat, first, last, nbytes = {}, [], None, None, 0
    for line in open(path):
        f = line.split()
        if line.startswith(("#", "lost")) or len(f) < 10:
            continue
        t, act, rw, sector, n = float(f[3]), f[5], f[6], int(f[7]), int(f[9])
        if act == "Q":
            queued[(rw[0], sector)] = t
            first = t if first is None else min(first, t)
            nbytes += n * 512
        elif act == "C":
            last = t if last is None else max(last, t)
            for key in [k for k in queued if k[0] == rw[0] and sector <= k[1] < sector + n]:
                if rw[0] == "R":
                    lat.append(t - queued[key])
                del queued[key]
    return nbytes / 1048576 / (last - first), statistics.median(lat) * 1000

rows = {}
for wl in ("seq3", "rw"):
    for s in scheds:
        m = [mount_figures("%s/%s-%s-%d.trace" % (out, wl, s, r))
             for r in range(1, rounds + 1)]
        rep = {}
        for t in scheds:
            js = [json.load(open("%s/%s-%s-%d.replay-%s.json" % (out, wl, s, r, t)))[0]
                  for r in range(1, rounds + 1)]
            rep[t] = (statistics.median(j["mib_s"] for j in js),
                      statistics.median(j["read_p50_ms"] for j in js))
        rows[wl, s] = (statistics.median(x[0] for x in m),
                       statistics.median(x[1] for x in m), rep)

# Each trace through each scheduler, against the mount under that
# scheduler: a trace through its own is the simulation's accuracy; through
# the other, the issue's question (would the other have done as well?).
print("workload trace of     through      mount_MiB/s replay_MiB/s   diff   "
      "mount_p50_ms replay_p50_ms   diff")
for (wl, s), (_, _, rep) in rows.items():
    for t in scheds:
        mib, p50 = rows[wl, t][0], rows[wl, t][1]
        rm, rp = rep[t]
        print("%-8s %-12s %-12s %10.2f %12.2f %+6.1f%% %13.3f %13.3f %+6.1f%%" %
              (wl, s, t, mib, rm, (rm - mib) / mib * 100, p50, rp,
               (rp - p50) / p50 * 100 if p50 else 0))
print()
print("each round, each trace through its own scheduler (the load changes from")
print("round to round on a shared machine):")
for (wl, s) in rows:
    for r in range(1, rounds + 1):
        mib, p50 = mount_figures("%s/%s-%s-%d.trace" % (out, wl, s, r))
        j = json.load(open("%s/%s-%s-%d.replay-%s.json" % (out, wl, s, r, s)))[0]
        print("%-8s %-12s %d %10.2f %12.2f %+6.1f%% %13.3f %13.3f %+6.1f%%" %
              (wl, s, r, mib, j["mib_s"], (j["mib_s"] - mib) / mib * 100, p50,
               j["read_p50_ms"], (j["read_p50_ms"] - p50) / p50 * 100 if p50 else 0))
print()
print("ordering by MiB/s (mount, each scheduler's own trace | replay of each trace):")
for wl in ("seq3", "rw"):
    mount = sorted(scheds, key=lambda s: -rows[wl, s][0])
    line = "%-5s mount: %s |" % (wl, " > ".join(mount))
    for s in scheds:
        rep = rows[wl, s][2]
        line += " replay of %s's trace: %s;" % (s, " > ".join(sorted(scheds, key=lambda t: -rep[t][0])))
    print(line)
PY
} | tee "$OUT/table.txt"
