#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bfq shares the (modelled) disk by ionice weight: two sequential O_DIRECT
# readers, each keeping the disk busy, at -c2 -n0 (weight 80) and -c2 -n7
# (weight 10) read amounts ordered by their weights.  A loose bound, not a
# timing: the -n0 reader must read more than twice what the -n7 one does
# (8 times in theory; turn about would give 1), and the -n7 one must not
# be starved.  Progress is read from the readers' file positions
# (/proc/PID/fdinfo/0), so nothing interrupts them.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require ionice dd truncate
mount_fs -o scheduler=bfq,disk_model=hdd
grep -q '\[bfq\]' "$MNT/.control/scheduler" || fail "bfq is not active"
# On a loaded machine a reader's think time (its wait for a CPU between
# two requests) passes the default 8 ms, and bfq, as the kernel's, stops
# idling for a queue that thinks longer than slice_idle: the readers then
# take turns (seen under ThreadSanitizer at load 20: 1.25 to 1).  30 ms
# keeps the shares a matter of weights.
echo 30 >"$MNT/.control/iosched/slice_idle" || fail "cannot set slice_idle"

# Larger than the readers can get through (the hdd model charges for the
# size read, sparse or not).
truncate -s 4G "$BACKING/n0" "$BACKING/n7" || fail "cannot make the files"

# reader LEVEL: read file nLEVEL at ionice -c2 -nLEVEL; its pid in $!.
reader() {
	ionice -c2 -n"$1" dd if="$MNT/n$1" of=/dev/null bs=16k iflag=direct \
		status=none &
	cleanup_push "kill $! 2>/dev/null; wait $! 2>/dev/null"
}

# Bytes read so far by the dd of pid $1.
read_by() {
	awk '$1 == "pos:" { print $2 }' "/proc/$1/fdinfo/0" 2>/dev/null
}

reader 0
P0=$!
reader 7
P7=$!
if [ -n "${TEST_QUICK:-}" ]; then sleep 3; else sleep 6; fi
n0=$(read_by "$P0")
n7=$(read_by "$P7")
echo "-n0 read ${n0:-?} bytes, -n7 ${n7:-?} bytes"
[ -n "$n0" ] && [ -n "$n7" ] || fail "a reader is gone"
[ "$n7" -gt 0 ] || fail "the -n7 reader was starved"
[ "$n0" -gt $((2 * n7)) ] ||
	fail "-n0 read $n0 bytes, not more than twice -n7's $n7"
kill "$P0" "$P7"
wait "$P0" "$P7" 2>/dev/null || true

unmount_fs
check_log
