#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Under writeback_cache, an O_DIRECT read sees what another descriptor has
# just written into the mount's page cache and not yet written back, as on
# a local filesystem: the kernel writes dirty pages back before direct I/O.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
mount_fs -o writeback_cache

python3 - "$MNT/f" <<'PY' || fail "an O_DIRECT read missed buffered data"
import mmap, os, sys
path = sys.argv[1]
data = os.urandom(256 * 1024)
fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, data, 0)			# dirty in the page cache, no fsync
dfd = os.open(path, os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, len(data))		# page aligned
n = os.preadv(dfd, [buf], 0)
assert n == len(data), "O_DIRECT read returned %d of %d bytes" % (n, len(data))
assert buf[:] == data, "O_DIRECT read returned other data"
os.close(dfd)
os.close(fd)
PY

# Mixed buffered and O_DIRECT operations on one file; this seed's 55th
# operation is an O_DIRECT read of data still dirty in the page cache.
"$top_builddir/tests/fsx" -q -d -N 300 -S 950827462 "$MNT/fsx" ||
	fail "fsx with O_DIRECT under writeback_cache"

unmount_fs
check_log
