# SPDX-License-Identifier: GPL-2.0-or-later
# The manual pages format without a warning.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require mandoc
for page in fuse-iosched.8 fuse-iosched.conf.5 fuse-iosched-scheduler.3 \
	fuse-iosched-stat.1 fuse-iosched-replay.1; do
	f=$top_srcdir/man/$page
	# Those made from a .in file at build time.
	[ -f "$f" ] || f=$top_builddir/man/$page
	[ -f "$f" ] || fail "$page is missing"
	out=$(mandoc -Tlint -Wwarning "$f" 2>&1) || fail "mandoc: $page: $out"
	[ -z "$out" ] || fail "mandoc: $page: $out"
	if command -v groff >/dev/null 2>&1; then
		out=$(groff -man -ww -z "$f" 2>&1)
		[ -z "$out" ] || fail "groff: $page: $out"
	fi
done
exit 0
