# SPDX-License-Identifier: GPL-2.0-or-later
# Replays are deterministic, byte for byte; closed loop differs from open
# loop where it should: two sequential readers with think time gain from
# anticipation only when each one's next read waits for its previous one
# (closed loop), and antic_expire=0 takes the gain away.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
: "${FUSE_IOSCHED_REPLAY:=$top_builddir/replay/fuse-iosched-replay}"
D=$top_srcdir/tests/data
replay() { "$FUSE_IOSCHED_REPLAY" -o "module_dir=$MODULE_DIR" "$@"; }
mib_of() { awk -v s="$1" '$1 == s { print $4 }' "$2"; }
# ratio A B: A / B * 100, an integer.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%d", a / b * 100 }'; }

for mode in "" --closed-loop "--closed-loop --time-based=2" "-m ssd"; do
	for out in 1 2; do
		replay $mode "$D/two-readers.trace" "$D/msr-sample.csv" \
			>"$T/run$out" || fail "replay $mode failed"
		replay $mode --json "$D/two-readers.blkparse" >"$T/json$out" ||
			fail "replay --json $mode failed"
	done
	cmp "$T/run1" "$T/run2" || fail "two runs differ ($mode)"
	cmp "$T/json1" "$T/json2" || fail "two JSON runs differ ($mode)"
done
# Every scheduler has its row; JSON keys are the columns.
for s in noop deadline anticipatory cfq bfq kyber; do
	grep -q "^$s " "$T/run1" || fail "no row for $s"
done
python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 6, rows
for r in rows:
    assert r["requests"] == 80 and 0 < r["jain"] <= 1, r' "$T/json1" ||
	fail "JSON: $(cat "$T/json1")"
header=$(sed -n 2p "$T/run1")
for k in scheduler requests merges mib_s read_p50_ms read_p99_ms \
	read_max_ms write_p50_ms write_p99_ms write_max_ms jain; do
	echo "$header" | grep -qw "$k" || fail "column $k missing"
	grep -q "\"$k\":" "$T/json1" || fail "JSON key $k missing"
done

# The sample's service times are made up (13 ms each), not a mount's: no
# host overhead is to be derived from them.
S="-s deadline,anticipatory --overhead=0"
replay $S "$D/two-readers.trace" >"$T/open"
replay $S --closed-loop "$D/two-readers.trace" >"$T/closed"
replay $S --closed-loop -o antic_expire=0 "$D/two-readers.trace" >"$T/noantic"
cat "$T/open" "$T/closed" "$T/noantic"
open=$(ratio "$(mib_of anticipatory "$T/open")" "$(mib_of deadline "$T/open")")
closed=$(ratio "$(mib_of anticipatory "$T/closed")" "$(mib_of deadline "$T/closed")")
noantic=$(ratio "$(mib_of anticipatory "$T/noantic")" "$(mib_of deadline "$T/noantic")")
[ "$closed" -ge 200 ] ||
	fail "closed loop: anticipatory/deadline throughput $closed%, want >= 200%"
[ "$open" -le 120 ] ||
	fail "open loop: anticipatory/deadline throughput $open%, want <= 120%"
[ "$noantic" -le 120 ] ||
	fail "antic_expire=0: anticipatory/deadline throughput $noantic%"

# --plot: the data, the script, and PNGs when gnuplot is there.
replay $S --closed-loop --plot "$T/p" "$D/two-readers.trace" >/dev/null \
	2>"$T/err" || fail "--plot failed: $(cat "$T/err")"
for f in p.gp p-latency.dat p-throughput.dat; do
	[ -s "$T/$f" ] || fail "--plot wrote no $f"
done
if command -v gnuplot >/dev/null; then
	[ -s "$T/p-read-cdf.png" ] || fail "no PNG from gnuplot: $(cat "$T/err")"
else
	grep -q "gnuplot not found" "$T/err" || fail "--plot said nothing: $(cat "$T/err")"
fi
exit 0
