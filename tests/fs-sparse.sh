#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Sparse files: SEEK_DATA/SEEK_HOLE, fallocate, punching holes.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require fallocate
mount_fs

python3 - "$MNT/sparse" "$BACKING/sparse" <<'PY' || fail "sparse file"
import os, sys
m, b = sys.argv[1], sys.argv[2]
MB = 1 << 20
fd = os.open(m, os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, b"a" * 4096, 0)
os.pwrite(fd, b"b" * 4096, 8 * MB)
os.ftruncate(fd, 16 * MB)
os.fsync(fd)
# While a file is open for writing it shows no holes (its pages may be
# dirty: tests/safety-copy-dirty.sh); look through a reader alone.
os.close(fd)
fd = os.open(m, os.O_RDONLY)
def layout(f):
    out, off = [], 0
    size = os.fstat(f).st_size
    while off < size:
        try:
            d = os.lseek(f, off, os.SEEK_DATA)
        except OSError:
            break
        h = os.lseek(f, d, os.SEEK_HOLE)
        out.append((d, h))
        off = h
    return out
fb = os.open(b, os.O_RDONLY)
lm, lb = layout(fd), layout(fb)
assert lm == lb, (lm, lb)
assert len(lm) == 2 and lm[0][0] == 0 and lm[1][0] <= 8 * MB < lm[1][1], lm
assert os.lseek(fd, 4096 * 4, os.SEEK_HOLE) == 4096 * 4
assert os.pread(fd, 4, 8 * MB - 2) == b"\0\0bb"
os.close(fd)
os.close(fb)
PY
assert_eq 16777216 "$(stat -c %s "$MNT/sparse")" "sparse size"
blocks=$(stat -c %b "$BACKING/sparse")
[ "$blocks" -lt 1000 ] || fail "sparse file is not sparse in backing ($blocks blocks)"

# fallocate allocates without changing data; -p punches a hole.
head -c 1048576 /dev/urandom >"$MNT/fa"
fallocate -l 4194304 "$MNT/fa"
assert_eq 4194304 "$(stat -c %s "$BACKING/fa")" "size after fallocate"
fallocate -p -o 0 -l 65536 "$MNT/fa"
assert_eq 0 "$(head -c 65536 "$MNT/fa" | tr -d '\0' | wc -c)" "punched range reads zeros"
cmp -s -i 65536:65536 -n 983040 "$MNT/fa" "$BACKING/fa" || fail "data after hole"
python3 - "$MNT/fa" <<'PY' || fail "hole not seen by SEEK_DATA"
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
assert os.lseek(fd, 0, os.SEEK_DATA) >= 65536, os.lseek(fd, 0, os.SEEK_DATA)
PY
# Keep-size preallocation past the end.
fallocate -n -o 4194304 -l 1048576 "$MNT/fa"
assert_eq 4194304 "$(stat -c %s "$MNT/fa")" "size after fallocate -n"

compare_trees
unmount_fs
check_log
