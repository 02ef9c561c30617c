# SPDX-License-Identifier: GPL-2.0-or-later
# A reader blocked in a read of .control/trace does not keep the mount
# alive: a lazy unmount (which tells the daemon nothing while a file is
# open) and SIGTERM both end its stream, and the daemon exits.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require timeout

# start_reader: cat the trace in the background until its header shows.
start_reader() {
	rm -f "$T/t"
	timeout 30 cat "$MNT/.control/trace" >"$T/t" & R=$!
	cleanup_push "kill $R 2>/dev/null"
	wait_for "a header from the reader" test -s "$T/t"
}
# daemon_exits: within 10 s, with status 0; so does the reader (EOF).
daemon_exits() {
	wait_daemon_exit "$1"
	st=0; wait "$DAEMON_PID" || st=$?
	DAEMON_PID=
	assert_eq 0 "$st" "$1: daemon's exit status"
	st=0; wait "$R" || st=$?
	assert_eq 0 "$st" "$1: reader's exit status (end of file)"
}

mount_fs
start_reader
fusermount3 -u -z "$MNT" || fail "fusermount3 -u -z failed"
daemon_exits "lazy unmount"
mountpoint -q "$MNT" && fail "still mounted"

mount_fs
start_reader
kill -TERM "$DAEMON_PID"
daemon_exits "SIGTERM"
mountpoint -q "$MNT" && fail "still mounted after SIGTERM"
check_log
