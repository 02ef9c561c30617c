#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# O_DIRECT reads and writes, aligned and not, under each backing_io mode:
# what FUSE lets an application ask (any offset, length and buffer) works
# whether the backing descriptor is buffered or direct, and concurrent
# unaligned writes that share blocks lose nothing (the read-modify-write
# of partial blocks excludes other writes).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require python3 fio
dio_backing
FSX=$top_builddir/tests/fsx
NOPS=2000 RMW_SIZE=102400
[ -n "${TEST_QUICK:-}" ] && NOPS=800 RMW_SIZE=51200
head -c 1048576 /dev/urandom >"$T/r"

for mode in auto direct buffered; do
	mount_fs -o "backing_io=$mode"
	assert_eq "$mode" "$(cat "$MNT/.control/backing_io")" ".control/backing_io"

	dd if="$T/r" of="$MNT/d" bs=4096 oflag=direct status=none || fail "$mode: dd oflag=direct"
	cmp "$T/r" "$BACKING/d" || fail "$mode: direct write data"
	dd if="$MNT/d" of="$T/back" bs=4096 iflag=direct status=none || fail "$mode: dd iflag=direct"
	cmp "$T/r" "$T/back" || fail "$mode: direct read data"
	# Not a multiple of the block size, write-only (the read-modify-write
	# needs a descriptor that reads), growing the file by odd amounts.
	dd if="$T/r" of="$MNT/d2" bs=1000 count=7 oflag=direct status=none || fail "$mode: dd bs=1000 oflag=direct"
	assert_eq 7000 "$(stat -c %s "$BACKING/d2")" "$mode: size after unaligned appends"
	cmp -n 7000 "$T/r" "$BACKING/d2" || fail "$mode: unaligned direct write data"

	python3 - "$MNT" "$BACKING" <<'PY' || fail "$mode: python O_DIRECT"
import mmap, os, sys, threading
m, b = sys.argv[1], sys.argv[2]
fd = os.open(os.path.join(m, "u"), os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o644)
# An unaligned length from an unaligned buffer at an unaligned offset.
data = os.urandom(12345)
assert os.pwrite(fd, data, 777) == len(data)
buf = mmap.mmap(-1, 16384)               # page aligned for the read
n = os.preadv(fd, [buf], 0)
assert n == 777 + len(data), n
assert buf[777:777 + len(data)] == data
# A read across the end of the file, from an odd offset.
assert os.pread(fd, 500, 13000) == data[13000 - 777:]
# Inside one block, past the end: the file grows to exactly there.
assert os.pwrite(fd, b"x" * 3, 13200) == 3
assert os.fstat(fd).st_size == 13203
os.close(fd)
assert open(os.path.join(b, "u"), "rb").read()[777:13122] == data
# Direct and cached views agree after a direct write.
with open(os.path.join(m, "u"), "rb") as f:
    assert f.read()[777:13122] == data

# Four writers, each its own O_DIRECT descriptor, write 100-byte records
# interleaved so that every 512-byte block holds records of all four.
REC, W, ROUNDS, N = 100, 4, 30, 40
path = os.path.join(m, "shared")
os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o644))
def writer(w):
    fd = os.open(path, os.O_RDWR | os.O_DIRECT)
    for r in range(ROUNDS):
        for i in range(N):
            rec = bytes([65 + w]) * (REC - 4) + b"%03d\n" % r
            assert os.pwrite(fd, rec, (i * W + w) * REC) == REC
    os.close(fd)
ts = [threading.Thread(target=writer, args=(w,)) for w in range(W)]
for t in ts: t.start()
for t in ts: t.join()
got = open(os.path.join(b, "shared"), "rb").read()
assert len(got) == N * W * REC, len(got)
for i in range(N * W):
    w = i % W
    want = bytes([65 + w]) * (REC - 4) + b"%03d\n" % (ROUNDS - 1)
    assert got[i * REC:(i + 1) * REC] == want, (i, got[i * REC:(i + 1) * REC])
PY
	# The same with asynchronous direct I/O, which FUSE sends in parallel
	# (synchronous writes to one file it sends one at a time): 100-byte
	# writes, 32 in flight, five to a block, then read back and checked.
	for rw in write randwrite; do
		timeout 50 fio --name=rmw --verify_state_save=0 --filename="$MNT/rmw" --size=$RMW_SIZE \
			--bs=100 --rw=$rw --ioengine=libaio --iodepth=32 \
			--direct=1 --verify=crc32c --do_verify=1 \
			--output="$T/fio.out" || {
			cat "$T/fio.out"; fail "$mode: fio $rw bs=100 direct=1 verify"; }
	done
	# fsx with O_DIRECT at any offset and length, beside buffered I/O
	# and mmap on a second descriptor.
	timeout 50 "$FSX" -d -U -q -N "$NOPS" "$MNT/fsx" ||
		fail "$mode: fsx -d -U failed (status $?)"
	cmp "$MNT/fsx" "$BACKING/fsx" || fail "$mode: fsx file differs"
	unmount_fs
	rm -f "$BACKING"/*
done
check_log
