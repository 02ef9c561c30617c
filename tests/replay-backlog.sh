# SPDX-License-Identifier: GPL-2.0-or-later
# An open-loop replay whose trace arrives far faster than the disk serves
# it keeps most of the trace waiting for a slot.  The waiting requests
# hold no io each (only their trace index): the replay's peak memory over
# a closed-loop replay of the same trace, which has no backlog, stays
# within a few bytes per request, where an io per waiting request costs
# over 200.  And every request still completes, in both directions.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
: "${FUSE_IOSCHED_REPLAY:=$top_builddir/replay/fuse-iosched-replay}"
require python3
n=200000
[ -n "${TEST_QUICK:-}" ] && n=100000

# Random 4 KiB requests (none merge) from 4 processes, 1 us apart: the
# hdd serves about a hundred a second.
awk -v n=$n 'BEGIN {
	srand(7)
	print "# fuse-iosched trace 1: dev cpu seq time pid action rwbs sector + count [comm]"
	for (i = 1; i <= n; i++)
		printf "  0,0 0 %d %.9f %d Q %s %.0f + 8 [p]\n", i, i / 1e6,
			100 + i % 4, i % 4 ? "RS" : "WS", int(rand() * 2^24) * 8
}' >"$T/backlog.trace"

# peak_kib ARGS...: the replay's peak resident memory, in KiB.
peak_kib() {
	python3 -c 'import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=open(sys.argv[-1] + ".out", "w"))
if r.returncode:
    sys.exit("replay failed")
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
		"$FUSE_IOSCHED_REPLAY" -o "module_dir=$MODULE_DIR" -s noop "$@"
}
closed=$(peak_kib --closed-loop "$T/backlog.trace") ||
	fail "closed-loop replay failed"
open=$(peak_kib "$T/backlog.trace") || fail "open-loop replay failed"
cat "$T/backlog.trace.out"
echo "peak: open loop $open KiB, closed loop $closed KiB, $n requests"
awk -v n=$n '$1 == "noop" { exit !($2 == n) }' "$T/backlog.trace.out" ||
	fail "not every request completed"
# 96 bytes a request: the wait queue's entry, and slack for a
# sanitizer's allocator (ThreadSanitizer's took 53).
[ $(((open - closed) * 1024)) -le $((n * 96)) ] ||
	fail "open loop took $((open - closed)) KiB more than closed loop for $n requests"
exit 0
