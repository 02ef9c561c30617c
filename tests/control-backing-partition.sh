#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# .control/backing_device with BACKING on a partition: the partition's
# sysfs directory has no queue/, so the rotational flag and the kernel's
# scheduler are the whole disk's.  The partition is added to a loop
# device with BLKPG (addpart), which needs no partition table support in
# the kernel.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require losetup addpart mkfs.ext4

truncate -s 64M "$T/img"
dev=$(losetup -P -f --show "$T/img") || skip "no loop device"
cleanup_push "losetup -d $dev"
disk=$(basename "$dev")
# Sectors 2048..67583 (32 MiB), as a partitioning tool would place it.
addpart "$dev" 1 2048 65536 || skip_env "cannot add a partition to $dev"
sys=/sys/block/$disk/${disk}p1
[ -f "$sys/dev" ] || fail "partition ${disk}p1 not in sysfs"
[ ! -d "$sys/queue" ] || fail "${disk}p1 has a queue/ of its own"
part=/dev/${disk}p1
if [ ! -b "$part" ]; then	# no devtmpfs node: make one
	part=$T/part
	mknod "$part" b "$(cut -d: -f1 "$sys/dev")" "$(cut -d: -f2 "$sys/dev")" ||
		skip_env "no device node for ${disk}p1"
fi
mkfs.ext4 -q -F "$part" || skip "mkfs.ext4 failed"
mount "$part" "$BACKING" || skip "cannot mount $part"
cleanup_push 'mountpoint -q "$MNT" && { fusermount3 -u "$MNT" || umount -l "$MNT"; sleep 0.2; }; umount "$BACKING" 2>/dev/null || umount -l "$BACKING"'

# The disk's scheduler, changed from its default so that the line
# cannot match a partition-blind default.
sched=/sys/block/$disk/queue/scheduler
old=$(sed 's/.*\[\(.*\)\].*/\1/' "$sched")
for s in $(tr -d '[]' <"$sched"); do
	[ "$s" != "$old" ] && { echo "$s" >"$sched" && break; }
done
cleanup_push "echo $old >$sched"

mount_fs
want="name ${disk}p1 rotational $(cat /sys/block/$disk/queue/rotational) scheduler $(sed "s/ *$//" "$sched")"
assert_eq "$want" "$(cat "$MNT/.control/backing_device")" "backing_device"
unmount_fs
check_log
