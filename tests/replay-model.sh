# SPDX-License-Identifier: GPL-2.0-or-later
# What fuse-iosched-replay models beside the schedulers, each as the mount
# has it: the ssd disk model and its settings (-m ssd); nr_requests for
# each direction apart; the host's overhead per request, derived from a
# trace of ours; fio-like time-based runs; and clear errors for bad
# options.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
: "${FUSE_IOSCHED_REPLAY:=$top_builddir/src/fuse-iosched-replay}"
D=$top_srcdir/tests/data
replay() { "$FUSE_IOSCHED_REPLAY" -o "module_dir=$MODULE_DIR" "$@"; }
# col SCHED N: column N of SCHED's row in the output on stdin.
col() { awk -v s="$1" -v n="$2" '$1 == s { print $n }'; }
# ge A B: A >= B, as numbers.
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }

# -m ssd: a read costs ssd_read_us plus its transfer (64 KiB at 500 MB/s
# per channel: 0.131 ms), not a seek.
replay -s noop -m ssd --closed-loop "$D/two-readers.blkparse" >"$T/ssd" ||
	fail "-m ssd failed"
head -1 "$T/ssd" | grep -q "disk ssd" || fail "no ssd: $(head -1 "$T/ssd")"
assert_eq 0.211 "$(col noop 5 <"$T/ssd")" "ssd read p50 (80 us + transfer)"
replay -s noop -m ssd -o ssd_read_us=1000 --closed-loop \
	"$D/two-readers.blkparse" >"$T/ssd1000" || fail "ssd_read_us failed"
assert_eq 1.131 "$(col noop 5 <"$T/ssd1000")" "read p50 at ssd_read_us=1000"
replay -s noop -o disk_model=ssd --closed-loop "$D/two-readers.blkparse" |
	cmp -s - "$T/ssd" || fail "-o disk_model=ssd is not -m ssd"

# nr_requests is per direction: 64 writes of 1 MiB at time 0, then a
# read, on the ssd with 8 workers and channels; at nr_requests=4 the writes take their
# 4 slots and the rest wait, the read takes a slot of its own at once and
# a free worker serves it: 0.211 ms, not after a write's 2 ms.
{
	echo "# fuse-iosched trace 1: dev cpu seq time pid action rwbs sector + count [comm]"
	for i in $(seq 64); do
		printf '  0,0    0 %8d     0.000000000   200  Q  WS %d + 2048 [w]\n' \
			"$i" $((i * 7919 * 65536))
	done
	echo "  0,0    0       65     0.000001000   300  Q  RS 12345678 + 128 [r]"
} >"$T/burst.trace"
replay -s noop -m ssd -o threads=8,ssd_channels=8,nr_requests=4 "$T/burst.trace" \
	>"$T/burst" || fail "burst replay failed"
cat "$T/burst"
assert_eq 0.211 "$(col noop 5 <"$T/burst")" "the read's latency behind 64 writes"
assert_eq 65 "$(col noop 2 <"$T/burst")" "burst requests"

# The host overhead: from a trace of ours, the mount's service times less
# the model's; none from blkparse's (no FUSE round trip), nor with
# --overhead=0.  One sequential reader whose 64 KiB reads took 1.437 ms
# from D to C, where the model's transfer is 0.437 ms: 1 ms of overhead,
# and 1.437 ms of latency in the replay, not 0.437.
awk 'BEGIN {
	print "# fuse-iosched trace 1: dev cpu seq time pid action rwbs sector + count [comm]"
	for (i = 0; i < 50; i++) {
		t = i * 0.003
		printf "  0,0    0 %8d %15.9f   400  Q  RS %d + 128 [r]\n", 3 * i + 1, t, i * 128
		printf "  0,0    0 %8d %15.9f   400  D  RS %d + 128 [r]\n", 3 * i + 2, t, i * 128
		printf "  0,0    0 %8d %15.9f   400  C  RS %d + 128 [r] wait 0.000000000 service 0.001437000\n", 3 * i + 3, t + 0.001437, i * 128
	}
}' >"$T/one.trace"
replay -s noop --closed-loop "$T/one.trace" >"$T/auto"
replay -s noop --closed-loop --overhead=0 "$T/one.trace" >"$T/zero"
cat "$T/auto" "$T/zero"
head -1 "$T/auto" | grep -q "host overhead 1.000 ms read" ||
	fail "overhead not derived: $(head -1 "$T/auto")"
assert_eq 1.437 "$(col noop 5 <"$T/auto")" "read p50 with the overhead"
assert_eq 0.437 "$(col noop 5 <"$T/zero")" "read p50 with --overhead=0"
replay -s noop --closed-loop "$D/two-readers.blkparse" | head -1 |
	grep -q "host overhead 0.000 ms read" || fail "an overhead from blkparse"

# Time-based: for 3 s, each reader starting over at its end, against the
# trace's 80 requests in about 1 s.
replay -s deadline --closed-loop --time-based=3 --overhead=0 \
	"$D/two-readers.trace" >"$T/tb" || fail "--time-based=3 failed"
cat "$T/tb"
head -1 "$T/tb" | grep -q "closed loop for 3.000 s" || fail "no duration: $(head -1 "$T/tb")"
n=$(col deadline 2 <"$T/tb")
ge "$n" 160 || fail "time-based: $n requests in 3 s"
replay -s deadline --closed-loop --time-based "$D/two-readers.trace" |
	head -1 | grep -q "closed loop for 1.0" || fail "recorded duration not used"

# Bad options: one line each, status 1.
for bad in "-m tape" "--time-based" "--closed-loop --time-based=0" \
	"--overhead=fast" "-o ssd_channels=0"; do
	# shellcheck disable=SC2086
	replay $bad "$D/two-readers.trace" >/dev/null 2>"$T/err" &&
		fail "$bad accepted"
	[ "$(wc -l <"$T/err")" -le 2 ] && grep -q "fuse-iosched-replay" "$T/err" ||
		fail "$bad: $(cat "$T/err")"
done
exit 0
