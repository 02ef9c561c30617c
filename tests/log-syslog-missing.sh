# SPDX-License-Identifier: GPL-2.0-or-later
# Without syslog (no /dev/log, as in many containers) a daemonized mount
# says so once, before detaching, where it can: on stderr, in its own
# .control/log and in -o log_file; and it goes on logging to those two.
SYSLOG_CAPTURE=yes
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require pgrep fusermount3
syslog_none

st=0
timeout 20 "$FUSE_IOSCHED" -o "module_dir=$MODULE_DIR,log_file=$T/file.log" \
	"$BACKING" "$MNT" >"$LOG" 2>&1 </dev/null || st=$?
assert_eq 0 "$st" "exit status of the mount command"
DAEMON_PID=$(cat "$MNT/.control/pid")
cleanup_push "fusermount3 -u '$MNT' 2>/dev/null"
said='syslog cannot be reached (/dev/log: .*): once detached, the daemon logs only to '"$MNT/.control/log and $T/file.log"'$'
assert_eq 1 "$(grep -c "warning: $said" "$LOG")" "lines on stderr: $(cat "$LOG")"
assert_eq 1 "$(grep -c "$said" "$MNT/.control/log")" "lines in .control/log"
assert_eq 1 "$(grep -c "$said" "$T/file.log")" "lines in the log file"
# After detaching: both still get the daemon's lines.
echo nosuch >"$MNT/.control/scheduler" 2>/dev/null && fail "nosuch accepted"
grep -q 'refused "nosuch"' "$MNT/.control/log" || fail "not in .control/log"
grep -q "fuse-iosched\[$DAEMON_PID\]: warning: .*refused \"nosuch\"" "$T/file.log" ||
	fail "not in the log file: $(cat "$T/file.log")"
fusermount3 -u "$MNT" || fail "fusermount3 -u failed"
wait_daemon_exit unmount
DAEMON_PID=
grep -q "unmounting $MNT, exit status 0" "$T/file.log" || fail "no exit line"
