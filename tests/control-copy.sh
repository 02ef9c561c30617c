# SPDX-License-Identifier: GPL-2.0-or-later
# Control files copy as they read: cp, tar (create and extract), rsync
# (when installed) and copy_file_range give what cat gives.  An open file's
# fstat reports the length of its content, in whole blocks, SEEK_DATA and
# SEEK_HOLE see one extent of data; the first read returns the content
# whose size fstat reported, and a write makes the next one fresh.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3 tar setpriv

C=$MNT/.control
# nobody must be able to walk to the mountpoint.
chmod 755 "$T"
mount_fs -o scheduler=deadline -o allow_other
# Some I/O, so that stats has counts; then the mount stays idle and every
# file reads the same each time.
dd if=/dev/urandom of="$MNT/f" bs=64k count=16 conv=fsync status=none
files="stats scheduler nr_requests backing_io backing_device log pid iosched/read_expire iosched/fifo_batch"
mkdir "$T/cp" "$T/cat" "$T/cp/iosched" "$T/cat/iosched"
for f in $files; do
	cp "$C/$f" "$T/cp/$f" || fail "cp $f"
	cat "$C/$f" >"$T/cat/$f"
	[ -s "$T/cat/$f" ] || fail "$f reads empty"
	cmp "$T/cat/$f" "$T/cp/$f" || fail "cp of $f differs from what cat read"
done

# tar takes the size from fstat after opening, and reads that much.
(cd "$MNT" && tar cf "$T/c.tar" $(printf '.control/%s ' $files)) 2>"$T/err" ||
	fail "tar c: $(cat "$T/err")"
[ -s "$T/err" ] && fail "tar c warned: $(cat "$T/err")"
mkdir "$T/x"
tar xf "$T/c.tar" -C "$T/x" || fail "tar x"
for f in $files; do
	cmp "$T/cat/$f" "$T/x/.control/$f" || fail "tar of $f differs"
done

if command -v rsync >/dev/null 2>&1; then
	rsync -a --exclude trace "$C/" "$T/rsync/" || fail "rsync"
	for f in $files; do
		cmp "$T/cat/$f" "$T/rsync/$f" || fail "rsync of $f differs"
	done
else
	echo "rsync not installed: not tried"
fi

# Onto the mount itself, which changes stats: last (copy_file_range within one file system).
cp "$C/scheduler" "$MNT/sched-copy" || fail "cp scheduler onto the mount"
cmp "$T/cat/scheduler" "$MNT/sched-copy" || fail "cp onto the mount differs"

python3 - "$C" "$MNT" <<'PY' || fail "descriptor checks"
import errno, os, sys
c, mnt = sys.argv[1], sys.argv[2]
fd = os.open(c + "/stats", os.O_RDONLY)
st = os.fstat(fd)
assert os.lseek(fd, 0, os.SEEK_DATA) == 0
assert os.lseek(fd, 5, os.SEEK_DATA) == 5
assert os.lseek(fd, 0, os.SEEK_HOLE) == st.st_size, st.st_size
try:
    os.lseek(fd, st.st_size, os.SEEK_DATA)
    raise AssertionError("SEEK_DATA at the end found data")
except OSError as e:
    assert e.errno == errno.ENXIO, e
os.lseek(fd, 0, os.SEEK_SET)
data = os.read(fd, 1 << 20)
assert len(data) == st.st_size, (len(data), st.st_size)
assert st.st_blocks * 512 >= st.st_size, (st.st_blocks, st.st_size)
# Another process (this one's child) sees the nominal size.
assert os.popen("stat -c %s " + c + "/stats").read().strip() == "4096"
os.close(fd)

# copy_file_range from a control file onto the mount.
src = os.open(c + "/scheduler", os.O_RDONLY)
dst = os.open(mnt + "/sched-cfr", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
n = 0
while True:
    try:
        k = os.copy_file_range(src, dst, 1 << 16)
    except OSError as e:
        assert e.errno in (errno.EXDEV, errno.EOPNOTSUPP), e
        k = os.write(dst, os.read(src, 1 << 16))
    if k == 0:
        break
    n += k
os.close(src)
os.close(dst)
assert open(mnt + "/sched-cfr", "rb").read() == open(c + "/scheduler", "rb").read()

def switch(name):
    with open(c + "/scheduler", "w") as w:
        w.write(name + "\n")

# The first read returns the content whose size fstat reported ...
fd = os.open(c + "/scheduler", os.O_RDONLY)
size = os.fstat(fd).st_size
switch("noop")
first = os.pread(fd, 4096, 0)
assert b"[deadline]" in first and len(first) == size, (first, size)
# ... and a read from 0 after that is fresh again.
assert b"[noop]" in os.pread(fd, 4096, 0)
os.close(fd)
# Without a stat of it, the first read is fresh, as in sysfs (the
# switch by another process: a path walk of ours would stat it).
fd = os.open(c + "/scheduler", os.O_RDONLY)
assert os.system("echo deadline >" + c + "/scheduler") == 0
assert b"[deadline]" in os.pread(fd, 4096, 0)
os.close(fd)
# A write through the descriptor makes the next fstat and read fresh.
fd = os.open(c + "/scheduler", os.O_RDWR)
os.fstat(fd)
os.pwrite(fd, b"noop\n", 0)
os.fstat(fd)
assert b"[noop]" in os.pread(fd, 4096, 0)
os.pwrite(fd, b"deadline\n", 0)
os.close(fd)
PY

# Another user copies what it may read, and its open files change no
# size that others see.
mkdir -m 777 "$T/nb"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
as_nobody cp "$C/scheduler" "$T/nb/scheduler" ||
	fail "cp of scheduler as another user"
cmp "$T/nb/scheduler" "$C/scheduler" || fail "nobody's copy of scheduler differs"
as_nobody timeout 30 sh -c 'exec 3<"$1/stats"; stat -L -c %s /dev/fd/3 >"$2.tmp"
	mv "$2.tmp" "$2"; while [ ! -e "$3" ]; do sleep 0.05; done' \
	sh "$C" "$T/nb/size" "$T/nb/done" &
nobody=$!
cleanup_push "kill $nobody 2>/dev/null"
wait_for "nobody's open of stats" test -e "$T/nb/size"
assert_eq 4096 "$(stat -c %s "$C/stats")" "stats' size while nobody has it open"
touch "$T/nb/done"
wait "$nobody" || fail "nobody's stat of stats"
unmount_fs
check_log
