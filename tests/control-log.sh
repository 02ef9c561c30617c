# SPDX-License-Identifier: GPL-2.0-or-later
# .control/log, the mount's own log: its lines are dated and carry their
# level, the mount's among them; it is the owner's only (another user of
# an allow_other mount gets EACCES); a refused write to a control file
# leaves one line there naming the file, the value and the reason; the
# ring keeps the newest whole lines, several hundred, within 64 KiB, however
# much is logged.  -o log_file gets the same lines with the daemon's pid,
# and SIGHUP (to .control/pid) reopens it after a logrotate-style move.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require setpriv

# nobody must be able to walk to the mountpoint.
chmod 755 "$T"
mount_fs -o allow_other -o "log_file=$T/file.log"
C=$MNT/.control
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
stamp='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}[+-][0-9]{4}'

cat "$C/log" >"$T/log1" || fail "root cannot read .control/log"
grep -Eq "^$stamp info: mounted $BACKING on $MNT, pid $DAEMON_PID, " "$T/log1" ||
	fail "no dated mount line: $(cat "$T/log1")"
bad=$(grep -Evc "^$stamp (emerg|alert|crit|error|warning|notice|info|debug): " "$T/log1" || true)
assert_eq 0 "$bad" "undated lines in .control/log"
assert_eq -r-------- "$(stat -c %A "$C/log")" "mode of .control/log"

# Another user: EACCES, and nothing of it.
if as_nobody cat "$C/log" >"$T/out" 2>"$T/err"; then
	fail "nobody read .control/log"
fi
grep -q 'Permission denied' "$T/err" || fail "nobody: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "nobody got part of .control/log"

# Each refused write: one line, with the file, the value and why.
refused() { # FILE VALUE REASON
	before=$(wc -l <"$C/log")
	if echo "$2" >"$C/$1" 2>/dev/null; then fail "$1: '$2' accepted"; fi
	tail -n +"$((before + 1))" "$C/log" >"$T/new"
	assert_eq 1 "$(wc -l <"$T/new")" "lines logged for '$2' > $1: $(cat "$T/new")"
	grep -Eq "^$stamp warning: \.control/$1: refused \"$2\": $3\$" "$T/new" ||
		fail "$1: $(cat "$T/new")"
}
refused scheduler nosuch 'no such scheduler'
refused scheduler 'Bad Name' 'not a scheduler name .*'
refused nr_requests abc 'not a number from 1 to [0-9]+'
refused iosched/read_expire 99999999999 'out of range \(0 to [0-9]+\)'

# A flood of lines (not rate limited: each is a change made): the newest
# whole lines stay, several hundred of them, within 64 KiB.
for i in $(seq 1000 2200); do echo "$i" >"$C/iosched/read_expire"; done
cat "$C/log" >"$T/log2"
size=$(wc -c <"$T/log2")
lines=$(wc -l <"$T/log2")
echo "after the flood: $size bytes, $lines lines"
[ "$size" -le 65536 ] || fail ".control/log holds $size bytes"
[ "$size" -gt 60000 ] || fail ".control/log holds only $size bytes"
[ "$lines" -ge 300 ] || fail ".control/log holds only $lines lines"
head -n 1 "$T/log2" | grep -Eq "^$stamp " || fail "first line cut: $(head -n 1 "$T/log2")"
tail -n 1 "$T/log2" | grep -q "read_expire set to 2200$" ||
	fail "last line: $(tail -n 1 "$T/log2")"
grep -q 'mounted ' "$T/log2" && fail "the oldest lines did not go"

# The log file: the same lines, with the pid; the owner's only.
assert_eq -rw------- "$(stat -c %A "$T/file.log")" "mode of the log file"
grep -Eq "^$stamp fuse-iosched\[$DAEMON_PID\]: info: mounted $BACKING on $MNT, " \
	"$T/file.log" || fail "log file: $(head -n 5 "$T/file.log")"
grep -q 'refused "nosuch": no such scheduler$' "$T/file.log" ||
	fail "the refused write is not in the log file"
# logrotate: move it away, SIGHUP; the daemon writes to a new file.
mv "$T/file.log" "$T/file.log.1"
kill -HUP "$(cat "$C/pid")"
wait_for "a new log file" grep -q 'configuration reloaded' "$T/file.log"
grep -q 'configuration reloaded' "$T/file.log.1" &&
	fail "the reload went to the moved file"
unmount_fs
grep -q "unmounting $MNT, exit status 0" "$T/file.log" ||
	fail "no exit line in the new log file"
check_log 'refused|out of range|not a number|scheduler name'
