# SPDX-License-Identifier: GPL-2.0-or-later
# fuse-iosched-stat reports a mount's rates: reads while reading, nothing
# while idle, a switch marked in its interval; it runs as another user
# and refuses a directory that is not a fuse-iosched mount.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require setpriv
STAT=${FUSE_IOSCHED_STAT:-$top_builddir/stat/fuse-iosched-stat}
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# col NAME LINE: the value of column NAME (per the header) in the report.
col() {
	awk -v c="$1" '$1 == "Mount" { for (i = 1; i <= NF; i++)
		if ($i == c) n = i; next } NF > 1 && n { print $n }' "$2" |
		tail -n 1
}

chmod 755 "$T"
mount_fs -o allow_other,scheduler=deadline
dd if=/dev/urandom of="$MNT/f" bs=1M count=4 status=none

# Not a mount: one clear line, status 1, nothing on stdout.
if "$STAT" -c 1 "$BACKING" >"$T/out" 2>"$T/err"; then
	fail "accepted a plain directory"
fi
grep -q "not a fuse-iosched mount" "$T/err" || fail "message: $(cat "$T/err")"
[ ! -s "$T/out" ] || fail "printed a report for a plain directory"
"$STAT" -c 1 "$T/nonexistent" 2>"$T/err" && fail "accepted a missing path"
grep -q "not a fuse-iosched mount" "$T/err" || fail "message: $(cat "$T/err")"
st=0; "$STAT" -i 0 "$MNT" 2>/dev/null || st=$?
assert_eq 2 "$st" "status of -i 0"

# Idle, as nobody: zero rates and utilisation.
as_nobody "$STAT" -i 0.5 -c 1 "$MNT" >"$T/idle" || fail "nobody: $(cat "$T/idle")"
cat "$T/idle"
assert_eq "$MNT" "$(awk 'NR == 2 { print $1 }' "$T/idle")" "mount column"
for c in r/s w/s rkB/s aqu-sz %util; do
	assert_eq 0.00 "$(col "$c" "$T/idle")" "idle $c"
done
assert_eq deadline "$(col scheduler "$T/idle")" "scheduler while idle"

# Reading with O_DIRECT (the page cache would hide repeats): r/s > 0.
(
	end=$(($(date +%s) + 20))
	while [ "$(date +%s)" -lt "$end" ] && [ ! -e "$T/stop" ]; do
		dd if="$MNT/f" of=/dev/null bs=64k iflag=direct status=none
	done
) &
reader=$!
cleanup_push "touch '$T/stop'; kill $reader 2>/dev/null"
sleep 0.3
"$STAT" -i 1 -c 2 "$MNT" >"$T/busy"
touch "$T/stop"
wait "$reader"
cat "$T/busy"
awk -v v="$(col r/s "$T/busy")" 'BEGIN { exit !(v > 0) }' ||
	fail "r/s not above 0 while reading"
awk -v v="$(col rkB/s "$T/busy")" 'BEGIN { exit !(v > 0) }' ||
	fail "rkB/s not above 0 while reading"
awk -v v="$(col %util "$T/busy")" 'BEGIN { exit !(v > 0 && v <= 100) }' ||
	fail "%util not in (0, 100] while reading"
assert_eq 0.00 "$(col w/s "$T/busy")" "w/s while only reading"

# A switch is marked in its interval, and only there.  The switch comes
# after the first report, and the reports go on until one follows the
# marked one: a sleep before the switch let a slow start of the tool on
# a loaded machine sample after it.
"$STAT" -i 1 "$MNT" >"$T/switch" 2>"$T/switch.err" &
statpid=$!
cleanup_push "kill $statpid 2>/dev/null"
scheds() { awk -v m="$MNT" '$1 == m { print $NF }' "$T/switch" | tr '\n' ' '; }
wait_for "a first report" grep -q "^$MNT " "$T/switch"
echo noop >"$MNT/.control/scheduler"
wait_for "a report after the switch's" eval 'scheds | grep -q "noop\* noop"'
kill "$statpid"
wait "$statpid" 2>/dev/null || true
cat "$T/switch"
[ ! -s "$T/switch.err" ] || fail "fuse-iosched-stat during a switch: $(cat "$T/switch.err")"
sched=$(scheds)
echo "$sched" | grep -Eqx '(deadline )+noop\* noop ' ||
	fail "scheduler column over the switch: $sched"

# The Mount column widens to the mount point: every line's fields end
# where the header's do (MNT is longer than 20 characters here).
[ ${#MNT} -gt 20 ] || fail "MNT is too short to test the column width"
awk 'NF > 1 { e = ""; p = 0; s = $0
	for (i = 1; i <= NF; i++) { j = index(s, $i); p += j + length($i) - 1
		s = substr(s, j + length($i)); if (i > 1 && i < NF) e = e " " p }
	if (h == "") h = e; else if (e != h) { print "misaligned: " $0; exit 1 } }' \
	"$T/busy" || fail "columns do not line up: $(cat "$T/busy")"

# A mount that goes away while watched: the message, status 1, and no
# header after the last whole report.
"$STAT" -i 0.2 "$MNT" >"$T/gone" 2>&1 &
statpid=$!
cleanup_push "kill $statpid 2>/dev/null"
wait_for "a first report" grep -qs "^$MNT " "$T/gone"
unmount_fs
st=0; timeout 30 tail --pid=$statpid -f /dev/null || st=$?
[ $st -eq 0 ] || fail "fuse-iosched-stat did not stop once unmounted"
wait $statpid && fail "status 0 after the mount went away"
cat "$T/gone"
tail -n 1 "$T/gone" | grep -q "not a fuse-iosched mount" ||
	fail "last line: $(tail -n 1 "$T/gone")"
tail -n 2 "$T/gone" | head -n 1 | grep -q '^Mount' &&
	fail "a header without its report before the message"
check_log
