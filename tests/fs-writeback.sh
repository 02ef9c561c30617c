#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# With -o writeback_cache the kernel batches writes and handles O_APPEND
# itself; write-only opens must still allow its read-modify-write.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
mount_fs -o writeback_cache

echo a >>"$MNT/app"
echo b >>"$MNT/app"
assert_eq "a
b" "$(cat "$BACKING/app")" "O_APPEND with writeback cache"

head -c 1000000 /dev/urandom >"$T/r"
cp "$T/r" "$MNT/r"
sync -f "$MNT/r"
cmp "$T/r" "$BACKING/r" || fail "data after syncfs"

python3 - "$MNT/r" "$BACKING/r" <<'PY' || fail "partial write through O_WRONLY"
import os, sys
m, b = sys.argv[1], sys.argv[2]
fd = os.open(m, os.O_WRONLY)
os.pwrite(fd, b"xyz", 4097)     # a partial page: the kernel reads the rest
os.fsync(fd)
os.close(fd)
want = bytearray(open(b, "rb").read())
assert want[4097:4100] == b"xyz"
PY
dd if="$MNT/r" bs=1 skip=4097 count=3 status=none >"$T/x"
assert_eq xyz "$(cat "$T/x")" "read back"
cmp -n 4097 "$T/r" "$BACKING/r" || fail "bytes before the partial write"

compare_trees
unmount_fs
check_log
