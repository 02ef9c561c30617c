#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The bound on queued write copies (32 MiB) does not let a throttled
# group slow the others: a group limited to 1 MiB/s of writes sends 48
# direct writes of 1 MiB at once; the throttle holds them back, and their
# copies are counted apart (copy_parked, more than the bound) rather than
# against it, so that a writer in the root group then writes at once
# without waiting for room (copy_waits stays 0).  Once the limit is
# lifted, the held writes land and the counts go back to 0.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require fio
dio_backing 200
cg_setup slow
cg_limit "$CG/slow" wbps $MIB
mount_fs -o backing_io=direct

cg_start "$CG/slow" fio --name=slow --directory="$MNT" --rw=write --bs=1m \
	--ioengine=libaio --direct=1 --iodepth=48 --size=48m \
	--output="$T/slow.out"
SLOW_PID=$CG_PID
cleanup_push "kill $SLOW_PID 2>/dev/null"
# On failure, first let the held writes go, so that nothing waits on them.
cleanup_push "cg_limit '$CG/slow' wbps 0"
limit=$(stat_of memory copy_limit)
parked() {
	_p=$(stat_of memory copy_parked)
	[ -n "$_p" ] && [ "$_p" -gt "$limit" ]
}
wait_for "more than $limit bytes of the limited group's writes held back" \
	parked
dd if=/dev/urandom of="$T/free" bs=1M count=8 status=none
dd if="$T/free" of="$MNT/free" bs=1M oflag=direct status=none ||
	fail "the root group's writes failed"
cmp "$T/free" "$MNT/free" || fail "the root group's file differs"
echo "parked: $(stat_of memory copy_parked) bytes; copies: peak $(stat_of memory copy_peak), $(stat_of memory copy_waits) waits"
assert_eq 0 "$(stat_of memory copy_waits)" "writers that waited for room"
# Lifted, the limit lets the held writes go, and they land.
cg_limit "$CG/slow" wbps 0
wait $SLOW_PID || { cat "$T/slow.out"; fail "the limited group's fio failed"; }
assert_eq 50331648 "$(stat -c %s "$MNT/slow.0.0")" "the limited group's file size"
assert_eq 0 "$(stat_of memory copy_parked)" "copies held back once released"
assert_eq 0 "$(stat_of memory copy_bytes)" "copies once all written"
unmount_fs
check_log
