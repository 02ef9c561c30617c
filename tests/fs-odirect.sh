#!/bin/sh
# O_DIRECT reads and writes, aligned and not: the backing file stays
# buffered, so unaligned direct writes work as FUSE allows them.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
mount_fs

head -c 1048576 /dev/urandom >"$T/r"
dd if="$T/r" of="$MNT/d" bs=4096 oflag=direct status=none || fail "dd oflag=direct"
cmp "$T/r" "$BACKING/d" || fail "direct write data"
dd if="$MNT/d" of="$T/back" bs=4096 iflag=direct status=none || fail "dd iflag=direct"
cmp "$T/r" "$T/back" || fail "direct read data"
# Not a multiple of the block size.
dd if="$T/r" of="$MNT/d2" bs=1000 count=7 oflag=direct status=none || fail "dd bs=1000 oflag=direct"
cmp -n 7000 "$T/r" "$BACKING/d2" || fail "unaligned direct write data"

python3 - "$MNT" "$BACKING" <<'PY' || fail "python O_DIRECT"
import mmap, os, sys
m, b = sys.argv[1], sys.argv[2]
fd = os.open(os.path.join(m, "u"), os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o644)
# An unaligned length from an unaligned buffer at an unaligned offset.
data = os.urandom(12345)
assert os.pwrite(fd, data, 777) == len(data)
buf = mmap.mmap(-1, 16384)               # page aligned for the read
n = os.preadv(fd, [buf], 0)
assert n == 777 + len(data), n
assert buf[777:777 + len(data)] == data
os.close(fd)
assert open(os.path.join(b, "u"), "rb").read()[777:] == data
# Direct and cached views agree after a direct write.
with open(os.path.join(m, "u"), "rb") as f:
    assert f.read()[777:] == data
PY

unmount_fs
check_log
