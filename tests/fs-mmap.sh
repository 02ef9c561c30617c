#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Shared mappings: reading a file through mmap, and writing through one
# (msync, then munmap and close) reaches the backing file.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
mount_fs

head -c 1048576 /dev/urandom >"$BACKING/r"
python3 - "$MNT" "$BACKING" <<'PY' || fail "mmap"
import mmap, os, sys
m, b = sys.argv[1], sys.argv[2]
with open(os.path.join(m, "r"), "rb") as f:
    mm = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    assert mm[:] == open(os.path.join(b, "r"), "rb").read()
    mm.close()
p = os.path.join(m, "w")
with open(p, "wb") as f:
    f.truncate(3 * 4096 + 100)
with open(p, "r+b") as f:
    mm = mmap.mmap(f.fileno(), 0)
    mm[0:5] = b"first"
    mm[4096 * 3 + 95:4096 * 3 + 100] = b"lastX"
    mm.flush()
    mm.close()
data = open(os.path.join(b, "w"), "rb").read()
assert len(data) == 3 * 4096 + 100, len(data)
assert data[:5] == b"first" and data[-5:] == b"lastX", (data[:5], data[-5:])
PY

unmount_fs
check_log
