#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A burst of large direct writes and reads leaves the daemon small: 256
# writes of 1 MiB, 64 in flight, through direct backing descriptors, then
# as many reads; the daemon's resident set must be under 100 MB.  Their
# aligned buffers once came from posix_memalign, which glibc before 2.38 reuses badly when
# small allocations come between them (its bug 14581): the heap grew by
# about 1 MB a write and kept it, 260 MB after this burst (23 MB now).
# Not under a sanitizer, whose allocator keeps freed memory on purpose.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require fio nm
if nm -D "$FUSE_IOSCHED" | grep -Eq ' (__asan|__tsan|__msan)_'; then
	skip "a sanitizer's allocator keeps freed memory"
fi

dio_backing 160
mount_fs -o backing_io=direct
fio --name=burst --directory="$MNT" --rw=write --bs=1m --ioengine=libaio \
	--direct=1 --iodepth=16 --numjobs=4 --size=16m --loops=4 \
	--output="$T/fio.out" || { cat "$T/fio.out"; fail "fio failed"; }
assert_eq 256 "$(stat_of write completed)" "writes completed"
assert_eq 0 "$(held write)" "writes held after the burst"
# The writes are performed from the buffers they arrived in (loop.c); the
# reads get aligned buffers of their own (io.c).
fio --name=burst --directory="$MNT" --rw=read --bs=1m --ioengine=libaio \
	--direct=1 --iodepth=16 --numjobs=4 --size=16m --loops=4 \
	--output="$T/fio-read.out" || { cat "$T/fio-read.out"; fail "fio failed"; }
rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$DAEMON_PID/status")
echo "VmRSS after the burst: $rss kB"
[ "$rss" -lt 100000 ] || fail "the daemon holds $rss kB after a write burst"
unmount_fs
check_log
