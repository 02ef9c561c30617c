#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A full backing file system (a 32 MiB ext4 image on a loop device):
# writes fail with ENOSPC to the application, reads and metadata keep
# working, and once a file is deleted writes succeed again.  Both with
# and without the writeback cache: with it, the error reaches fsync and
# close, and the size the mount shows is the backing file's.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require mkfs.ext4 losetup python3

truncate -s 32M "$T/img"
mkfs.ext4 -q -F -m 0 "$T/img" || skip_env "mkfs.ext4 failed"
mount -o loop "$T/img" "$BACKING" 2>"$T/mount.err" ||
	skip_env "cannot loop-mount an image: $(cat "$T/mount.err")"
# Runs before lib.sh's own unmount of MNT: the daemon must go first, or
# the backing file system is busy.
cleanup_push "fusermount3 -u '$MNT' 2>/dev/null; sleep 0.2; umount '$BACKING' 2>/dev/null || umount -l '$BACKING'"

errors() { awk '/^write/ { for (i = 1; i < NF; i++) if ($i == "errors") print $(i + 1) }' "$MNT/.control/stats"; }

for mode in writeback_cache=no writeback_cache=yes; do
echo "=== $mode"
mount_fs -o "$mode"
dd if=/dev/urandom of="$T/keep" bs=64k count=8 status=none
cp "$T/keep" "$MNT/keep"
mkdir "$MNT/dir"
echo hello >"$MNT/dir/small"

# Fill it.
e0=$(stat_of write errors)
out=$(dd if=/dev/zero of="$MNT/fill" bs=1M count=64 conv=fsync 2>&1) &&
	fail "64 MiB fitted in a 32 MiB file system"
echo "$out" | grep -q 'No space left on device' || fail "filling: '$out'"
avail=$(df --output=avail -B1 "$BACKING" | tail -n 1)
echo "full: $avail bytes left, fill file $(stat -c %s "$MNT/fill") bytes"
# Writeback the failed fsync left behind may still be going on (each
# failed write extends the backing file to its end): the sizes must agree
# once it is over, within a bounded wait.
i=0
until sync "$MNT/fill" 2>/dev/null || :
	[ "$(stat -c %s "$BACKING/fill")" = "$(stat -c %s "$MNT/fill")" ]; do
	i=$((i + 1))
	[ $i -lt 100 ] || assert_eq "$(stat -c %s "$BACKING/fill")" \
		"$(stat -c %s "$MNT/fill")" "size of the fill file on the mount"
	sleep 0.1
done
[ "$(errors)" -gt 0 ] || fail "stats count no write errors"

# More writes fail the same way, for small and O_DIRECT writes too.
python3 - "$MNT" <<'PY' || fail "writes on a full file system"
import errno, mmap, os, sys
m = sys.argv[1]
def enospc(what, f):
    try:
        f()
    except OSError as e:
        if e.errno != errno.ENOSPC:
            sys.exit("%s: %s, not ENOSPC" % (what, e))
        return
    sys.exit("%s succeeded on a full file system" % what)
def write_more(flags, size):
    fd = os.open(os.path.join(m, "more"), os.O_WRONLY | os.O_CREAT | flags)
    try:
        buf = mmap.mmap(-1, size)	# page-aligned, for O_DIRECT
        buf.write(b"x" * size)
        # Keep writing: the first ones may still find a free block.
        for i in range(4096):
            os.pwrite(fd, buf, i * size)
        os.fsync(fd)
    finally:
        os.close(fd)
enospc("buffered 4 KiB writes", lambda: write_more(0, 4096))
enospc("O_DIRECT 64 KiB writes", lambda: write_more(os.O_DIRECT, 65536))
PY

# The failed writes show in .control/stats, and no read failed.
e1=$(stat_of write errors)
echo "write errors: $e0 -> $e1"
[ "$e1" -gt "$e0" ] || fail "write errors did not grow: $e0 -> $e1"
assert_eq 0 "$(stat_of read errors)" "read errors"

# Reads and metadata still work.
cmp "$T/keep" "$MNT/keep" || fail "reading a file on a full file system"
assert_eq hello "$(cat "$MNT/dir/small")" "cat on a full file system"
ls -la "$MNT" "$MNT/dir" >/dev/null || fail "ls on a full file system"
stat "$MNT/keep" >/dev/null || fail "stat on a full file system"
head -c 4096 "$MNT/fill" | cmp -s - <(head -c 4096 /dev/zero) ||
	fail "reading the fill file"
mv "$MNT/dir/small" "$MNT/dir/small2" || fail "rename on a full file system"
chmod 600 "$MNT/keep" || fail "chmod on a full file system"
touch -d 2001-01-01 "$MNT/keep" || fail "utimes on a full file system"

# Free space; writes work again (unlinked blocks are freed once the daemon
# lets go of the inode: allow the kernel's forget a moment).
rm "$MNT/fill" "$MNT/more"
wait_for "a write to succeed after freeing space" dd if=/dev/urandom \
	of="$MNT/after" bs=64k count=64 conv=fsync status=none 2>/dev/null
cmp "$MNT/after" "$BACKING/after" || fail "data written after recovery differs"
cmp "$T/keep" "$MNT/keep" || fail "keep changed"
compare_trees
unmount_fs
rm -rf "${BACKING:?}"/*
done
# ENOSPC is the point of the test: the daemon may log it.
check_log 'No space left on device'
