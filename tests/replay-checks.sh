#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fuse-iosched-replay says what it cannot do instead of doing something
# else: a mount option it does not use is refused (scheduler= points to
# -s); an out-of-range tunable fails before any output, with the range;
# lost events and a trace of ours without its first line are refused,
# with the line number, unless --force, which warns on each; time going
# backwards and an unknown action are warnings.  --plot on a trace without writes
# draws what there is, and a gnuplot that fails makes the replay fail
# with one line.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
: "${FUSE_IOSCHED_REPLAY:=$top_builddir/replay/fuse-iosched-replay}"
D=$top_srcdir/tests/data
replay() { "$FUSE_IOSCHED_REPLAY" -o "module_dir=$MODULE_DIR" "$@"; }
TR=$D/two-readers.trace

# refused WHAT PATTERN ARGS...: status 1, nothing on stdout, one line on
# stderr matching PATTERN.
refused() {
	what=$1 pat=$2; shift 2
	replay "$@" >"$T/out" 2>"$T/err" && fail "$what: accepted"
	[ ! -s "$T/out" ] || fail "$what: printed $(head -n 2 "$T/out")"
	[ "$(wc -l <"$T/err")" = 1 ] || fail "$what: not one line: $(cat "$T/err")"
	grep -Eq -- "$pat" "$T/err" || fail "$what: $(cat "$T/err")"
}

# Mount options: those the replay uses work, the others are refused.
replay -s noop -o seek_ms=4,nr_requests=32,threads=2 "$TR" >/dev/null ||
	fail "-o seek_ms,nr_requests,threads refused"
refused "-o scheduler=cfq" '-o scheduler=cfq: .*-s cfq' -o scheduler=cfq "$TR"
for o in log=debug writeback_cache max_background=8 backing_io=direct \
	metrics=:9100 nofail; do
	refused "-o $o" "-o $o: a mount option the replay does not use" \
		-s noop -o "$o" "$TR"
done

# An out-of-range tunable: before the header, with the range and unit.
refused "-o read_expire=9999999" \
	"-o read_expire=9999999: deadline's read_expire is an integer from 0 to 3600000 ms" \
	-s noop,deadline -o read_expire=9999999 "$TR"
refused "-o fifo_batch=x" "fifo_batch is an integer from 1 to 1024" \
	-s deadline -o fifo_batch=x "$TR"
replay -s deadline -o read_expire=250 "$TR" >/dev/null ||
	fail "an in-range tunable refused"

# Lost events (line 6), then a header-less trace of ours.
sed '6i lost 7 events' "$TR" >"$T/lost.trace"
refused "lost events" "lost.trace:6: lost 7 events.*--force" -s noop "$T/lost.trace"
replay --force -s noop "$T/lost.trace" >"$T/out" 2>"$T/err" ||
	fail "--force: lost events refused: $(cat "$T/err")"
grep -q 'lost.trace:6: lost 7 events' "$T/err" || fail "--force: no warning: $(cat "$T/err")"
grep -q '^noop ' "$T/out" || fail "--force: no row"

sed 1d "$TR" >"$T/headless.trace"
refused "a trace of ours without its first line" \
	'headless.trace:[0-9]+: a fuse-iosched trace without its first line.*--format fuse-iosched' \
	-s noop "$T/headless.trace"
replay -s noop --format fuse-iosched "$T/headless.trace" >"$T/out" ||
	fail "--format fuse-iosched refused the header-less trace"
replay -s noop "$TR" | tail -n +2 >"$T/want"
tail -n +2 "$T/out" | cmp -s - "$T/want" ||
	fail "header-less with --format fuse-iosched differs from the original"
# blkparse's own output is no such trace.
replay -s noop "$D/two-readers.blkparse" >/dev/null 2>"$T/err" ||
	fail "blkparse refused: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "blkparse warned: $(cat "$T/err")"

# Time going backwards (line 9) and an unknown action (line 3): a
# warning with the line number each, not an error: requests are replayed
# in time order.
awk 'NR == 9 { $4 = "0.000000001" } { print }' "$TR" >"$T/back.trace"
replay -s noop "$T/back.trace" >/dev/null 2>"$T/err" ||
	fail "time going backwards refused: $(cat "$T/err")"
grep -Eq 'back.trace:9: time goes back from [0-9.]+ to 0.000000001 s$' "$T/err" ||
	fail "time going backwards: no warning: $(cat "$T/err")"

sed '3s/  D  RS/  Z  RS/' "$TR" >"$T/unknown.trace"
sed -n 3p "$T/unknown.trace" | grep -q ' Z ' || fail "sed did not make an unknown action"
replay -s noop "$T/unknown.trace" >/dev/null 2>"$T/err" || fail "unknown action refused"
grep -q 'unknown.trace:3: unknown action Z' "$T/err" || fail "no warning: $(cat "$T/err")"

# --plot on reads only: the read CDF and the throughput, no write CDF.
if command -v gnuplot >/dev/null; then
	(cd "$T" && replay -s noop,deadline --plot p "$TR" >/dev/null 2>err) ||
		fail "--plot on a read-only trace failed: $(cat "$T/err")"
	[ -s "$T/p-read-cdf.png" ] || fail "no read CDF"
	[ -s "$T/p-throughput.png" ] || fail "no throughput plot: $(cat "$T/err")"
	[ ! -e "$T/p-write-cdf.png" ] || fail "a write CDF with no writes"
else
	[ "${CI:-}" != true ] || fail "CI: needs gnuplot"
fi
# A gnuplot that fails: status 1 and the replay's one line about it.
mkdir "$T/bin"
printf '#!/bin/sh\necho "plot x" >&2; echo "  ^" >&2\necho "line 13: x range is invalid" >&2\nexit 1\n' >"$T/bin/gnuplot"
chmod +x "$T/bin/gnuplot"
(cd "$T" && PATH=$T/bin:$PATH replay -s noop --plot q "$TR" >/dev/null 2>err) &&
	fail "a failing gnuplot: status 0"
assert_eq "fuse-iosched-replay: gnuplot q.gp failed: line 13: x range is invalid (its messages: q-gnuplot.log)" \
	"$(cat "$T/err")" "a failing gnuplot's message"
grep -q '^plot x$' "$T/q-gnuplot.log" || fail "gnuplot's messages not in q-gnuplot.log"
# A gnuplot that is not there: the files, a line saying so, status 0.
mkdir "$T/nobin"
(cd "$T" && PATH=$T/nobin "$FUSE_IOSCHED_REPLAY" -o "module_dir=$MODULE_DIR" \
	-s noop --plot r "$TR" >/dev/null 2>err) ||
	fail "no gnuplot: status 1: $(cat "$T/err")"
grep -q 'gnuplot not found: .*run gnuplot r.gp' "$T/err" || fail "no gnuplot: $(cat "$T/err")"
exit 0
