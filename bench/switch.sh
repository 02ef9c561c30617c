#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/switch.sh: how long does an online scheduler switch take under
# load, and what does it cost the load?
#
#	bench/switch.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# While fio runs a verifying read/write load on the mount (no disk model:
# the real backing disk), a small Python loop writes scheduler names to
# .control/scheduler, cycling through all six, and times each write from
# open(2) to the return of close(2) (the write applies the switch; close
# returns nothing new but belongs to what a user's `echo >` waits for).
# Time is cut into 1 s windows of the wall clock that alternate: in even
# seconds the loop switches every 25 ms, in odd seconds it leaves the
# mount alone.  fio logs its bandwidth every 100 ms with Unix timestamps;
# the throughput of windows with switches is compared with that of the
# windows without, in the same run (A B A B ...).  ROUNDS such runs; the
# switch times of all rounds are pooled for the percentiles, and the
# medians of the per-round window medians are reported.
#
# Options: -t SECONDS per fio run (default 20), -r ROUNDS (default 3), -d
# DIR for the work directory (default /var/tmp).  RESULTS_DIR receives each
# round's fio output (rN.json), bandwidth logs, switch times (rN.switches:
# Unix time in ms, duration in ms, scheduler), summary.txt and switch.png
# (round 1's throughput over time with the switches, with gnuplot).
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=switch RUNTIME=20
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
[ "$RUNTIME" -ge 6 ] || die "-t: at least 6 s (2 s of warm-up, then windows)"

SCHEDS="noop deadline anticipatory cfq bfq kyber"
m=$W/real
# In the foreground, for the daemon's own account of each switch's drain.
mount_fs real "scheduler=deadline" "$RESULTS/daemon.log"
for s in $SCHEDS; do
	switch_to real "$s"	# load every module once, before measuring
done
switch_to real deadline

{
	describe_machine
	echo "load:      fio verify (crc32c, verify_backlog): seq write 64 KiB psync, rand read/write 8 KiB psync, rand write 16 KiB libaio O_DIRECT depth 16"
	echo "switches:  cycling $SCHEDS, one every 25 ms in even seconds, none in odd seconds; no disk model"
} | tee "$RESULTS/machine.txt"
echo

# The switching loop: argv = control file, end (Unix s), output file,
# schedulers.  It starts 2 s after fio, to let the load settle.
cat >"$W/switcher.py" <<'PY'
import os, sys, time

ctl, end, out, scheds = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:]
i = 0
with open(out, "w") as log:
    if scheds[-1] == "nowait":
        scheds.pop()
    else:
        time.sleep(2)
    while True:
        now = time.time()
        if now >= end:
            break
        if int(now) % 2 == 1:
            # A quiet window: sleep to the next second.
            time.sleep(min(int(now) + 1, end) - now)
            continue
        name = scheds[i % len(scheds)]
        i += 1
        t0 = time.monotonic_ns()
        fd = os.open(ctl, os.O_WRONLY)
        os.write(fd, (name + "\n").encode())
        os.close(fd)
        t1 = time.monotonic_ns()
        log.write("%.3f %.3f %s\n" % (now * 1000, (t1 - t0) / 1e6, name))
        # Do not start a switch that would end in the quiet second.
        time.sleep(max(0.0, 0.025 - (time.monotonic_ns() - t0) / 1e9))
PY

# A baseline: the same switches with nothing else on the mount.
echo "[0/$ROUNDS] switches without load"
python3 "$W/switcher.py" "$m/.control/scheduler" "$(( $(date +%s) + 6 ))" \
	"$RESULTS/idle.switches" $SCHEDS nowait || die "the switching loop failed"
switch_to real deadline

for r in $(seq "$ROUNDS"); do
	printf '[%d/%d] fio verify load %d s with switches\n' "$r" "$ROUNDS" "$RUNTIME"
	cat >"$RESULTS/r$r.fio" <<JOB
[global]
directory=$m
size=64m
time_based
runtime=$RUNTIME
verify=crc32c
verify_backlog=64
verify_fatal=1
verify_state_save=0
log_avg_msec=100
log_unix_epoch=1
write_bw_log=$RESULTS/r$r

[seq-write]
ioengine=psync
rw=write
bs=64k

[rand-rw]
ioengine=psync
rw=randrw
bs=8k

[rand-write-libaio]
ioengine=libaio
direct=1
iodepth=16
rw=randwrite
bs=16k
JOB
	end=$(( $(date +%s) + RUNTIME - 1 ))
	cat "$m/.control/stats" >"$RESULTS/r$r.stats-before"
	fio --output-format=json --output="$RESULTS/r$r.json" "$RESULTS/r$r.fio" \
		>/dev/null 2>"$RESULTS/r$r.err" &
	fio_pid=$!
	BGPIDS="$fio_pid"
	python3 "$W/switcher.py" "$m/.control/scheduler" "$end" \
		"$RESULTS/r$r.switches" $SCHEDS || die "the switching loop failed"
	st=0
	wait $fio_pid || st=$?
	BGPIDS=
	[ -s "$RESULTS/r$r.err" ] || rm -f "$RESULTS/r$r.err"
	[ $st -eq 0 ] || die "fio failed (status $st): see $RESULTS/r$r.err"
	cat "$m/.control/stats" >"$RESULTS/r$r.stats-after"
	switch_to real deadline
