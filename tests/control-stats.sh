# SPDX-License-Identifier: GPL-2.0-or-later
# .control/stats is read-only and its counters follow the I/O: requests,
# sectors and completions grow with reads and writes, switches count
# scheduler changes, and nothing stays queued or in flight when idle.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

ST=$MNT/.control/stats

mount_fs
cat "$ST"
for d in read write; do
	for f in requests merges dispatched completed sectors errors \
		in_flight queued wait_ms service_ms; do
		v=$(stat_of $d $f)
		case $v in
		''|*[!0-9]*) fail "$d $f: not a number: '$v'" ;;
		esac
	done
done
s0=$(switches)
case $s0 in ''|*[!0-9]*) fail "switches: not a number: '$s0'" ;; esac

w0=$(stat_of write requests)
ws0=$(stat_of write sectors)
dd if=/dev/urandom of="$MNT/f" bs=64k count=16 conv=fsync status=none
w1=$(stat_of write requests)
ws1=$(stat_of write sectors)
[ "$w1" -gt "$w0" ] || fail "write requests did not grow: $w0 -> $w1"
[ "$((ws1 - ws0))" -ge 2048 ] || fail "write sectors grew by $((ws1 - ws0)), want >= 2048"
assert_eq "$(stat_of write requests)" "$(stat_of write completed)" "write completed"

# Reads through the page cache may not reach us; O_DIRECT ones do.
r0=$(stat_of read requests)
rs0=$(stat_of read sectors)
dd if="$MNT/f" of=/dev/null bs=64k iflag=direct status=none
r1=$(stat_of read requests)
rs1=$(stat_of read sectors)
[ "$r1" -gt "$r0" ] || fail "read requests did not grow: $r0 -> $r1"
[ "$((rs1 - rs0))" -ge 2048 ] || fail "read sectors grew by $((rs1 - rs0)), want >= 2048"

for d in read write; do
	assert_eq "$(stat_of $d requests)" "$(stat_of $d completed)" "$d completed"
	assert_eq 0 "$(stat_of $d in_flight)" "$d in_flight when idle"
	assert_eq 0 "$(stat_of $d queued)" "$d queued when idle"
	assert_eq 0 "$(stat_of $d errors)" "$d errors"
done

# Switches: two changes count two; writing the active name counts none.
echo noop >"$MNT/.control/scheduler"
echo deadline >"$MNT/.control/scheduler"
echo deadline >"$MNT/.control/scheduler"
assert_eq $((s0 + 2)) "$(switches)" "switches after noop, deadline, deadline"

# Read-only, even for root.
err=$( (echo 0 >"$ST") 2>&1) && fail "writing stats succeeded"
echo "$err" | grep -Eq 'Permission denied|Operation not permitted' ||
	fail "writing stats: '$err'"
dd if=/dev/null of="$ST" conv=notrunc status=none 2>/dev/null &&
	fail "opening stats for writing succeeded"
assert_eq "$(stat -c %a "$ST")" 444 "mode of stats"
unmount_fs
check_log
