# SPDX-License-Identifier: GPL-2.0-or-later
# Bad command lines: each gives one line on stderr naming the problem,
# prefixed "fuse-iosched: " (libfuse's own messages too), exit status 1,
# and mounts nothing; warnings found before the problem are not printed
# (a refused module that explains it is named in the line).  On success
# the warnings are printed.  Tried in the foreground and in
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
		grep -q '^fuse-iosched: ' "$T/err" ||
			fail "$what${fg:+ ($fg)}: no prefix: $(cat "$T/err")"
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

# Warnings held, then a failure: the failure alone.
mkdir "$T/nomods"
expect_error "unknown option after warnings" 'unknown option.*bogus' \
	-o "module_dir=$T/nomods" -o bogus "$BACKING" "$MNT"
expect_error "a bad value after warnings" 'threads=lots' \
	-o "module_dir=$T/nomods,threads=lots" "$BACKING" "$MNT"
# Without a failure they are printed (the default scheduler's fallback).
"$FUSE_IOSCHED" --print-config -o "module_dir=$T/nomods" >/dev/null \
	2>"$T/err" || fail "--print-config failed: $(cat "$T/err")"
grep -q '^fuse-iosched: warning: default scheduler deadline not found' \
	"$T/err" || fail "the fallback warning is not printed: $(cat "$T/err")"

# A module refused for its mode, asked for: why, in the one line.
if [ -e "$MODULE_DIR/deadline.so" ]; then
	mkdir "$T/mods"
	cp "$MODULE_DIR/deadline.so" "$T/mods/"
	chmod 666 "$T/mods/deadline.so"
	expect_error "a refused module" \
		"^fuse-iosched: scheduler 'deadline': module $T/mods/deadline.so: refused: writable by others" \
		-o "module_dir=$T/mods,scheduler=deadline" "$BACKING" "$MNT"
fi
exit 0
