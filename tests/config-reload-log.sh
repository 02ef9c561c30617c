# SPDX-License-Identifier: GPL-2.0-or-later
# A log level changed in the file takes effect on SIGHUP: debug messages
# (one per dispatched request) appear after a change to debug, and info
# messages vanish after a change to warning.
. "$top_srcdir/tests/lib.sh"
require_root

C=$T/reload.conf
printf 'log = info\n' >"$C"
for f in a b c; do head -c 65536 /dev/urandom >"$BACKING/$f"; done
mount_fs -o "config=$C,scheduler=noop"
# read FILE: through the elevator (a file not read before: no page cache).
read_through() { cat "$MNT/$1" >/dev/null || fail "cannot read $1"; }

read_through a
grep -q 'debug: dispatch' "$LOG" && fail "debug messages at level info"

printf 'log = debug\n' >"$C"
reload_fs
read_through b
grep -q 'debug: dispatch R' "$LOG" || fail "no debug messages after log = debug"

# At warning, the end-of-reload line (info) is dropped: wait for a
# warning the same reload logs after the level changed (seek_ms comes
# after log in the settings table).
printf 'log = warning\nseek_ms = 9\n' >"$C"
reload_fs 'seek_ms 8 -> 9: it takes effect at the next mount'
n=$(grep -c 'debug: dispatch\|info: ' "$LOG")
read_through c
reload_fs 'seek_ms 8 -> 9: it takes effect at the next mount'
assert_eq "$n" "$(grep -c 'debug: dispatch\|info: ' "$LOG")" \
	"debug and info lines after log = warning"
unmount_fs
check_log
exit 0