done

summarize "$RESULTS" "$ROUNDS" <<'PY' | tee "$RESULTS/summary.txt"
import collections, glob, json, os, statistics, sys

results, rounds = sys.argv[1], int(sys.argv[2])

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))]

times, per_sched = [], collections.defaultdict(list)
on_med, off_med, errors = [], [], 0
for r in range(1, rounds + 1):
    sw = [l.split() for l in open(os.path.join(results, "r%d.switches" % r))]
    for t, d, name in sw:
        times.append(float(d))
        per_sched[name].append(float(d))
    switch_secs = {int(float(t) // 1000) for t, d, name in sw}
    errors += sum(1 for j in fio_jobs("r%d" % r) if j.get("error"))
    # Bandwidth per 1 s window of the wall clock, over jobs and directions:
    # each job's 100 ms samples of one direction averaged per second, summed.
    per = collections.defaultdict(lambda: collections.defaultdict(list))
    for f in glob.glob(os.path.join(results, "r%d_bw.*.log" % r)):
        for line in open(f):
            p = [x.strip() for x in line.split(",")]
            per[int(p[0]) // 1000][(f, p[2])].append(int(p[1]))
    secs = sorted(per)
    # Leave out fio's first 2 s (before switching starts) and the last.
    secs = [s for s in secs if secs[0] + 2 <= s < secs[-1]]
    series = {s: sum(statistics.mean(v) for v in per[s].values()) / 1024.0
              for s in secs}
    on = [series[s] for s in secs if s in switch_secs]
    off = [series[s] for s in secs if s not in switch_secs and s % 2 == 1]
    if on and off:
        on_med.append(statistics.median(on))
        off_med.append(statistics.median(off))
    # For the plot: 100 ms totals and the switches, relative to fio's start.
    if r == 1:
        t0 = min(int(line.split(",")[0]) for f in
                 glob.glob(os.path.join(results, "r1_bw.*.log"))
                 for line in open(f))
        bins = collections.defaultdict(float)
        for f in glob.glob(os.path.join(results, "r1_bw.*.log")):
            for line in open(f):
                p = [x.strip() for x in line.split(",")]
                bins[(int(p[0]) - t0 + 50) // 100] += int(p[1]) / 1024.0
        with open(os.path.join(results, "tp-r1.dat"), "w") as out:
            for b in sorted(bins):
                out.write("%.1f %.2f\n" % (b / 10.0, bins[b]))
        with open(os.path.join(results, "sw-r1.dat"), "w") as out:
            for t, d, name in sw:
                out.write("%.3f %s\n" % ((float(t) - t0) / 1000.0, d))

print("switch time (open, write, close of .control/scheduler), ms")
print("%-13s %6s %8s %8s %8s" % ("to", "n", "p50", "p99", "max"))
for name in sorted(per_sched):
    xs = per_sched[name]
    print("%-13s %6d %8.2f %8.2f %8.2f" % (name, len(xs), pct(xs, 50),
          pct(xs, 99), max(xs)))
print("%-13s %6d %8.2f %8.2f %8.2f" % ("all", len(times), pct(times, 50),
      pct(times, 99), max(times)))
idle = [float(l.split()[1]) for l in open(os.path.join(results, "idle.switches"))]
if idle:
    print("%-13s %6d %8.2f %8.2f %8.2f" % ("no load", len(idle), pct(idle, 50),
          pct(idle, 99), max(idle)))
# The daemon's own account: how long each switch waited for the queue to
# drain (queued and in-flight requests to complete), baseline included.
drain = []
try:
    for line in open(os.path.join(results, "daemon.log")):
        if "drained in" in line:
            drain.append(float(line.split("drained in")[1].split()[0]))
except OSError:
    pass
if drain:
    print("%-13s %6d %8.2f %8.2f %8.2f" % ("drain (daemon)", len(drain),
          pct(drain, 50), pct(drain, 99), max(drain)))
print()
print("throughput (MiB/s, read + write) in 1 s windows")
print("%-6s %12s %12s %8s" % ("round", "switching", "quiet", "ratio"))
for r, (a, b) in enumerate(zip(on_med, off_med), 1):
    print("%-6d %12.1f %12.1f %8.2f" % (r, a, b, a / b if b else 0))
if on_med:
    a, b = statistics.median(on_med), statistics.median(off_med)
    print("%-6s %12.1f %12.1f %8.2f" % ("median", a, b, a / b if b else 0))
print()
print("fio jobs with errors (verification included): %d" % errors)
print("%d switches over %d rounds; target: p99 < 100 ms" % (len(times), rounds))
PY

if command -v gnuplot >/dev/null; then
	gnuplot -e "dir='$RESULTS'" "$HERE/switch.gnuplot" ||
		echo "switch: gnuplot failed" >&2
else
	echo "switch: no gnuplot (apt install gnuplot-nox): no plot" >&2
fi
