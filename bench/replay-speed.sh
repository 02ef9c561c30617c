#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/replay-speed.sh: how many requests fuse-iosched-replay handles per
# second, of wall time and of CPU time.
#
#	bench/replay-speed.sh [-r ROUNDS] [-s REQUESTS] [-d DIR] RESULTS_DIR
#
# A synthetic trace of REQUESTS requests (default 1,000,000) in our
# format, from 8 processes: 4 KiB requests, sequential runs broken by
# random jumps, 3 in 4 reads, at 20,000 per second (open loop: deeper
# queues than the hdd model serves).  Each round replays it under noop and
# deadline, open and closed loop, parsing included, and records the wall
# time and the CPU time (user + system) of each run; the table gives the
# median of each, requests per second of both, and the load average
# before and after, since on a shared machine the wall time is mostly the
# others' (-t is not used).
BENCH=replay-speed
RUNTIME=1
SIZE=1000000
. "$(dirname "$0")/lib.sh" "$@"

REPLAY=${FUSE_IOSCHED_REPLAY:-$HERE/../replay/fuse-iosched-replay}
[ -x "$REPLAY" ] || REPLAY=$(command -v fuse-iosched-replay) ||
	die "no fuse-iosched-replay: build it or set FUSE_IOSCHED_REPLAY"
TRACE=$W/speed.trace

awk -v n="$SIZE" 'BEGIN {
	srand(17)
	print "# fuse-iosched trace 1: dev cpu seq time pid action rwbs sector + count [comm]"
	for (p = 0; p < 8; p++)
		pos[p] = int(rand() * 2^30) * 8
	for (i = 1; i <= n; i++) {
		p = int(rand() * 8)
		if (rand() < 0.05)
			pos[p] = int(rand() * 2^30) * 8
		# %.0f: the %d of mawk stops at 2^31 - 1.
		printf "  0,0    0 %8d %15.9f %5d  Q  %s %.0f + 8 [p%d]\n", i,
			i / 20000, 1000 + p, rand() < 0.75 ? "RS" : "WS",
			pos[p], p
		pos[p] += 8
	}
}' >"$TRACE"

load() { cut -d' ' -f1 /proc/loadavg; }
for r in $(seq "$ROUNDS"); do
	for s in noop deadline; do
		for mode in open closed; do
			flag=
			[ $mode = closed ] && flag=--closed-loop
			l0=$(load)
			/usr/bin/time -f "%e %U %S" -o "$RESULTS/$s-$mode-$r.time" \
				"$REPLAY" -o "config=$W/empty.conf" \
				${MODULE_DIR:+-o "module_dir=$MODULE_DIR"} -s $s $flag \
				"$TRACE" >"$RESULTS/$s-$mode-$r.out" ||
				die "replay under $s ($mode) failed"
			echo "$l0 $(load)" >"$RESULTS/$s-$mode-$r.load"
		done
	done
done

{
describe_machine
echo "trace:     $SIZE requests, $(du -h "$TRACE" | cut -f1)"
echo
python3 - "$RESULTS" "$ROUNDS" "$SIZE" <<'PY'
import statistics, sys
res, rounds, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
print("scheduler loop    wall_s  cpu_s  req/s_wall  req/s_cpu  load_before  load_after")
for s in ("noop", "deadline"):
    for mode in ("open", "closed"):
        runs = [open("%s/%s-%s-%d.time" % (res, s, mode, r)).read().split()
                for r in range(1, rounds + 1)]
        loads = [open("%s/%s-%s-%d.load" % (res, s, mode, r)).read().split()
                 for r in range(1, rounds + 1)]
        wall = statistics.median(float(x[0]) for x in runs)
        cpu = statistics.median(float(x[1]) + float(x[2]) for x in runs)
        print("%-9s %-6s %7.2f %6.2f %11.0f %10.0f  %11s  %10s" % (
            s, mode, wall, cpu, n / wall, n / cpu,
            statistics.median(float(l[0]) for l in loads),
            statistics.median(float(l[1]) for l in loads)))
PY
} | tee "$RESULTS/table.txt"
