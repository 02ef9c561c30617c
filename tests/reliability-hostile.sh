#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Hostile input.  Every file under .control/ gets random bytes, 1 MiB
# writes, partial writes, writes at nonzero offsets, O_TRUNC, O_APPEND and
# O_CREAT|O_EXCL opens, and concurrent writers: each write works or fails
# with EINVAL, EPERM or EACCES; every file stays readable and well formed;
# the daemon survives.  .control itself cannot be created, removed,
# renamed, linked or chmod'ed, and nothing crosses the boundary of the
# mount by rename or link (EXDEV) or by a symlink the daemon follows.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3

mount_fs -o scheduler=deadline
C=$MNT/.control
alive() { kill -0 "$DAEMON_PID" 2>/dev/null || fail "the daemon died ($1)"; }

# Shared by the sequential and the concurrent phase: the checks of what a
# control file must look like, whatever was written to it.
cat >"$T/ctl.py" <<'PY'
import errno, os, random, re, sys

C = sys.argv[1]
OK_ERRNOS = {errno.EINVAL, errno.EPERM, errno.EACCES}

def files():
    out = []
    for d, _, names in os.walk(C):
        out += [os.path.join(d, n) for n in names]
    return sorted(out)

def well_formed(path, text):
    name = os.path.relpath(path, C)
    if name == "scheduler":
        words = text.split()
        active = [w for w in words if w.startswith("[")]
        assert len(active) == 1 and re.fullmatch(r"\[[a-z0-9_-]+\]",
               active[0]), "scheduler: %r" % text
        assert text.endswith("\n") and text.count("\n") == 1, text
    elif name == "stats":
        assert text.startswith("read requests "), "stats: %r" % text
    elif name == "backing_io":
        assert text in ("auto\n", "direct\n", "buffered\n"), text
    elif name == "backing_device":
        assert text.startswith("name ") and text.count("\n") == 1, text
    elif name == "log":
        assert re.fullmatch(r"([0-9]{4}-[^\n]*\n)+", text), "log: %r" % text
    else:
        assert re.fullmatch(r"-?[0-9]+\n", text), "%s: %r" % (name, text)

def read(path):
    if os.path.relpath(path, C) == "trace":
        # A stream: one read returns its header at once, EOF never comes.
        fd = os.open(path, os.O_RDONLY)
        try:
            text = os.read(fd, 4096).decode("ascii")
        finally:
            os.close(fd)
        assert text.startswith("# fuse-iosched trace "), "trace: %r" % text
        return text
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("ascii")
    well_formed(path, text)
    return text

def payloads(rng):
    yield b""
    for n in (1, 7, 64, 4095, 4096, 4097, 65536, 1 << 20):
        yield rng.randbytes(n)
    yield b"x" * (1 << 20)
    yield b"\0" * 4096
    for s in ("-1", "0", "1", "+5", " 5", "5 6", "0x10", "1e3", "99999999999999999999",
              "-9223372036854775808", "18446744073709551616", "12abc", "\n5",
              "noop\0deadline", "noop\n\n\n", "deadline\r\n", "../../etc/passwd",
              "/tmp/x", "%s%s%n", "cfq" * 100, "\xff\xfe"):
        yield s.encode("latin-1")

def attempt(what, f, allow=()):
    try:
        f()
        return "ok"
    except OSError as e:
        if e.errno in OK_ERRNOS or e.errno in allow:
            return errno.errorcode[e.errno]
        sys.exit("%s: unexpected %s" % (what, e))
PY

echo "--- one writer at a time"
timeout 120 python3 - "$C" "$T/ctl.py" <<'PY' || fail "sequential hostile writes"
import errno, os, random, sys
exec(open(sys.argv[2]).read())
rng = random.Random(int.from_bytes(os.urandom(4), "little"))
tally = {}
def note(r):
    tally[r] = tally.get(r, 0) + 1

