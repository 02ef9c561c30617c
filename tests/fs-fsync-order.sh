#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# fsync and flush wait for the file's writes that arrived before them:
# with asynchronous direct writes (fio, libaio) queued behind the hdd disk
# model at 1 MB/s, when fsync(2) or close(2) returns, the daemon has
# completed every write request it had received before the call; also
# while a scheduler switch drains the queue.  And fsync reaches the
# backing file system: the data is on the (loop) device when it returns.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require fio python3 mkfs.ext4 losetup
require_module "$MODULE_DIR" cfq

truncate -s 64M "$T/img"
mkfs.ext4 -q -F "$T/img" || skip_env "mkfs.ext4 failed"
mount -o loop "$T/img" "$BACKING" 2>"$T/mount.err" ||
	skip_env "cannot loop-mount an image: $(cat "$T/mount.err")"
# Before lib.sh's own unmount of MNT: the daemon must let go first.
cleanup_push "fusermount3 -u '$MNT' 2>/dev/null; sleep 0.2; umount '$BACKING' 2>/dev/null || umount -l '$BACKING'"

mount_fs -o "config=$EMPTY_CONF,disk_model=hdd,mb_per_s=1"
size=2M
[ -z "${TEST_QUICK:-}" ] || size=1M

# order OP MIN: once MIN writes are pending, OP of another descriptor of the file:
# fsync, close (a flush), or fsync while a switch to cfq drains the queue;
# when it returns, the writes received before it must be done.  It waits
# for the writes itself, so that the call follows at once.
#
# The descriptor is opened once the writes are pending, and must name the
# file fio writes: fio replaces a file smaller than --size (unlink, create)
# before it writes, and a descriptor opened earlier names the old, deleted
# file, whose fsync rightly waits for nothing.  That was the "fsync returned
# while 8 extending writes were queued" once seen here (reproduced: the
# descriptor's inode 12, the path's 13, 0 of 8 completed): the test's race,
# not the daemon's.  Writes that extend the file are waited for too, which
# the first rounds check; the kernel sends those one at a time (it cannot
# extend a file asynchronously: fuse_direct_IO waits for each, under the
# inode lock that fsync and flush take too), so only one is pending there,
# and it is the rounds within the file's size that test the daemon's own
# wait.  That wait is more than the kernel promises (ext4's fsync does not
# wait for direct writes still in flight, and POSIX leaves asynchronous
# writes to aio_fsync), but the daemon answers fsync and flush only after
# the writes it has received.
#
# The writes are pending for about a second only (1 MiB at 1 MB/s): the
# watcher must be running before fio starts, or on a loaded machine its
# start-up alone can outlast them.  It says so in $T/ready.
order() {
	python3 - "$MNT/f" "$MNT/.control" "$1" "$2" "$T/ready" <<'PY'
import os, sys, threading, time

def write_stats(*fields):
    for line in open(os.path.join(sys.argv[2], "stats")):
        w = line.split()
        if w and w[0] == "write":
            return [int(w[w.index(f) + 1]) for f in fields]

def write_stat(field):
    return write_stats(field)[0]

def switch():
    with open(os.path.join(sys.argv[2], "scheduler"), "w") as f:
        f.write("cfq\n")

op, pending = sys.argv[3], int(sys.argv[4])
write_stats("requests")
open(sys.argv[5], "w").close()
for i in range(3000):
    received, completed = write_stats("requests", "completed")
    if received - completed >= pending:
        break
    time.sleep(0.01)
else:
    sys.exit("no writes pending after 30 s")
fd = os.open(sys.argv[1], os.O_RDONLY)
if os.fstat(fd).st_ino != os.stat(sys.argv[1]).st_ino:
    sys.exit("the file was replaced after the writes began")
if op == "switch":
    t = threading.Thread(target=switch)
    t.start()
if op == "close":
    os.close(fd)
else:
    os.fsync(fd)
done = write_stat("completed")
if op == "switch":
    t.join()
print("%s: %d write requests received before, %d completed after" %
      (op, received, done))
if done < received:
    sys.exit("%s returned before earlier writes completed" % op)
PY
}

# First on an empty file that the writes extend (fio's --fallocate=none:
# no preallocation), then on a file of the full size.
for layout in extend sized; do
	for op in fsync close switch; do
		rm -f "$MNT/f"
		if [ $layout = extend ]; then
			: >"$MNT/f"; pending=1
		else
			truncate -s "$size" "$MNT/f"; pending=2
		fi
		rm -f "$T/ready"
		order "$op" $pending >"$T/order.out" 2>&1 &
		order_pid=$!
		wait_for "the watcher" test -e "$T/ready"
		(cd "$T" && fio --name=w --filename="$MNT/f" --rw=write \
			--bs=128k --size="$size" --ioengine=libaio --direct=1 \
			--iodepth=8 --fallocate=none --output="$T/fio.out") &
		fio_pid=$!
		st=0; wait "$order_pid" || st=$?
		echo "$layout: $(cat "$T/order.out")"
		[ "$st" -eq 0 ] || fail "$layout, $op: $(cat "$T/order.out")"
		wait "$fio_pid" || fail "fio failed: $(cat "$T/fio.out")"
	done
done
grep -q '\[cfq\]' "$MNT/.control/scheduler" || fail "the switch to cfq failed"

# The backing fsync: a marker written through the mount is on the device
# (the image file) once fsync returns, not only in the page cache.
python3 - "$MNT/m" "$T/img" <<'PY' || fail "fsync did not reach the device"
import os, sys
marker = os.urandom(32).hex().encode() * 2048
def on_device():
    return open(sys.argv[2], "rb").read().find(marker) >= 0
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.write(fd, marker)
if on_device():
    print("note: written back before fsync; the check proves nothing")
os.fsync(fd)
os.close(fd)
if not on_device():
    sys.exit("the data written is not on the device after fsync")
PY
unmount_fs
check_log
