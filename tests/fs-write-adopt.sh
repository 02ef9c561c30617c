#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A direct write onto an idle queue is performed from the receive buffer
# it arrived in (daemon/loop.c puts its data on a page), not copied; with
# -o clone_fd, where libfuse's loop and buffers serve, it is copied.  A
# queued write keeps that buffer instead of a copy, and its session
# thread receives into a new one.  Another user (allow_other) runs 48 writers, each one 1 MiB O_DIRECT write of its
# own byte value to its own block, onto a backlog (hdd model), and all are
# killed while their writes are queued (the kernel sends FUSE_INTERRUPTs):
# every block must then hold its own writer's bytes or nothing, never
# another request's.  Then 256 KiB writes, 256 in flight, with a buffered
# backing descriptor: fio verifies them, and since a kept buffer counts
# whole (1 MiB and a little) against the 32 MiB bound on queued copies, at
# most about 32 of them may be queued at any time.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require fio setpriv python3

adopted() { [ "$(stat_of memory adopted)" -gt 0 ]; }
idle() { [ "$(held write)" -eq 0 ]; }

chmod 755 "$T"
dio_backing 256
mkdir -m 0777 "$BACKING/u"
# Onto an idle queue, a direct write is performed from the buffer it
# arrived in, whose data lies on a page: neither copied nor kept.
mount_fs -o backing_io=direct,scheduler=noop
dd if=/dev/urandom of="$T/d" bs=1M count=4 status=none
dd if="$T/d" of="$MNT/d" bs=1M oflag=direct status=none
assert_eq 0 "$(stat_of memory copy_peak)" "bytes copied for direct writes onto an idle queue"
assert_eq 0 "$(stat_of memory adopted)" "buffers kept for writes onto an idle queue"
cmp "$T/d" "$BACKING/d" || fail "lent direct writes differ in the backing file"
unmount_fs
# -o clone_fd: libfuse's own loop and buffers, so direct writes are copied.
rm -f "$BACKING/d"
mount_fs -o backing_io=direct,scheduler=noop,clone_fd
dd if="$T/d" of="$MNT/d" bs=1M oflag=direct status=none
[ "$(stat_of memory copy_peak)" -gt 0 ] ||
	fail "direct writes not copied with clone_fd (libfuse's unaligned buffers)"
cmp "$T/d" "$BACKING/d" || fail "direct writes differ in the backing file (clone_fd)"
unmount_fs

mount_fs -o allow_other,backing_io=direct,disk_model=hdd,mb_per_s=50,scheduler=deadline
n=48
python3 -c '
import sys
for i in range(int(sys.argv[2])):
    open("%s/p%d" % (sys.argv[1], i), "wb").write(bytes([i + 1]) * 1048576)
' "$T" "$n"
pids=
for i in $(seq 0 $((n - 1))); do
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		dd if="$T/p$i" of="$MNT/u/f" bs=1M count=1 seek="$i" \
		oflag=direct conv=notrunc status=none 2>/dev/null &
	pids="$pids $!"
done
wait_for "a write queued in its receive buffer" adopted
kill -9 $pids 2>/dev/null
for p in $pids; do wait "$p" 2>/dev/null || true; done
wait_for "the queue to drain: $(held write) writes held" idle
python3 -c '
import sys
data = open(sys.argv[1], "rb").read()
for i in range(len(data) // 1048576 + 1):
    b = data[i * 1048576:(i + 1) * 1048576]
    if b and b != bytes([i + 1]) * len(b) and b != bytes(len(b)):
        sys.exit("block %d holds %r..." % (i, sorted(set(b))[:4]))
' "$BACKING/u/f" || fail "a killed writer's block holds other data"
echo "adopted: $(stat_of memory adopted), file $(stat -c %s "$BACKING/u/f") bytes"
unmount_fs

mount_fs -o allow_other,backing_io=buffered,disk_model=hdd,mb_per_s=100,scheduler=noop,max_background=256
peak=0
held_peak() {
	h=$(held write)
	[ "$h" -le "$peak" ] || peak=$h
}
# Bounded: a wrong count of the bound could park every session thread.
timeout -k 10 120 setpriv --reuid=65534 --regid=65534 --clear-groups \
	fio --name=adopt --directory="$MNT/u" --rw=randwrite --bs=256k \
	--ioengine=libaio --direct=1 --iodepth=64 --numjobs=4 \
	--size="${TEST_QUICK:+4}${TEST_QUICK:-16}m" --verify=crc32c \
	--do_verify=1 --verify_fatal=1 >"$T/fio.out" 2>&1 &
fio=$!
while kill -0 "$fio" 2>/dev/null; do
	held_peak
	sleep 0.05
done
wait "$fio" || { cat "$T/fio.out"; fail "fio failed or found bad data"; }
adopted || fail "no 256 KiB write kept its receive buffer"
echo "writes queued at most: $peak; copies: peak $(stat_of memory copy_peak), $(stat_of memory copy_waits) waits"
# The bound's 32 buffers, and a few more being performed.
[ "$peak" -le 40 ] ||
	fail "$peak writes queued: kept buffers are not counted whole"
assert_eq 0 "$(stat_of memory copy_bytes)" "bytes held for writes once idle"
unmount_fs
check_log
