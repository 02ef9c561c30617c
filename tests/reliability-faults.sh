#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Faults from below: a backing file truncated or removed behind the mount,
# a backing directory the daemon may not read, too few file descriptors.
# Each gives the caller a clear result (the new size, ENOENT, EACCES,
# EMFILE), never a crash; and the daemon does not leak descriptors.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3 prlimit setpriv

# Descriptors other than pipes and pidfds: libfuse keeps a splice pipe
# per session thread, so pipes come and go with load; and a process that
# did I/O and lives on (this script's shell) is watched for its exit
# (procwatch.c, bounded).
nfds() {
	find "/proc/$DAEMON_PID/fd" -mindepth 1 -printf '%l\n' |
		grep -vEc '^pipe:|^anon_inode:\[pidfd\]'
}

mount_fs

echo "--- truncated and removed behind the mount"
dd if=/dev/urandom of="$BACKING/t" bs=64k count=16 status=none
dd if=/dev/urandom of="$BACKING/r" bs=64k count=4 status=none
cp "$BACKING/r" "$T/r"
python3 - "$MNT" "$BACKING" <<'PY' || fail "a file changed behind the mount"
import errno, os, sys, time
m, b = sys.argv[1], sys.argv[2]

def until(what, cond, secs=5):
    # The kernel may serve cached attributes and pages for the attribute
    # timeout; after that it must see the change.
    end = time.time() + secs
    while not cond():
        if time.time() > end:
            sys.exit("%s: not seen after %d s" % (what, secs))
        time.sleep(0.1)

fd = os.open(os.path.join(m, "t"), os.O_RDONLY)
assert len(os.pread(fd, 65536, 0)) == 65536
os.truncate(os.path.join(b, "t"), 1000)
want = open(os.path.join(b, "t"), "rb").read()
until("truncation to 1000 bytes",
      lambda: os.fstat(fd).st_size == 1000 and
      os.pread(fd, 65536, 0) == want and os.pread(fd, 4096, 500000) == b"")
os.truncate(os.path.join(b, "t"), 0)
until("truncation to 0",
      lambda: os.fstat(fd).st_size == 0 and os.pread(fd, 65536, 0) == b"")
# Every offset reads as the end of the file, none as an error.
for off in (0, 1, 4095, 65536, 1 << 20, 1 << 40):
    assert os.pread(fd, 4096, off) == b"", off
os.close(fd)

# Removed while open: the open file keeps its data, like a local file,
# and takes writes; the name goes away.
fd = os.open(os.path.join(m, "r"), os.O_RDWR)
os.unlink(os.path.join(b, "r"))
data = os.pread(fd, 1 << 20, 0)
assert data == open(os.path.join(sys.argv[2], "..", "r"), "rb").read(), \
    "data of a removed open file"
assert os.pwrite(fd, b"still open", 0) == 10
assert os.pread(fd, 10, 0) == b"still open"
os.close(fd)
def gone():
    try:
        os.stat(os.path.join(m, "r"))
    except FileNotFoundError:
        return True
    return False
until("removal", gone)
assert "r" not in os.listdir(m)
PY
kill -0 "$DAEMON_PID" || fail "the daemon died"

echo "--- no leaked descriptors"
# 1000 files in 10 directories, made behind the mount, then read, listed
# and stat'ed through it; 200 more created, written and removed through it.
python3 - "$BACKING" <<'PY'
import os, sys
for d in range(10):
    p = os.path.join(sys.argv[1], "tree", "d%d" % d)
    os.makedirs(p)
    for f in range(100):
        with open(os.path.join(p, "f%d" % f), "w") as fp:
            fp.write("%d/%d\n" % (d, f))
