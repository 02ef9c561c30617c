#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A write-back error reaches every descriptor open when it happened, once
# each, as on a local file system: two openers of one file on a full
# backing file system (a 512 KiB tmpfs) under the writeback cache; 1 MiB
# written through the first: the first fsync of each descriptor fails with
# ENOSPC, the second of each succeeds, a descriptor opened after the error
# sees none, and the closes succeed.  Either opener may sync first.
# The kernel keeps the error per open file once our answer to its write
# carries it (dispatch_spread); the daemon must not report it again
# (fs_inode_write_failed).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3

mount -t tmpfs -o size=512k fuse-iosched-test "$BACKING" ||
	skip_env "cannot mount a tmpfs"
cleanup_push "fusermount3 -u '$MNT' 2>/dev/null; sleep 0.2; umount '$BACKING' 2>/dev/null || umount -l '$BACKING'"
mount_fs -o writeback_cache

# ORDER: which descriptor syncs first.
run() { # FILE ORDER
	python3 - "$MNT/$1" "$2" <<'PY'
import errno, os, sys
path, order = sys.argv[1], sys.argv[2]
a = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
b = os.open(path, os.O_RDWR)
os.write(a, b"x" * (1 << 20))	# fits the page cache, not the backing
fds = {"a": a, "b": b}
def fsync(name):
    try:
        os.fsync(fds[name])
        return 0
    except OSError as e:
        return e.errno
# The error reaches the first sync of each; the second of each succeeds.
got = [(n, fsync(n)) for n in order + order]
want = [(n, errno.ENOSPC) for n in order] + [(n, 0) for n in order]
if got != want:
    sys.exit("fsyncs: got %s, want %s" % (got, want))
# Opened after the error was reported: nothing to report.
c = os.open(path, os.O_RDWR)
fds["c"] = c
if fsync("c"):
    sys.exit("fsync of a descriptor opened after the error failed")
for fd in (a, b, c):
    os.close(fd)
PY
}
run f1 ab || fail "writer first"
rm -f "$MNT/f1"
run f2 ba || fail "other opener first"
rm -f "$MNT/f2"
unmount_fs
check_log 'No space left on device'