for path in files():
    if not os.path.exists(path):	# a tunable of a scheduler since gone
        continue
    read(path)
    for data in payloads(rng):
        for flags, off in ((os.O_WRONLY, None), (os.O_WRONLY | os.O_TRUNC, None),
                           (os.O_WRONLY | os.O_APPEND, None), (os.O_RDWR, None),
                           (os.O_WRONLY, 1), (os.O_WRONLY, 4095),
                           (os.O_WRONLY, 4096), (os.O_WRONLY, 1 << 40)):
            def op():
                fd = os.open(path, flags)
                try:
                    if off is None:
                        n = os.write(fd, data)
                    else:
                        n = os.pwrite(fd, data, off)
                    # A write that "works" takes all of it.
                    assert n == len(data), "%s: short write %d of %d" % (path, n, len(data))
                finally:
                    os.close(fd)
            note(attempt("%s flags %o off %s len %d" % (path, flags, off, len(data)), op))
            if os.path.exists(path):
                read(path)
    # Partial writes: a valid value in two writes on one descriptor.
    text = read(path).strip()
    if "[" in text:
        text = text.split("[")[1].split("]")[0]
    def split_write():
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, text[:1].encode())
            os.write(fd, text[1:].encode() + b"\n")
        finally:
            os.close(fd)
    note(attempt("%s split write" % path, split_write))
    read(path)
    note(attempt("%s O_CREAT|O_EXCL" % path,
                 lambda: os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)),
                 allow=(errno.EEXIST,)))
    note(attempt("%s ftruncate 1" % path, lambda: os.truncate(path, 1)))
    read(path)
print("outcomes:", ", ".join("%s %d" % kv for kv in sorted(tally.items())))
PY
alive "sequential writes"

echo "--- concurrent writers"
timeout 60 python3 - "$C" "$T/ctl.py" <<'PY' || fail "concurrent hostile writes"
import errno, os, random, sys, time
exec(open(sys.argv[2]).read())
names = open(os.path.join(C, "scheduler")).read().replace("[", "").replace("]", "").split()
def child(k):
    rng = random.Random(k)
    end = time.time() + 3
    while time.time() < end:
        fl = files()
        path = rng.choice(fl)
        if k == 0:
            # A reader: every file, always well formed.
            for p in fl:
                try:
                    read(p)
                except FileNotFoundError:
                    pass
            continue
        data = rng.choice([rng.randbytes(rng.randrange(1, 200)),
                           (rng.choice(names) + "\n").encode(),
                           b"%d\n" % rng.randrange(-5, 100000),
                           b"y" * (1 << 20)])
        def op():
            fd = os.open(path, rng.choice([os.O_WRONLY, os.O_WRONLY | os.O_TRUNC,
                                           os.O_WRONLY | os.O_APPEND]))
            try:
                os.pwrite(fd, data, rng.choice([0, 0, 0, 1, 4096]))
            finally:
                os.close(fd)
        # Tunables come and go with the scheduler: ENOENT is fair there.
        attempt(path, op, allow=(errno.ENOENT,) if "/iosched/" in path else ())
    os._exit(0)
pids = []
for k in range(6):
    pid = os.fork()
    if pid == 0:
        try:
            child(k)
        except SystemExit as e:
            print(e, file=sys.stderr)
            os._exit(1)
        except BaseException as e:
            print("child %d: %r" % (k, e), file=sys.stderr)
            os._exit(1)
    pids.append(pid)
bad = 0
for pid in pids:
    _, st = os.waitpid(pid, 0)
    bad += st != 0
sys.exit(1 if bad else 0)
PY
alive "concurrent writers"

# Every file still reads and is well formed; the daemon still switches,
# takes a good value, and does I/O.
timeout 30 python3 - "$C" "$T/ctl.py" <<'PY' || fail "control files after the abuse"
import os, sys
exec(open(sys.argv[2]).read())
for p in files():
    read(p)
