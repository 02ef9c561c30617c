#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A backing filesystem that refuses O_DIRECT (ramfs): under
# backing_io=direct files fall back to buffered I/O, O_DIRECT and buffered
# applications see no error and their data, and the daemon says so once
# per mount, not once per open.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3
mount -t ramfs ramfs "$BACKING" || skip "cannot mount ramfs"
cleanup_push 'mountpoint -q "$MNT" && { fusermount3 -u "$MNT" || umount -l "$MNT"; sleep 0.2; }; umount "$BACKING" 2>/dev/null || umount -l "$BACKING"'
dd if=/dev/zero of="$BACKING/probe" bs=4096 count=1 oflag=direct \
	status=none 2>/dev/null && skip "this ramfs takes O_DIRECT"

mount_fs -o backing_io=direct
assert_eq "name none" "$(cut -d' ' -f1-2 "$MNT/.control/backing_device")" \
	"backing_device on ramfs"
head -c 300000 /dev/urandom >"$T/r"
for i in 1 2 3; do
	dd if="$T/r" of="$MNT/f$i" bs=1000 oflag=direct status=none ||
		fail "unaligned O_DIRECT write $i"
	cmp "$T/r" "$BACKING/f$i" || fail "data of f$i"
	dd if="$MNT/f$i" of="$T/back" bs=777 iflag=direct status=none ||
		fail "unaligned O_DIRECT read $i"
	cmp "$T/r" "$T/back" || fail "data read back from f$i"
	cat "$MNT/f$i" | cmp - "$T/r" || fail "buffered read of f$i"
done
unmount_fs
assert_eq 1 "$(grep -c 'refuses O_DIRECT' "$LOG")" "fallback warnings"
check_log
