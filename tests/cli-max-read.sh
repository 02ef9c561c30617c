# SPDX-License-Identifier: GPL-2.0-or-later
# -o max_read=N, a usual FUSE option, works: without -f the command
# returns 0, the mount stays (libfuse used to end the session at FUSE_INIT)
# and reads reach the daemon in pieces of at most N bytes.  A value that
# is not a number is refused before mounting: one line, exit status 1.
. "$top_srcdir/tests/lib.sh"
require_root
require pgrep

head -c 1048576 /dev/urandom >"$BACKING/f"
st=0
timeout 20 "$FUSE_IOSCHED" -o "module_dir=$MODULE_DIR,scheduler=noop" \
	-o max_read=8192 "$BACKING" "$MNT" >"$LOG" 2>&1 </dev/null || st=$?
assert_eq 0 "$st" "exit status of the mount command"
DAEMON_PID=$(pgrep -f -- "$MNT" || true)
[ -n "$DAEMON_PID" ] || fail "no daemon for $MNT"
grep -q " $MNT fuse.*max_read=8192" /proc/mounts ||
	fail "no max_read=8192 in /proc/mounts: $(grep " $MNT " /proc/mounts)"
# O_DIRECT: one pass through the mount, no page cache in between.
timeout 30 dd if="$MNT/f" of="$T/copy" bs=1M iflag=direct status=none ||
	fail "cannot read through the mount"
cmp -s "$BACKING/f" "$T/copy" || fail "the copy differs"
mountpoint -q "$MNT" || fail "the mount went away"
n=$(stat_of read requests)
[ "$n" -ge 128 ] || fail "1 MiB read in $n requests: more than 8192 bytes each"
fusermount3 -u "$MNT" || fail "fusermount3 -u failed"
wait_for "the daemon to exit" sh -c "! kill -0 $DAEMON_PID 2>/dev/null"
DAEMON_PID=

for v in x -1 8k 4294967296 ''; do
	st=0
	timeout 10 "$FUSE_IOSCHED" -f -o "module_dir=$MODULE_DIR" \
		-o "max_read=$v" "$BACKING" "$MNT" >"$T/out" 2>"$T/err" \
		</dev/null || st=$?
	assert_eq 1 "$st" "exit status for max_read=$v"
	! mountpoint -q "$MNT" || fail "mounted with max_read=$v"
	assert_eq 1 "$(wc -l <"$T/err")" "lines on stderr for max_read=$v"
	grep -qx "fuse-iosched: max_read=$v: not a number from 0 to 4294967295" \
		"$T/err" || fail "max_read=$v: $(cat "$T/err")"
done
check_log
exit 0
