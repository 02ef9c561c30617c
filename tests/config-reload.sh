# SPDX-License-Identifier: GPL-2.0-or-later
# SIGHUP re-reads the configuration file: changes reach the running mount
# (scheduler through a normal switch, nr_requests, tunables); an invalid
# file is logged and ignored, and the mount keeps its settings.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require_module "$MODULE_DIR" deadline

mount_conf 'scheduler = deadline\nnr_requests = 64\n'
echo data >"$MNT/f"


cat >"$C" <<CONF
scheduler = noop
nr_requests = 32
deadline {
	read_expire = 100
}
CONF
kill -HUP "$DAEMON_PID"
wait_line "$MNT/.control/scheduler" '\[noop\]'
wait_line "$MNT/.control/nr_requests" '^32$'
wait_line "$LOG" "configuration reloaded from $C"
grep -q 'switched from deadline to noop' "$LOG" || fail "switch not logged"

# Back to deadline: the new instance starts with the file's tunable.
sed -i 's/^scheduler = noop/scheduler = deadline/' "$C"
kill -HUP "$DAEMON_PID"
wait_line "$MNT/.control/scheduler" '\[deadline\]'
if [ -d "$MNT/.control/iosched" ]; then
	wait_line "$MNT/.control/iosched/read_expire" '^100$'
	# A tunable changed in the file reaches the active instance.
	sed -i 's/read_expire = 100/read_expire = 150/' "$C"
	kill -HUP "$DAEMON_PID"
	wait_line "$MNT/.control/iosched/read_expire" '^150$'
fi

# An invalid file: logged, ignored, nothing changes.
n=$(grep -c 'configuration reloaded' "$LOG")
printf 'scheduler = noop\nnr_requests = 8\nbogus = 1\n' >"$C"
kill -HUP "$DAEMON_PID"
wait_line "$LOG" "reload failed.*$C:3: 'bogus'"
kill -0 "$DAEMON_PID" || fail "daemon died on an invalid file"
grep -q '\[deadline\]' "$MNT/.control/scheduler" || fail "scheduler changed"
assert_eq 32 "$(cat "$MNT/.control/nr_requests")" "nr_requests after a bad reload"
assert_eq "$n" "$(grep -c 'configuration reloaded' "$LOG")" "reload count"
assert_eq data "$(cat "$MNT/f")" "data after reloads"

unmount_fs
check_log 'reload failed'
exit 0
