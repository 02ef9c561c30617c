# SPDX-License-Identifier: GPL-2.0-or-later
# Bad command lines: each gives one line on stderr naming the problem,
# exit status 1, and mounts nothing.  Tried in the foreground and in
# daemon mode, where stderr must still be reached before daemonizing.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99

echo data >"$T/file"
md="module_dir=$MODULE_DIR"

# expect_error WHAT PATTERN ARGS...: PATTERN (grep -E) must be in the error.
expect_error() {
	what=$1 pattern=$2
	shift 2
	for fg in -f ''; do
		st=0
		timeout 10 "$FUSE_IOSCHED" $fg "$@" >"$T/out" 2>"$T/err" \
			</dev/null || st=$?
		[ "$st" -ne 124 ] || fail "$what${fg:+ ($fg)}: hung"
		assert_eq 1 "$st" "$what${fg:+ ($fg)}: exit status"
		lines=$(wc -l <"$T/err")
		[ "$lines" -eq 1 ] || {
			cat "$T/err" >&2
			fail "$what${fg:+ ($fg)}: $lines lines on stderr, expected 1"
		}
		grep -Eq -- "$pattern" "$T/err" || fail \
			"$what${fg:+ ($fg)}: error does not match '$pattern': $(cat "$T/err")"
		if grep -qF "$T" /proc/mounts; then
			fail "$what${fg:+ ($fg)}: something got mounted"
		fi
	done
}

expect_error "no arguments" '.' 
expect_error "one argument" '.' -o "$md" "$BACKING"
expect_error "three arguments" 'extra' -o "$md" "$BACKING" "$MNT" extra
expect_error "missing BACKING" "$T/nonexistent" \
	-o "$md" "$T/nonexistent" "$MNT"
expect_error "BACKING is a file" "$T/file" -o "$md" "$T/file" "$MNT"
expect_error "missing MOUNTPOINT" "$T/nomnt" -o "$md" "$BACKING" "$T/nomnt"
expect_error "MOUNTPOINT is a file" "$T/file" -o "$md" "$BACKING" "$T/file"
expect_error "unknown option" 'bogus_option' \
	-o "$md" -o bogus_option "$BACKING" "$MNT"
expect_error "bad threads" 'threads' -o "$md,threads=lots" "$BACKING" "$MNT"
expect_error "bad nr_requests" 'nr_requests' \
	-o "$md,nr_requests=0" "$BACKING" "$MNT"

# An unknown scheduler must be named, with the ones that exist.
expect_error "unknown scheduler" 'nope' -o "$md,scheduler=nope" "$BACKING" "$MNT"
grep -q 'noop' "$T/err" || fail "unknown scheduler: noop not listed: $(cat "$T/err")"
if [ -e "$MODULE_DIR/deadline.so" ]; then
	grep -q 'deadline' "$T/err" ||
		fail "unknown scheduler: deadline not listed: $(cat "$T/err")"
fi
exit 0
