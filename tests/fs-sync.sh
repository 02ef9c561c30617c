#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fsync, fdatasync, syncfs and fsync of a directory succeed and leave the
# data in the backing file.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
mount_fs

python3 - "$MNT" "$BACKING" <<'PY' || fail "sync calls"
import os, sys
m, b = sys.argv[1], sys.argv[2]
fd = os.open(os.path.join(m, "f"), os.O_CREAT | os.O_RDWR, 0o644)
for i in range(64):
    os.write(fd, bytes([65 + i % 26]) * 65536)
os.fsync(fd)
# Everything written before fsync is in the backing file when it returns.
assert os.stat(os.path.join(b, "f")).st_size == 64 * 65536
os.write(fd, b"tail")
os.fdatasync(fd)
with open(os.path.join(b, "f"), "rb") as f:
    f.seek(64 * 65536)
    assert f.read() == b"tail"
os.close(fd)
d = os.open(m, os.O_RDONLY | os.O_DIRECTORY)
os.fsync(d)
os.close(d)
PY
sync -f "$MNT/f" || fail "syncfs"
sync "$MNT/f" || fail "sync FILE"
sync -d "$MNT/f" || fail "fdatasync via sync -d"
cmp "$MNT/f" "$BACKING/f" || fail "data"

unmount_fs
check_log
