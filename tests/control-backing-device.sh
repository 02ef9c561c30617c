#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# .control/backing_device names the block device under BACKING (here a
# loop device), its rotational flag and the kernel's scheduler for it,
# from sysfs; on tmpfs it says there is none.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require losetup mkfs.ext4

truncate -s 64M "$T/img"
dev=$(losetup -f --show "$T/img") || skip "no loop device"
cleanup_push "losetup -d $dev"
mkfs.ext4 -q -F "$dev" || skip "mkfs.ext4 failed"
mount "$dev" "$BACKING" || skip "cannot mount $dev"
cleanup_push 'mountpoint -q "$MNT" && { fusermount3 -u "$MNT" || umount -l "$MNT"; sleep 0.2; }; umount "$BACKING" 2>/dev/null || umount -l "$BACKING"'

disk=$(basename "$dev")
mount_fs
want="name $disk rotational $(cat /sys/block/$disk/queue/rotational) scheduler $(sed "s/ *$//" /sys/block/$disk/queue/scheduler)"
assert_eq "$want" "$(cat "$MNT/.control/backing_device")" "backing_device"
echo "x" >"$MNT/.control/backing_device" 2>/dev/null && fail "backing_device is writable"
unmount_fs

# No block device: tmpfs.
umount "$BACKING"
mount -t tmpfs tmpfs "$BACKING" || skip "cannot mount tmpfs"
mount_fs
case $(cat "$MNT/.control/backing_device") in
"name none dev "*) ;;
*) fail "backing_device on tmpfs: $(cat "$MNT/.control/backing_device")" ;;
esac
unmount_fs
check_log
