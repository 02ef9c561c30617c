#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Every FUSE operation on every kind of .control inode, as root and as
# another user on an allow_other mount: each gets the errno recorded in
# tests/data/control-every-op.txt (fs_ops.c routes them; no fs_* handler
# may see a control inode), nothing reaches the backing tree, and the
# daemon survives.  To regenerate the table after a deliberate change:
# EVERY_OP_WRITE=1 tests/control-every-op.sh, then review the diff.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require setpriv python3
EXPECTED=$top_srcdir/tests/data/control-every-op.txt

chmod 755 "$T"
echo data >"$BACKING/f"
: >"$BACKING/g"
chmod 666 "$BACKING/f" "$BACKING/g"
mount_fs -o allow_other -o scheduler=deadline
ls "$BACKING" >"$T/before"

cat >"$T/ops.py" <<'PY'
import ctypes, errno, fcntl, os, sys

m, who = sys.argv[1], sys.argv[2]
c = os.path.join(m, ".control")
f = os.path.join(m, "f")
g = os.path.join(m, "g")
libc = ctypes.CDLL(None, use_errno=True)
tunable = sorted(os.listdir(os.path.join(c, "iosched")))[0]
paths = ["", "scheduler", "nr_requests", "stats", "iosched",
         "iosched/" + tunable, "backing_io", "backing_device", "trace",
         "log", "pid"]


def res(fn, *a):
    try:
        r = fn(*a)
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    return "no" if r is False else "empty" if r == [] else "ok"


def call(fn, *a):
    """A libc call returning -1 and errno."""
    def run():
        if fn(*a) == -1:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
    return run


def with_fd(p, flags, op):
    def run():
        fd = os.open(p, flags)
        try:
            op(fd)
        finally:
            os.close(fd)
    return run


def copy_to_f(fd):
    # The kernel may copy through read and write when we refuse: to g.
    with_fd(g, os.O_WRONLY,
            lambda out: os.copy_file_range(fd, out, 16, 0, 0))()


def copy_from_f(fd):
    with_fd(f, os.O_RDONLY,
            lambda src: os.copy_file_range(src, fd, 4, 0, 0))()


def ops(p, name):
    new = os.path.join(p, "new")
    rd, wr = os.O_RDONLY, os.O_WRONLY
    yield "stat", os.stat, p
    yield "lstat", os.lstat, p
    yield "statvfs", os.statvfs, p
    yield "access-w", os.access, p, os.W_OK
    yield "readlink", os.readlink, p
    for fl, n in ((rd, "rdonly"), (wr, "wronly"), (os.O_RDWR, "rdwr"),
                  (wr | os.O_APPEND, "append"),
                  (rd | os.O_DIRECTORY, "directory"),
                  (rd | os.O_DIRECT, "direct")):
        yield "open-" + n, with_fd(p, fl, lambda fd: None)
    if name != "trace":
        # Reads of the trace wait for events.
        yield "read", with_fd(p, rd, lambda fd: os.read(fd, 4096))
        yield "pread-far", with_fd(p, rd, lambda fd: os.pread(fd, 16, 1 << 20))
    yield "listdir", os.listdir, p
    yield "chmod", os.chmod, p, 0o777
    yield "chown", os.chown, p, 65534, 65534
    yield "chown-root", os.chown, p, 0, 0
    yield "utime", os.utime, p, (0, 0)
    yield "utime-now", os.utime, p, None
    yield "truncate-5", os.truncate, p, 5
    yield "getxattr", os.getxattr, p, "user.x"
    yield "setxattr", os.setxattr, p, "user.x", b"1"
    yield "listxattr", os.listxattr, p
    yield "removexattr", os.removexattr, p, "user.x"
    yield "create-inside", with_fd(new, os.O_CREAT | wr, lambda fd: None)
    yield "mkdir-inside", os.mkdir, new
    yield "mknod-inside", os.mknod, new, 0o600 | 0o010000
    yield "symlink-inside", os.symlink, "f", new
    yield "link-inside", os.link, f, new
    yield "rename-inside", os.rename, f, new
    yield "unlink-inside", os.unlink, os.path.join(p, "scheduler")
    yield "rmdir-inside", os.rmdir, os.path.join(p, "iosched")
    yield "rename-out", os.rename, p, os.path.join(m, "moved")
    yield "link-out", os.link, p, os.path.join(m, "linked")
    yield "unlink", os.unlink, p
    yield "rmdir", os.rmdir, p
    yield "lseek-data", with_fd(p, rd, lambda fd: os.lseek(fd, 0, os.SEEK_DATA))
    yield "lseek-hole", with_fd(p, rd, lambda fd: os.lseek(fd, 0, os.SEEK_HOLE))
    yield "lseek-end", with_fd(p, rd, lambda fd: os.lseek(fd, 0, os.SEEK_END))
    yield "fsync", with_fd(p, rd, os.fsync)
    yield "fdatasync", with_fd(p, rd, os.fdatasync)
    yield "fchmod", with_fd(p, rd, lambda fd: os.fchmod(fd, 0o777))
    yield "flock", with_fd(p, rd, lambda fd: fcntl.flock(fd, fcntl.LOCK_EX))
    yield "fcntl-lock", with_fd(p, rd, lambda fd: fcntl.lockf(
        fd, fcntl.LOCK_SH | fcntl.LOCK_NB))
    yield "ioctl", with_fd(p, rd, lambda fd: fcntl.ioctl(fd, 0x80086601, b"\0" * 8))
    yield "copy-from", with_fd(p, rd, copy_to_f)
    for fl, n in ((wr, "w"), (os.O_RDWR, "rw")):
        yield "ftruncate-" + n, with_fd(p, fl, lambda fd: os.ftruncate(fd, 0))
        yield "fallocate-" + n, with_fd(p, fl, lambda fd: call(
            libc.fallocate, fd, 0, ctypes.c_long(0), ctypes.c_long(4096))())
        yield "punch-" + n, with_fd(p, fl, lambda fd: call(
            libc.fallocate, fd, 3, ctypes.c_long(0), ctypes.c_long(4096))())
        yield "copy-to-" + n, with_fd(p, fl, copy_from_f)


for name in paths:
    p = os.path.join(c, name) if name else c
    shown = name.replace(tunable, "TUNABLE") if name else "."
    for op, fn, *a in ops(p, name):
        print(who, shown, op, res(fn, *a))
PY

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
require_nobody_python
PY=$NOBODY_PY
timeout 120 "$PY" "$T/ops.py" "$MNT" root >"$T/out" ||
	fail "the operations as root did not run: $(tail -n 5 "$LOG")"
timeout 120 setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$PY" "$T/ops.py" "$MNT" nobody >>"$T/out" ||
	fail "the operations as nobody did not run: $(tail -n 5 "$LOG")"
kill -0 "$DAEMON_PID" || fail "the daemon died: $(tail -n 5 "$LOG")"
grep -q '\[' "$MNT/.control/scheduler" || fail "scheduler unreadable afterwards"

if [ -n "${EVERY_OP_WRITE:-}" ]; then
	cp "$T/out" "$EXPECTED"
fi
diff -u "$EXPECTED" "$T/out" >&2 || fail "errnos differ from $EXPECTED"
ls "$BACKING" >"$T/after"
cmp -s "$T/before" "$T/after" || fail "the backing tree changed: $(cat "$T/after")"
assert_eq data "$(cat "$BACKING/f")" "f after the operations"

unmount_fs
