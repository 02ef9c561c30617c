#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Without file handles (no CAP_DAC_READ_SEARCH) an inode whose descriptor
# was closed is reached again through its ancestors, by name; a tree may
# be as deep as anyone likes, and no depth may crash the daemon.  A file
# 4,000 directories down, every directory on the way having lost its
# descriptor (ulimit -n 64 keeps 16), is read, and a file is made beside
# it, through the mount, by a daemon whose threads have 256 KiB of stack
# (ulimit -s): one stack frame per level overflowed that at under 1,000
# levels and the mount became ENOTCONN for everyone.  The daemon answers
# with the right data and stays up.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3 setpriv

DEPTH=4000
# BACKING/d/d/.../d/leaf, made directly (no path is that long).
python3 - "$BACKING" "$DEPTH" <<'PY' || fail "making the tree"
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
for i in range(int(sys.argv[2])):
    os.mkdir("d", dir_fd=fd)
    fd, old = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd), fd
    os.close(old)
f = os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
os.write(f, b"deep data\n")
PY
# Looked up in the root, these take the descriptors of the deep ones.
(cd "$BACKING" && touch f{1..100} g{1..100})

printf '#!/bin/sh\nulimit -n 64 && ulimit -s 256 || exit 99\nexec setpriv --inh-caps=-dac_read_search --bounding-set=-dac_read_search "%s" "$@"\n' \
	"$FUSE_IOSCHED" >"$T/limited"
chmod +x "$T/limited"
FUSE_IOSCHED=$T/limited
mount_fs
grep -q 'others reopened by parent and name' "$LOG" ||
	fail "the daemon uses file handles: $(grep descriptors "$LOG")"

python3 - "$MNT" "$DEPTH" <<'PY' || fail "at the deepest level"
import os, sys
m, depth = sys.argv[1], int(sys.argv[2])
# Down through the mount, holding only the deepest directory (O_PATH:
# the kernel keeps the inodes of its ancestors, the daemon is not asked
# to open them).
fd = os.open(m, os.O_PATH | os.O_DIRECTORY)
for i in range(depth):
    fd, old = os.open("d", os.O_PATH | os.O_DIRECTORY, dir_fd=fd), fd
    os.close(old)
def evict(prefix):
    for i in range(1, 101):
        os.stat(os.path.join(m, "%s%d" % (prefix, i)))
def at(name, flags, mode=0o644):
    return os.open(name, flags, mode, dir_fd=fd)
evict("f")
with os.fdopen(at("leaf", os.O_RDONLY)) as f:
    data = f.read()
assert data == "deep data\n", "read %r" % data
evict("g")
with os.fdopen(at("new", os.O_WRONLY | os.O_CREAT | os.O_EXCL), "w") as f:
    f.write("written deep\n")
PY
kill -0 "$DAEMON_PID" 2>/dev/null || fail "the daemon died"
stat "$MNT" >/dev/null || fail "the mount does not answer"
python3 - "$BACKING" "$DEPTH" <<'PY' || fail "the file made at the deepest level"
import os, sys
fd = os.open(sys.argv[1], os.O_PATH | os.O_DIRECTORY)
for i in range(int(sys.argv[2])):
    fd = os.open("d", os.O_PATH | os.O_DIRECTORY, dir_fd=fd)
with os.fdopen(os.open("new", os.O_RDONLY, dir_fd=fd)) as f:
    data = f.read()
assert data == "written deep\n", "backing file holds %r" % data
PY
unmount_fs
check_log
