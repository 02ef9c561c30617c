# SPDX-License-Identifier: GPL-2.0-or-later
# .control/pid names the daemon that serves the mount, for anyone to read,
# and the mount's log line names it too: with two mounts, each file names
# its own daemon, and kill -HUP "$(cat MNT/.control/pid)" reloads that
# mount and not the other.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require setpriv

chmod 755 "$T"
: >"$T/empty.conf"
mount_fs -o allow_other -o "config=$T/empty.conf"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

assert_eq "$DAEMON_PID" "$(cat "$MNT/.control/pid")" ".control/pid"
assert_eq "$DAEMON_PID" "$(as_nobody cat "$MNT/.control/pid")" \
	".control/pid as read by nobody"
grep -q "mounted $BACKING on $MNT, pid $DAEMON_PID, " "$LOG" ||
	fail "the mount line does not name the pid: $(grep mounted "$LOG")"

# A second mount, with its own daemon.
mkdir "$T/b2" "$T/m2"
"$FUSE_IOSCHED" -f -o "module_dir=$MODULE_DIR,config=$T/empty.conf" \
	"$T/b2" "$T/m2" >"$T/log2" 2>&1 &
PID2=$!
cleanup_push "fusermount3 -u '$T/m2' 2>/dev/null; kill $PID2 2>/dev/null"
wait_for "the second mount" mountpoint -q "$T/m2"
wait_for "the second mount's line" grep -q 'mounted ' "$T/log2"
assert_eq "$PID2" "$(cat "$T/m2/.control/pid")" "the second .control/pid"

kill -HUP "$(cat "$MNT/.control/pid")"
wait_for "the reload" grep -q 'configuration reloaded' "$LOG"
kill -HUP "$(cat "$T/m2/.control/pid")"
wait_for "the second reload" grep -q 'configuration reloaded' "$T/log2"
assert_eq 1 "$(grep -c 'configuration reloaded' "$LOG")" "reloads of the first mount"
unmount_fs
fusermount3 -u "$T/m2" || fail "cannot unmount the second mount"
check_log