PY
echo deadline >"$C/scheduler" || fail "a good scheduler write after the abuse"
echo 128 >"$C/nr_requests" || fail "a good nr_requests write after the abuse"
assert_eq 128 "$(cat "$C/nr_requests")" "nr_requests"
dd if=/dev/urandom of="$T/data" bs=64k count=16 status=none
cp "$T/data" "$MNT/data" && cmp "$T/data" "$MNT/data" || fail "I/O after the abuse"
cat "$C/stats"

echo "--- .control itself"
expect_fail() { # WHAT COMMAND...
	what=$1
	shift
	"$@" 2>/dev/null && fail "$what succeeded"
	return 0
}
ctl_state() { stat -c '%A %U %G' "$C"; ls -l --time-style=+ "$C"; }
listing=$(ctl_state)
expect_fail "mkdir .control" mkdir "$C"
expect_fail "creating .control as a file" python3 -c \
	'import os, sys; os.open(sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY)' "$C"
expect_fail "symlink named .control" ln -s x "$C"
expect_fail "rmdir .control" rmdir "$C"
expect_fail "rm -rf .control" rm -rf "$C"
expect_fail "rename .control" mv -T "$C" "$MNT/ctl"
mkdir "$MNT/dir"
expect_fail "rename a directory onto .control" mv -T "$MNT/dir" "$C"
expect_fail "link .control/scheduler" ln "$C/scheduler" "$MNT/sched"
expect_fail "chmod .control" chmod 777 "$C"
expect_fail "chown .control" chown nobody "$C"
assert_eq "$listing" "$(ctl_state)" ".control after the attempts"
[ -e "$BACKING/.control" ] && fail "a .control appeared in the backing directory"
[ -e "$MNT/ctl" ] && fail "a renamed .control appeared"

echo "--- the boundary"
mkdir "$T/outside" "$BACKING/sub"
echo secret >"$T/outside/target"
echo inside >"$BACKING/sub/f"
ln -s "$T/outside/target" "$BACKING/sl"
ln -s ../outside "$BACKING/sub/up"
python3 - "$MNT" "$T/outside" <<'PY' || fail "crossing the boundary"
import errno, os, sys
from lib import err
m, out = sys.argv[1], sys.argv[2]
j = os.path.join
# Renames and links across the boundary, both ways, files and directories.
assert err(os.rename, j(m, "sub/f"), j(out, "f")) == errno.EXDEV
assert err(os.rename, j(out, "target"), j(m, "target")) == errno.EXDEV
assert err(os.rename, j(m, "sub"), j(out, "sub")) == errno.EXDEV
assert err(os.link, j(m, "sub/f"), j(out, "f")) == errno.EXDEV
assert err(os.link, j(out, "target"), j(m, "t2")) == errno.EXDEV
# ".." is resolved by the kernel: from the mount's root it is the
# mountpoint's parent, never the backing directory's.
assert os.stat(j(m, "sub", "..", "..")).st_ino == os.stat(os.path.dirname(m)).st_ino
# Operations on a symlink itself never reach its target.
assert err(os.setxattr, j(m, "sl"), "user.x", b"1", follow_symlinks=False) != 0
assert err(os.getxattr, j(out, "target"), "user.x") == errno.ENODATA, "xattr leaked to the target"
os.utime(j(m, "sl"), (0, 0), follow_symlinks=False)
assert os.stat(j(out, "target")).st_mtime != 0, "utime followed the symlink"
assert err(os.open, j(m, "sl"), os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW) == errno.ELOOP
assert err(os.open, j(m, "sub/up"), os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY) in (errno.ELOOP, errno.ENOTDIR)
os.unlink(j(m, "sl"))
os.unlink(j(m, "sub/up"))
assert open(j(out, "target")).read() == "secret\n"
assert os.listdir(out) == ["target"], os.listdir(out)
PY
alive "boundary checks"
compare_trees
unmount_fs
# Refused values are warnings, not errors.
check_log
