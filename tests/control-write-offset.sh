# SPDX-License-Identifier: GPL-2.0-or-later
# Control files take a value in one write at offset 0, like sysfs: a
# write elsewhere is EINVAL, O_TRUNC and O_APPEND opens work, reads honour
# offsets, and a rewind shows fresh content.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3

S=$MNT/.control/scheduler

mount_fs -o scheduler=deadline
before=$(cat "$S")

# At offset 1 and 4096: EINVAL, no change.
printf noop >"$T/in"
for seek in 1 4096; do
	err=$(dd if="$T/in" of="$S" bs=1 seek=$seek conv=notrunc status=none 2>&1) &&
		fail "write at offset $seek succeeded"
	echo "$err" | grep -q 'Invalid argument' || fail "offset $seek: '$err'"
	assert_eq "$before" "$(cat "$S")" "scheduler after a write at offset $seek"
done

# The file stays at offset 0 for one writer that writes twice: the second
# write is at offset 5 and is refused, the first was applied.
python3 - "$S" <<'PY' || fail "python write sequence"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
assert os.write(fd, b"noop\n") == 5
try:
    os.write(fd, b"deadline\n")
    sys.exit("second write at offset 5 was accepted")
except OSError as e:
    assert e.errno == errno.EINVAL, e
# pwrite at 0 again works.
assert os.pwrite(fd, b"deadline\n", 0) == 9
os.close(fd)
PY
assert_eq deadline "$(scheduler_active)" "after the python write sequence"

# O_APPEND (>>) and O_TRUNC (>) opens.
echo noop >>"$S" || fail "echo noop >> failed"
assert_eq noop "$(scheduler_active)" "after echo >>"
echo deadline >"$S" || fail "echo deadline > failed"
assert_eq deadline "$(scheduler_active)" "after echo >"
truncate -s 0 "$S" || fail "truncate -s 0 failed"
err=$(truncate -s 10 "$S" 2>&1) && fail "truncate -s 10 succeeded"

# Reads at offsets, and size 4096 like sysfs.
assert_eq 4096 "$(stat -c %s "$S")" "size of scheduler"
full=$(cat "$S")
part=$(dd if="$S" bs=1 skip=3 status=none)
assert_eq "$(printf '%s' "$full" | cut -c4-)" "$part" "read from offset 3"
assert_eq "" "$(dd if="$S" bs=1 skip=4000 count=10 status=none)" "read past the end"

# A rewind shows the new value; an open file does not change under a reader
# in the middle of its content.
python3 - "$S" <<'PY' || fail "rewind check"
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
a = os.pread(fd, 4096, 0)
assert b"[deadline]" in a, a
os.pwrite(fd, b"noop", 0)
b = os.pread(fd, 4096, 0)
assert b"[noop]" in b, b
os.pwrite(fd, b"deadline", 0)
os.close(fd)
PY
assert_eq deadline "$(scheduler_active)" "after the rewind check"
unmount_fs
check_log
