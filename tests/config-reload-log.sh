# SPDX-License-Identifier: GPL-2.0-or-later
# A log level changed in the file takes effect on SIGHUP: debug messages
# (one per dispatched request) appear after a change to debug, and info
# messages vanish after a change to warning.  Each tunable change is
# logged old -> new, of a scheduler that is not active (for its new
# instances) as of the active one, however many there are.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

for f in a b c; do head -c 65536 /dev/urandom >"$BACKING/$f"; done
mount_conf 'log = info\n' scheduler=noop
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

# deadline is not active: its changed tunable is logged all the same.
printf 'log = info\ndeadline {\n\tread_expire = 250\n}\n' >"$C"
reload_fs
grep -q 'configuration reload: deadline read_expire 500 -> 250 (for new instances)$' \
	"$LOG" || fail "no log line for an inactive scheduler's tunable"

# Active, with six changes: one line each.
echo deadline >"$MNT/.control/scheduler"
printf '%s\n' 'deadline {' 'read_expire = 300' 'write_expire = 3000' \
	'writes_starved = 3' 'front_merges = 0' 'fifo_batch = 8' \
	'prio_aging_expire = 9000' '}' >"$C"
: >"$LOG"
reload_fs
for c in 'read_expire 250 -> 300' 'write_expire 5000 -> 3000' \
	'writes_starved 2 -> 3' 'front_merges 1 -> 0' 'fifo_batch 16 -> 8' \
	'prio_aging_expire 10000 -> 9000'; do
	grep -q "configuration reload: deadline $c\$" "$LOG" ||
		fail "no log line '$c' for the active scheduler: $(cat "$LOG")"
done
assert_eq 3000 "$(cat "$MNT/.control/iosched/write_expire")" \
	"write_expire of the active deadline"
unmount_fs
check_log
exit 0
