#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Create, write, read, overwrite, truncate; O_APPEND, O_TRUNC, O_EXCL.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
mount_fs

# Whole files in and out, with sizes that are not block multiples.
head -c 3000000 /dev/urandom >"$T/rand"
cp "$T/rand" "$MNT/big"
cmp "$T/rand" "$BACKING/big" || fail "written data differs in backing"
cmp "$T/rand" "$MNT/big" || fail "read data differs"
echo 3 >/proc/sys/vm/drop_caches
cmp "$T/rand" "$MNT/big" || fail "read data differs after drop_caches"

# Overwrite in the middle, without truncating.
printf 'HELLO' | dd of="$MNT/big" bs=1 seek=1000 conv=notrunc 2>/dev/null
assert_eq HELLO "$(dd if="$BACKING/big" bs=1 skip=1000 count=5 2>/dev/null)" \
	"overwrite"
assert_eq 3000000 "$(stat -c %s "$MNT/big")" "size after overwrite"

# Truncate down and up.
truncate -s 100 "$MNT/big"
assert_eq 100 "$(stat -c %s "$BACKING/big")" "size after truncate down"
truncate -s 10000 "$MNT/big"
assert_eq 10000 "$(stat -c %s "$MNT/big")" "size after truncate up"
assert_eq 0 "$(tail -c 9900 "$MNT/big" | tr -d '\0' | wc -c)" "zeros after truncate up"

# O_APPEND: two appends give two lines.
echo a >>"$MNT/app"
echo b >>"$MNT/app"
assert_eq "a
b" "$(cat "$BACKING/app")" "O_APPEND"

# O_TRUNC through the shell's >.
echo long-long-line >"$MNT/tr"
echo s >"$MNT/tr"
assert_eq s "$(cat "$BACKING/tr")" "O_TRUNC"
assert_eq 2 "$(stat -c %s "$MNT/tr")" "size after O_TRUNC"

python3 - "$MNT" <<'PY' || fail "open flags"
import errno, os, sys
m = sys.argv[1]
p = os.path.join(m, "excl")
fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o640)
os.write(fd, b"one")
os.close(fd)
try:
    os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o640)
    raise SystemExit("O_EXCL on an existing file succeeded")
except OSError as e:
    assert e.errno == errno.EEXIST, e
assert os.stat(p).st_mode & 0o777 == 0o640, oct(os.stat(p).st_mode)
# O_APPEND with pwrite-like positioning: writes still land at the end.
fd = os.open(p, os.O_WRONLY | os.O_APPEND)
os.lseek(fd, 0, os.SEEK_SET)
os.write(fd, b"two")
os.close(fd)
assert open(p, "rb").read() == b"onetwo"
# Read back what another descriptor wrote (no stale cache).
fd = os.open(p, os.O_RDWR)
os.pwrite(fd, b"ONE", 0)
assert os.pread(fd, 6, 0) == b"ONEtwo"
os.close(fd)
# A read-only descriptor cannot write.
fd = os.open(p, os.O_RDONLY)
try:
    os.write(fd, b"x")
    raise SystemExit("write on O_RDONLY succeeded")
except OSError as e:
    assert e.errno == errno.EBADF, e
os.close(fd)
PY
assert_eq ONEtwo "$(cat "$BACKING/excl")" "backing after python"

compare_trees
unmount_fs
check_log