PY
sync
echo 3 >/proc/sys/vm/drop_caches
sleep 0.5
n0=$(nfds)
cat "$MNT"/tree/d*/f* | wc -l | grep -qx 1000 || fail "reading 1000 files"
ls -R "$MNT/tree" >/dev/null || fail "ls -R"
find "$MNT/tree" -type f -exec stat -c %s {} + >/dev/null || fail "stat"
mkdir "$MNT/new"
for i in $(seq 200); do echo "$i" >"$MNT/new/$i"; done
rm -r "$MNT/new"
n1=$(nfds)
sync
echo 3 >/proc/sys/vm/drop_caches
i=0
# At most n0: forgets of the first drop may still have been on their way
# when n0 was taken, and fewer descriptors than then is no leak.  Up to
# 30 s: a loaded machine's sanitized daemon is slow to close them.
while [ "$(nfds)" -gt "$n0" ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || { ls -l "/proc/$DAEMON_PID/fd" | tail -n 20
		fail "the daemon holds $(nfds) descriptors, $n0 before the load"; }
	sleep 0.1
	echo 3 >/proc/sys/vm/drop_caches
done
echo "descriptors: $n0 before, $n1 during, $(nfds) after dropping caches"

echo "--- RLIMIT_NOFILE of $((n0 + 24))"
lim=$((n0 + 24))
nofile=$(prlimit --pid "$DAEMON_PID" --nofile -o SOFT --noheadings)
# The soft limit only: raising a hard limit back may need CAP_SYS_RESOURCE.
prlimit --pid "$DAEMON_PID" --nofile=$lim: || fail "prlimit"
close_failed=0
if timeout 60 python3 - "$MNT/tree" <<'PY'

import errno, os, sys
fds, errs = [], {}
for d in range(10):
    for f in range(100):
        try:
            fds.append(os.open(os.path.join(sys.argv[1], "d%d" % d, "f%d" % f),
                               os.O_RDONLY))
        except OSError as e:
            errs[e.errno] = errs.get(e.errno, 0) + 1
print("%d opened, errors: %s" % (len(fds),
      ", ".join("%s x%d" % (errno.errorcode[k], v) for k, v in errs.items())))
if not errs:
    sys.exit("1000 open files with a limit of a few dozen descriptors")
if set(errs) - {errno.EMFILE, errno.ENFILE}:
    sys.exit("errors other than EMFILE/ENFILE")
# What is open still reads, and closes: close(2) has no business failing
# with EMFILE (the daemon's flush must not need a descriptor to succeed).
bad_close = 0
for fd in fds:
    assert os.read(fd, 100).endswith(b"\n")
    try:
        os.close(fd)
    except OSError as e:
        bad_close += 1
        last = e
if bad_close:
    print("close(2) failed %d times of %d: %s" % (bad_close, len(fds), last))
    sys.exit(3)
PY
then :; else
	st=$?
	[ $st -eq 3 ] || fail "opening many files"
	close_failed=1	# reported at the end, once the rest is checked
fi
kill -0 "$DAEMON_PID" || fail "the daemon died at its descriptor limit"
# Recovered: once the releases are in and the kernel has forgotten the
# inodes (the daemon holds a descriptor for each inode the kernel caches,
# so a walk over more files than the limit needs the limit raised), small
# operations work again under the same limit.
readable() {
	echo 3 >/proc/sys/vm/drop_caches
	[ "$(cat "$MNT/tree/d9/f99" 2>/dev/null)" = 9/99 ]
}
wait_for "descriptors again after closing" readable
echo recovered >"$MNT/after" || fail "creating a file after the shortage"
assert_eq recovered "$(cat "$MNT/after")" "reading a new file after the shortage"
prlimit --pid "$DAEMON_PID" --nofile="$nofile": || fail "prlimit back"
assert_eq 100 "$(ls "$MNT/tree/d0" | wc -l)" "ls with the limit raised again"
ls -R "$MNT/tree" >/dev/null || fail "ls -R with the limit raised again"
compare_trees
unmount_fs
check_log 'Too many open files'

echo "--- a backing directory the daemon may not read"
# Root reads everything, so the daemon runs without CAP_DAC_OVERRIDE and
# CAP_DAC_READ_SEARCH; the caller (root) passes the kernel's checks, so
# what it sees is the daemon's answer.
printf '#!/bin/sh\nexec setpriv --bounding-set=-dac_override,-dac_read_search "%s" "$@"\n' \
	"$FUSE_IOSCHED" >"$T/capless"
chmod +x "$T/capless"
rm -rf "${BACKING:?}"/*
mkdir -p "$BACKING/d/sub"
echo x >"$BACKING/d/f"
FUSE_IOSCHED=$T/capless mount_fs
grep -q '^CapEff:.*0000000000000000' "/proc/$DAEMON_PID/status" && fail "no capabilities at all?"
ls "$MNT/d" >/dev/null || fail "ls before chmod"
chmod 000 "$BACKING/d"
sleep 1.1	# the entry and attribute timeout
for cmd in "ls $MNT/d" "cat $MNT/d/f" "touch $MNT/d/new" "ls $MNT/d/sub"; do
	fails_with "Permission denied" "in an unreadable directory" "$cmd"
done
[ -e "$BACKING/d/new" ] && fail "a file was created in an unreadable directory"
ls "$MNT" >/dev/null || fail "ls of the root"
chmod 755 "$BACKING/d"
sleep 1.1
assert_eq x "$(cat "$MNT/d/f")" "reading after chmod 755"
touch "$MNT/d/new" || fail "touch after chmod 755"
compare_trees
unmount_fs
check_log 'Permission denied'
[ $close_failed -eq 0 ] ||
	fail "close(2) of a file on the mount failed with EMFILE at the daemon's descriptor limit"
exit 0
