# SPDX-License-Identifier: GPL-2.0-or-later
# Log flooding: 200 identical refused writes give a burst of lines (10 in
# 5 s) and, with the next one after the interval, a line counting the
# rest: lines logged plus messages counted equal the writes made.  A 100
# kB value with raw bytes, written to .control/scheduler or put in the
# configuration file for a SIGHUP, is logged short and escaped (\xNN), and
# so is a raw name that libconfuse quotes in its own message.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

: >"$T/c.conf"
mount_fs -o "config=$T/c.conf"
C=$MNT/.control

printed() { grep -c 'refused "nosuch"' "$LOG" || true; }
suppressed() {
	sed -n 's/.*: \([0-9]*\) similar messages suppressed$/\1/p' "$LOG" |
		awk '{ s += $1 } END { print s + 0 }'
}
n=0
start=$(date +%s)
while [ $n -lt 200 ]; do
	echo nosuch >"$C/scheduler" 2>/dev/null && fail "nosuch accepted"
	n=$((n + 1))
done
# Ten lines an interval: as many intervals as the loop took, plus one.
bound=$((10 * (($(date +%s) - start) / 5 + 2)))
lines=$(printed)
echo "200 refused writes: $lines lines (at most $bound)"
[ "$lines" -ge 10 ] && [ "$lines" -le "$bound" ] ||
	fail "$lines lines for 200 refused writes"
# The count comes with the first message after the interval.
i=0
until grep -q 'control_write_refused: [0-9]* similar messages suppressed$' "$LOG" &&
	[ "$(($(printed) + $(suppressed)))" -eq $n ]; do
	i=$((i + 1))
	[ $i -lt 120 ] || fail "no count: $(printed) lines, $(suppressed) counted, $n writes"
	sleep 0.5
	echo nosuch >"$C/scheduler" 2>/dev/null && fail "nosuch accepted"
	n=$((n + 1))
done
echo "$n writes: $(printed) lines, $(suppressed) counted"

# A long value with raw bytes, written to a control file: refused, and
# logged short and escaped.  (The burst above is spent: wait for the
# next interval's first line.)
{ printf '\001\002\377'; head -c 100000 /dev/zero | tr '\0' A; } >"$T/garbage"
long_line() { grep -a "$1" "$2" | tail -n 1; }
i=0
until long_line 'refused "\\x01' "$LOG" | grep -q .; do
	i=$((i + 1))
	[ $i -lt 120 ] || fail "the long write was not logged"
	cat "$T/garbage" >"$C/scheduler" 2>/dev/null && fail "garbage accepted"
	sleep 0.5
done
line=$(long_line 'refused "\\x01' "$LOG")
echo "$line"
[ ${#line} -lt 300 ] || fail "a line of ${#line} characters"
case $line in
*'refused "\x01\x02\xffAAAA'*'...(100003 bytes)": 100003 bytes: at most 4096 at once') ;;
*) fail "the long value as logged: $line" ;;
esac
long_line 'refused "\\x01' "$C/log" | grep -q '(100003 bytes)' ||
	fail "not in .control/log"

# The same in the configuration file: the reload fails, its line is short.
{ printf 'scheduler = "\001'; head -c 100000 /dev/zero | tr '\0' A; printf '"\n'; } >"$T/c.conf"
reload_fs
line=$(long_line 'configuration reload failed' "$LOG")
echo "$line"
[ ${#line} -lt 400 ] || fail "a reload line of ${#line} characters"
case $line in
*'scheduler=\x01AAAA'*'...(100001 bytes): not a scheduler name'*) ;;
*) fail "the reload's value as logged: $line" ;;
esac
# A name libconfuse quotes in its own message: escaped as well.
printf '\001\002x = 5\n' >"$T/c.conf"
reload_fs
long_line 'configuration reload failed' "$LOG" |
	grep -qF "c.conf:1: '\\x01\\x02x' is neither a setting nor a scheduler" ||
	fail "the unknown name as logged: $(long_line 'reload failed' "$LOG")"
# Nothing raw reached the log.
if LC_ALL=C grep -a '[^[:print:][:space:]]' "$LOG" >&2; then
	fail "raw bytes in the log"
fi
unmount_fs
check_log 'refused|reload failed'
