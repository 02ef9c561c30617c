#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A copy of a file being written is never all zeros.  Data still dirty in
# the mount's page cache (write(2) under writeback_cache; a shared
# writable mapping without it) is not in BACKING yet, and the kernel does
# not write it back before asking for holes: neither SEEK_DATA/SEEK_HOLE
# nor st_blocks may make it look like one to cp, tar --sparse or
# rsync --sparse.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require python3 cp tar cmp rsync

SIZE=1000000
head -c "$SIZE" /dev/urandom >"$T/src"

# writer MODE NAME: a process that writes $T/src to MNT/NAME (write(2);
# write(2) appending to a file that exists; or through a shared mapping of
# the file ftruncated to size), touches $T/ready, and keeps the file open
# (and mapped) until $T/done exists.
cat >"$T/writer.py" <<'PY'
import mmap, os, sys, time
mode, path, src, ready, done = sys.argv[1:]
data = open(src, "rb").read()
if mode == "append":
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
else:
    fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
if mode != "mmap":
    os.write(fd, data)
else:
    os.ftruncate(fd, len(data))
    m = mmap.mmap(fd, len(data), mmap.MAP_SHARED,
                  mmap.PROT_READ | mmap.PROT_WRITE)
    m[:] = data
open(ready, "w").close()
for _ in range(1200):		# 60 s at most
    if os.path.exists(done):
        break
    time.sleep(0.05)
if mode == "mmap":
    m.close()
os.close(fd)
PY

# The mount answers hole queries of a file being written as all data.
cat >"$T/seek.py" <<'PY'
import os, sys
path, size = sys.argv[1], int(sys.argv[2])
fd = os.open(path, os.O_RDONLY)
assert os.lseek(fd, 0, os.SEEK_DATA) == 0, "SEEK_DATA 0"
assert os.lseek(fd, 4096, os.SEEK_DATA) == 4096, "SEEK_DATA 4096"
assert os.lseek(fd, 0, os.SEEK_HOLE) == size, os.lseek(fd, 0, os.SEEK_HOLE)
try:
    os.lseek(fd, size, os.SEEK_DATA)
    raise AssertionError("SEEK_DATA at the end")
except OSError as e:
    assert e.errno == 6, e	# ENXIO
PY

WRITER_PID=
writer_stop() {
	: >"$T/done"
	[ -z "$WRITER_PID" ] || wait "$WRITER_PID" || fail "the writer failed"
	WRITER_PID=
	rm -f "$T/done" "$T/ready"
}
cleanup_push ': >"$T/done"'

# still_dirty NAME: BACKING/NAME does not hold the data yet, so that a
# right copy cannot have come from it.
still_dirty() { ! cmp -s "$T/src" "$BACKING/$1"; }

# tool MODE TOOL: while a writer of MODE holds a file whose data is still
# dirty, copy it with TOOL (or ask for its holes, TOOL seek), then compare
# the copy with the source.  One file per tool: the kernel writes the
# pages back at the first close(2) of any descriptor of the file
# (fuse_flush), and may on its own (a sync elsewhere): then try again
# with a new file, a few times.
tool() {
	mode=$1 how=$2
	for try in 1 2 3; do
		name=$mode-$how-$try
		rm -rf "$T/out"
		mkdir "$T/out"
		if [ "$mode" = append ]; then
			# The kernel has its attributes, st_blocks 0 among them.
			: >"$MNT/$name"
			stat "$MNT/$name" >/dev/null
		fi
		python3 "$T/writer.py" "$mode" "$MNT/$name" "$T/src" \
			"$T/ready" "$T/done" &
		WRITER_PID=$!
		wait_for "the $mode writer" test -e "$T/ready"
		if ! still_dirty "$name"; then
			writer_stop
			continue
		fi
		case $how in
		seek)
			blocks=$(stat -c %b "$MNT/$name")
			[ "$blocks" -gt 0 ] ||
				fail "$mode: st_blocks 0 with dirty data"
			python3 "$T/seek.py" "$MNT/$name" "$SIZE" ||
				fail "$mode: hole queries of a file being written"
			writer_stop
			return 0 ;;
		cp)
			cp "$MNT/$name" "$T/out/copy" || fail "$mode: cp" ;;
		tar)
			tar --sparse -cf "$T/out/a.tar" -C "$MNT" "$name" ||
				fail "$mode: tar"
			tar -xf "$T/out/a.tar" -C "$T/out" || fail "$mode: untar"
			mv "$T/out/$name" "$T/out/copy" ;;
		rsync)
			rsync --sparse "$MNT/$name" "$T/out/copy" ||
				fail "$mode: rsync" ;;
		esac
		writer_stop
		cmp "$T/src" "$T/out/copy" ||
			fail "$mode: $how made a wrong copy of a file being written"
		cmp "$T/src" "$BACKING/$name" || fail "$mode: data lost"
		return 0
	done
	fail "$mode: the data never stayed dirty long enough for $how"
}

copies() {
	for how in seek cp tar rsync; do
		tool "$1" "$how"
	done
}

mount_fs -o writeback_cache
copies write
copies append
unmount_fs
check_log

mount_fs
copies mmap
unmount_fs
check_log
