#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# copy_file_range(2) between files on the mount, at offsets.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
mount_fs

head -c 2000000 /dev/urandom >"$MNT/src"
python3 - "$MNT" <<'PY' || fail "copy_file_range"
import os, sys
m = sys.argv[1]
s = os.open(os.path.join(m, "src"), os.O_RDONLY)
d = os.open(os.path.join(m, "dst"), os.O_CREAT | os.O_RDWR, 0o644)
done = 0
while done < 2000000:
    n = os.copy_file_range(s, d, 2000000 - done, done, done)
    assert n > 0, n
    done += n
# A piece at different offsets, then a read back through the mount.
n = os.copy_file_range(s, d, 1000, 5, 3000000)
assert n == 1000, n
os.close(s)
os.close(d)
a = open(os.path.join(m, "src"), "rb").read()
b = open(os.path.join(m, "dst"), "rb").read()
assert b[:2000000] == a, "copied data differs"
assert b[3000000:3001000] == a[5:1005], "offset copy differs"
assert b[2000000:3000000] == bytes(1000000), "gap is not zeros"
PY
cmp -n 2000000 "$BACKING/src" "$BACKING/dst" || fail "backing copy differs"
cp --reflink=never "$MNT/src" "$MNT/cp" && cmp "$MNT/src" "$BACKING/cp" || fail "cp"

unmount_fs
check_log
