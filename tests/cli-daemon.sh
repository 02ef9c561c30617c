# SPDX-License-Identifier: GPL-2.0-or-later
# Without -f the command returns once the mount is up, and unmounting
# with fusermount3 -u makes the daemon exit, with status 0.  Once
# daemonized it logs to syslog: captured (lib.sh's syslog_start), the log
# has the mount and the exit, and no errors.
SYSLOG_CAPTURE=yes
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require pgrep fusermount3
syslog_start

echo hello >"$BACKING/f"
st=0
timeout 20 "$FUSE_IOSCHED" -o "module_dir=$MODULE_DIR" "$BACKING" "$MNT" \
	>"$LOG" 2>&1 </dev/null || st=$?
assert_eq 0 "$st" "exit status of the mount command"
# No polling: the mount must be there when the command returns.
mountpoint -q "$MNT" || fail "not a mountpoint right after the command returned"
grep -q " $MNT fuse" /proc/mounts || fail "no fuse entry for $MNT in /proc/mounts"

pids=$(pgrep -f -- "$MNT" || true)
[ -n "$pids" ] || fail "no daemon process found for $MNT"
[ "$(echo "$pids" | wc -l)" -eq 1 ] || fail "several daemons for $MNT: $pids"
DAEMON_PID=$pids	# the EXIT trap kills it if it outlives the test

assert_eq hello "$(cat "$MNT/f")" "content read through the mount"
echo world >"$MNT/g"
assert_eq world "$(cat "$BACKING/g")" "content written through the mount"

fusermount3 -u "$MNT" || fail "fusermount3 -u failed"
wait_daemon_exit unmount
DAEMON_PID=
mountpoint -q "$MNT" && fail "still mounted"
check_log
# What it said after daemonizing: the mount, then a clean exit.
syslog_exited "$pids"
grep -q "fuse-iosched\[$pids\]: mounted $BACKING on $MNT" "$SYSLOG" ||
	fail "the mount line names other directories: $(cat "$SYSLOG")"
exit 0
