# SPDX-License-Identifier: GPL-2.0-or-later
# .control/nr_requests shows the queue depth limit and takes a new one in
# [1, 65536]; anything else is EINVAL and changes nothing.  At a limit of
# 1, writers wait for the slot: the daemon holds more write requests than
# it has queued and in flight, and .control/stats counts the wait.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

N=$MNT/.control/nr_requests

mount_fs -o nr_requests=77
assert_eq 77 "$(cat "$N")" "nr_requests from -o nr_requests=77"
# Exactly one line, newline-terminated.
assert_eq "$(printf '77\n' | od -c)" "$(od -c <"$N")" "nr_requests bytes"

echo 32 >"$N" || fail "echo 32 failed"
assert_eq 32 "$(cat "$N")" "after echo 32"
printf 1 >"$N" || fail "printf 1 failed"
assert_eq 1 "$(cat "$N")" "after printf 1 (minimum, no newline)"
echo 65536 >"$N" || fail "echo 65536 (maximum) failed"
assert_eq 65536 "$(cat "$N")" "after echo 65536"
write_ctl "$N" '128 \t\n\n' || fail "trailing blanks were refused"
assert_eq 128 "$(cat "$N")" "after '128' with trailing blanks"

for bad in '0\n' '-1\n' 'abc\n' '99999999\n' '65537\n' '\n' '12abc\n' \
	'+12\n' '1 2\n' '0x10\n' '12\0\n' '18446744073709551617\n' \
	'\377\n'; do
	err=$(write_ctl "$N" "$bad") && fail "write of '$bad' succeeded"
	echo "$err" | grep -q 'Invalid argument' || fail "write of '$bad': '$err'"
	assert_eq 128 "$(cat "$N")" "nr_requests after writing '$bad'"
done
err=$( (echo -1 >"$N") 2>&1) && fail "echo -1 succeeded"
echo "$err" | grep -q 'Invalid argument' || fail "echo -1: '$err'"

# A small limit still lets I/O through.
echo 1 >"$N"
dd if=/dev/urandom of="$T/src" bs=64k count=32 status=none
cp "$T/src" "$MNT/f"
cmp "$T/src" "$MNT/f" || fail "data differs with nr_requests 1"
echo 128 >"$N"
unmount_fs
check_log

# Three writers, writes of 1 MB/s (the hdd model): with nr_requests 1 one
# write is queued or in flight, the others' submitters wait for the slot.
mount_fs -o "config=$EMPTY_CONF,nr_requests=1,disk_model=hdd,mb_per_s=1"
dd if=/dev/urandom of="$T/src" bs=128k count=4 status=none
pids=
for k in 1 2 3; do
	dd if="$T/src" of="$MNT/w$k" bs=128k status=none &
	pids="$pids $!"
done
# Waiting submitters: requests not completed, beyond queued + in flight.
waiting() {
	set -- $(awk '$1 == "write" { for (i = 2; i < NF; i += 2) v[$i] = $(i + 1)
		print v["requests"] - v["completed"], v["queued"] + v["in_flight"] }' 		"$MNT/.control/stats")
	[ "$2" -le 1 ] || fail "nr_requests 1, and $2 writes queued or in flight"
	[ "$1" -ge 2 ]
}
wait_for "a submitter waiting at nr_requests 1" waiting
for p in $pids; do wait "$p" || fail "a writer failed at nr_requests 1"; done
for k in 1 2 3; do
	cmp "$T/src" "$MNT/w$k" || fail "w$k differs at nr_requests 1"
done
# Waiting for the slot counts as waiting time: each write is 131 ms of
# transfer, so while one is served the others wait at least that long.
w=$(stat_of write wait_ms)
echo "write wait_ms at nr_requests 1: $w"
[ "$w" -ge 100 ] || fail "writes waited $w ms in all at nr_requests 1"
unmount_fs
check_log
