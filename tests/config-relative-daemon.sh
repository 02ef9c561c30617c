# SPDX-License-Identifier: GPL-2.0-or-later
# A daemon started in its directory with relative paths (-o module_dir=,
# -o config=, MOUNTPOINT) keeps using them after it detaches and moves to
# /: a module put in module_dir later is loaded by a switch, SIGHUP
# re-reads the file, and SIGTERM unmounts.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require pgrep
for m in deadline cfq; do
	[ -e "$MODULE_DIR/$m.so" ] || skip "the $m module is not built"
done

mkdir "$T/mods" "$T/etc"
cp "$MODULE_DIR/deadline.so" "$T/mods/"
printf 'scheduler = deadline\nnr_requests = 64\n' >"$T/etc/rel.conf"
echo hello >"$BACKING/f"
st=0
(cd "$T" && timeout 20 "$FUSE_IOSCHED" -o module_dir=mods,config=etc/rel.conf \
	"$BACKING" mnt </dev/null >"$LOG" 2>&1) || st=$?
assert_eq 0 "$st" "exit status of the mount command"
mountpoint -q "$MNT" || fail "not mounted"
# BACKING is absolute on the command line, so it names our daemon alone.
DAEMON_PID=$(pgrep -f -- "$BACKING" || true)
[ -n "$DAEMON_PID" ] || fail "no daemon found for $BACKING"
[ "$(echo "$DAEMON_PID" | wc -l)" -eq 1 ] || fail "several daemons: $DAEMON_PID"
assert_eq / "$(readlink "/proc/$DAEMON_PID/cwd")" "the daemon's directory"
assert_eq hello "$(cat "$MNT/f")" "content through the mount"
grep -q '\[deadline\]' "$MNT/.control/scheduler" ||
	fail "deadline from mods not active: $(cat "$MNT/.control/scheduler")"

# Not loaded at start, so a switch loads it from module_dir now.
cp "$MODULE_DIR/cfq.so" "$T/mods/"
echo cfq >"$MNT/.control/scheduler" || fail "cannot switch to cfq from mods"
grep -q '\[cfq\]' "$MNT/.control/scheduler" || fail "cfq not active"

# SIGHUP re-reads etc/rel.conf, not /etc/rel.conf.
printf 'scheduler = cfq\nnr_requests = 32\n' >"$T/etc/rel.conf"
kill -HUP "$DAEMON_PID"
wait_line "$MNT/.control/nr_requests" '^32$'

# SIGTERM: the daemon unmounts "mnt", which must mean $MNT.
kill -TERM "$DAEMON_PID"
wait_daemon_exit SIGTERM
DAEMON_PID=
# /proc/mounts, not mountpoint(1): a mount whose daemon is gone fails
# stat with ENOTCONN, which mountpoint takes for "not a mount point".
! grep -q " $MNT fuse" /proc/mounts || fail "still mounted after SIGTERM"
exit 0
