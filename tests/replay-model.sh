# SPDX-License-Identifier: GPL-2.0-or-later
# What fuse-iosched-replay models beside the schedulers, each as the mount
# has it: the ssd disk model and its settings (-m ssd); nr_requests for
# each direction apart; the host's overhead per request, derived from a
# trace of ours; fio-like time-based runs; and clear errors for bad
# options.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
: "${FUSE_IOSCHED_REPLAY:=$top_builddir/replay/fuse-iosched-replay}"
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
# The recorded values, in turn, not their median: every other read took
# 2 ms more from D to C; the replay's reads alternate 1.437 and 3.437 ms.
awk '$6 == "C" && $3 % 6 == 0 { $4 = sprintf("%.9f", $4 + 0.002); $15 = "0.003437000" } 1' \
	"$T/one.trace" >"$T/alt.trace"
replay -s noop --closed-loop "$T/alt.trace" >"$T/alt"
cat "$T/alt"
assert_eq 1.437 "$(col noop 5 <"$T/alt")" "read p50, every other read slower"
assert_eq 3.437 "$(col noop 7 <"$T/alt")" "read max, every other read slower"

# The lags: a mount's worker starts an io late, after the head freed with
# it queued, or after it arrived at an idle disk.  The reader above with
# each D 0.1 ms after its Q: 0.1 ms idle lag, and 1.537 ms of latency.
awk '$6 == "Q" { print; next } $6 == "D" { $4 = sprintf("%.9f", $4 + 0.0001) }
	$6 == "C" { $4 = sprintf("%.9f", $4 + 0.0001); $13 = "0.000100000" } 1' \
	"$T/one.trace" >"$T/late.trace"
replay -s noop --closed-loop "$T/late.trace" >"$T/late"
cat "$T/late"
head -1 "$T/late" | grep -q "host overhead 1.000 ms read, 0.000 ms write, lag 0.000 ms head, 0.100 ms idle" ||
	fail "idle lag not derived: $(head -1 "$T/late")"
assert_eq 1.537 "$(col noop 5 <"$T/late")" "read p50 with the idle lag"
# Two readers' requests queued together; the second's D comes 0.2 ms
# after the first's service (0.437 ms) ends: 0.2 ms head lag.
awk 'BEGIN {
	print "# fuse-iosched trace 1: dev cpu seq time pid action rwbs sector + count [comm]"
	for (i = 0; i < 50; i++) {
		t = i * 0.003; a = 256 * i; b = a + 128
		printf "  0,0 0 %d %.9f 400 Q RS %d + 128 [a]\n", ++s, t, a
		printf "  0,0 0 %d %.9f 500 Q RS %d + 128 [b]\n", ++s, t, b
		printf "  0,0 0 %d %.9f 400 D RS %d + 128 [a]\n", ++s, t, a
		printf "  0,0 0 %d %.9f 500 D RS %d + 128 [b]\n", ++s, t + 0.000637, b
		printf "  0,0 0 %d %.9f 400 C RS %d + 128 [a] wait 0.000000000 service 0.000437000\n", ++s, t + 0.000437, a
		printf "  0,0 0 %d %.9f 500 C RS %d + 128 [b] wait 0.000637000 service 0.000437000\n", ++s, t + 0.001074, b
	}
}' >"$T/head.trace"
replay -s noop "$T/head.trace" | head -1 | grep -q "lag 0.200 ms head, 0.000 ms idle" ||
	fail "head lag not derived: $(replay -s noop "$T/head.trace" | head -1)"
# 40 requests queued at once, the first dispatched 1.5 ms late (as a
# mount's first), each next 0.2 ms after the one before was served: one
# idle case is no lag.
awk 'BEGIN {
	print "# fuse-iosched trace 1: dev cpu seq time pid action rwbs sector + count [comm]"
	for (i = 0; i < 40; i++)
		printf "  0,0 0 %d 0.000000000 %d Q RS %d + 128 [q]\n", ++s, 600 + i, 128 * i
	for (i = 0; i < 40; i++) {
		d = i ? 0.0015 + i * 0.000637 : 0.0015
		printf "  0,0 0 %d %.9f %d D RS %d + 128 [q]\n", ++s, d, 600 + i, 128 * i
		printf "  0,0 0 %d %.9f %d C RS %d + 128 [q] wait %.9f service 0.000437000\n", ++s, d + 0.000437, 600 + i, 128 * i, d
	}
}' >"$T/first.trace"
replay -s noop "$T/first.trace" | head -1 | grep -q "lag 0.200 ms head, 0.000 ms idle" ||
	fail "a lag from one case: $(replay -s noop "$T/first.trace" | head -1)"

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
# A write's S is sync_write (O_DIRECT and the like), as on the mount:
# anticipatory serves such writes in its sync batch beside a reader's,
# while a process's write without S waits behind the reads.  A reader of
# 64 KiB every 2 ms and a writer of 1 MiB every 20 ms, closed loop.
for f in WS W; do
	awk -v f=$f 'BEGIN {
		print "# fuse-iosched trace 1: dev cpu seq time pid action rwbs sector + count [comm]"
		for (i = 0; i < 200; i++) {
			t = i * 0.002
			printf "  0,0 0 %d %.9f 300 Q RS %d + 128 [r]\n", ++s, t, 1000000 + i * 128
			printf "  0,0 0 %d %.9f 300 C RS %d + 128 [r]\n", ++s, t + 0.001, 1000000 + i * 128
			if (i % 10)
				continue
			printf "  0,0 0 %d %.9f 200 Q %s %d + 2048 [w]\n", ++s, t, f, 50000000 + i * 205
			printf "  0,0 0 %d %.9f 200 C %s %d + 2048 [w]\n", ++s, t + 0.001, f, 50000000 + i * 205
		} }' >"$T/$f.trace"
	replay -s anticipatory -m hdd --closed-loop "$T/$f.trace" >"$T/$f.out" ||
		fail "replay of $f writes failed"
	cat "$T/$f.out"
done
ws=$(col anticipatory 10 <"$T/WS.out")
w=$(col anticipatory 10 <"$T/W.out")
ge "$w" "$(awk -v x="$ws" 'BEGIN { print x * 2 }')" ||
	fail "anticipatory's write max: WS writes $ws ms, W writes $w ms (WS not sync_write?)"
exit 0
