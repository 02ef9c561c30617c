# SPDX-License-Identifier: GPL-2.0-or-later
# fuse-iosched-replay reads each trace format (detected or named), counts
# every request, and stops at a malformed line naming file and line.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
: "${FUSE_IOSCHED_REPLAY:=$top_builddir/replay/fuse-iosched-replay}"
D=$top_srcdir/tests/data
replay() { "$FUSE_IOSCHED_REPLAY" -o "module_dir=$MODULE_DIR" "$@"; }
# The requests column of scheduler $1 in the output on stdin.
requests_of() { awk -v s="$1" '$1 == s { print $2 }'; }

# Each sample, detected, then named.
for f in two-readers.trace:fuse-iosched:80 two-readers.blkparse:blkparse:80 \
	msr-sample.csv:msr:60; do
	IFS=: read -r file fmt n <<-X
	$f
	X
	replay -s noop "$D/$file" >"$T/out" || fail "$file: replay failed"
	head -1 "$T/out" | grep -q ": $fmt, $n requests" ||
		fail "$file: not detected as $fmt with $n requests: $(head -1 "$T/out")"
	assert_eq "$n" "$(requests_of noop <"$T/out")" "$file: requests"
	replay -s noop --format "$fmt" "$D/$file" >"$T/out2" ||
		fail "$file: --format $fmt failed"
	cmp -s "$T/out" "$T/out2" || fail "$file: --format $fmt differs"
done
# msr: 20 of the 60 are 4 KiB writes.
replay -s noop --json "$D/msr-sample.csv" | grep -q '"write_max_ms": [1-9]' ||
	fail "msr writes not replayed"
# A trace path is bytes: quote, backslash, newline and a byte that is not
# UTF-8 give valid JSON from which os.fsencode() gets the path back.
odd="$T/$(printf 'q"b\\s\nn\377x')"
cp "$D/two-readers.trace" "$odd"
replay -s noop --json "$odd" >"$T/odd.json" || fail "odd path: replay failed"
python3 -m json.tool "$T/odd.json" >/dev/null || fail "odd path: $(cat "$T/odd.json")"
ODD=$odd python3 -c 'import json, os, sys
row = json.load(open(sys.argv[1]))[0]
assert os.fsencode(row["trace"]) == os.fsencode(os.environ["ODD"]), row' \
	"$T/odd.json" || fail "odd path not intact: $(cat "$T/odd.json")"

# Malformed lines: the file and line number, status 1, nothing printed.
sed '7s/ Q / Q RS x/; 7s/+ 128/+ y/' "$D/two-readers.trace" >"$T/bad.trace"
st=0; replay -s noop "$T/bad.trace" >"$T/out" 2>"$T/err" || st=$?
assert_eq 1 "$st" "status for a malformed trace"
grep -q "bad.trace:7: malformed" "$T/err" || fail "no file:line: $(cat "$T/err")"
sed '12s/,Read,/,Erase,/' "$D/msr-sample.csv" >"$T/bad.csv"
replay -s noop "$T/bad.csv" 2>"$T/err" && fail "bad msr Type accepted"
grep -q "bad.csv:12: malformed" "$T/err" || fail "msr: $(cat "$T/err")"
printf '1,2,3\n' >"$T/short.csv"
replay -s noop --format msr "$T/short.csv" 2>"$T/err" && fail "3 fields accepted"
grep -q "short.csv:1: malformed" "$T/err" || fail "short: $(cat "$T/err")"
printf 'hello\n' >"$T/what"
replay -s noop "$T/what" 2>"$T/err" && fail "unknown format accepted"
grep -q "what:1: unknown trace format" "$T/err" || fail "unknown: $(cat "$T/err")"
replay -s noop "$T/missing" 2>"$T/err" && fail "missing file accepted"
grep -q "missing: No such file" "$T/err" || fail "missing: $(cat "$T/err")"

# Bad options: one line, status 1.
replay -s nosuch "$D/msr-sample.csv" 2>"$T/err" && fail "unknown scheduler accepted"
grep -q "no scheduler nosuch" "$T/err" || fail "-s nosuch: $(cat "$T/err")"
replay -s deadline -o antic_expire=1 "$D/msr-sample.csv" 2>"$T/err" &&
	fail "a tunable of no scheduler compared accepted"
grep -q "antic_expire=1: no such option or tunable" "$T/err" || fail "$(cat "$T/err")"
replay -s deadline -o read_expire=-1 "$D/msr-sample.csv" 2>"$T/err" &&
	fail "a tunable out of range accepted"
grep -q "read_expire=-1: deadline's read_expire is an integer from 0 to 3600000 ms" "$T/err" || fail "$(cat "$T/err")"
replay -s deadline -o read_expire=x "$D/msr-sample.csv" 2>/dev/null && fail "read_expire=x accepted"
replay -m ssd2 "$D/msr-sample.csv" 2>"$T/err" && fail "-m ssd2 accepted"
replay --format csv "$D/msr-sample.csv" 2>"$T/err" && fail "--format csv accepted"
exit 0
