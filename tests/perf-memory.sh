#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Memory stays bounded under a backlog and goes back once idle.  First, a
# process's small writes onto an idle queue are not copied at all.  Another
# user (allow_other) writes 64 MiB in 1 MiB O_DIRECT writes, 64 in
# flight, to a mount whose hdd disk model serves them slower than they
# arrive, so that the queue fills.  The copies of queued writes must stay
# within their limit (.control/stats: copy_peak <= copy_limit, and some
# writer waited for room), every write must land, and once the queue is
# idle the daemon must give the burst's memory back (a trim counted, and
# VmRSS polled until under 32 MB: a bound, not a time).
# Not under a sanitizer, whose allocator keeps freed memory on purpose.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require fio nm setpriv
if nm -D "$FUSE_IOSCHED" | grep -Eq ' (__asan|__tsan|__msan)_'; then
	skip "a sanitizer's allocator keeps freed memory"
fi

chmod 755 "$T"
# A process's writes onto an idle queue are served from libfuse's buffer:
# no copy, whatever their size.
mount_fs -o scheduler=noop
dd if=/dev/urandom of="$MNT/small" bs=4k count=64 status=none
assert_eq 0 "$(stat_of memory copy_peak)" "bytes copied for writes onto an idle queue"
cmp "$MNT/small" "$BACKING/small" || fail "lent writes differ in the backing file"
unmount_fs
rm -f "$BACKING/small"

dio_backing 160
mkdir -m 0777 "$BACKING/u"
mount_fs -o allow_other,backing_io=direct,disk_model=hdd,mb_per_s=400,scheduler=noop
setpriv --reuid=65534 --regid=65534 --clear-groups \
	fio --name=burst --directory="$MNT/u" --rw=write --bs=1m \
	--ioengine=libaio --direct=1 --iodepth=16 --numjobs=4 --size=16m \
	>"$T/fio.out" 2>&1 || { cat "$T/fio.out"; fail "fio failed"; }
assert_eq 64 "$(stat_of write completed)" "writes completed"
assert_eq 0 "$(held write)" "writes held after the burst"
for i in 0 1 2 3; do
	assert_eq 16777216 "$(stat -c %s "$MNT/u/burst.$i.0")" "size of file $i"
done
peak=$(stat_of memory copy_peak)
limit=$(stat_of memory copy_limit)
echo "copies: peak $peak of $limit, $(stat_of memory copy_waits) waits"
[ "$peak" -gt 0 ] && [ "$peak" -le "$limit" ] ||
	fail "queued copies peaked at $peak bytes, limit $limit"
[ "$(stat_of memory copy_waits)" -gt 0 ] ||
	fail "no writer waited for room: the backlog never reached the limit"
assert_eq 0 "$(stat_of memory copy_bytes)" "copied bytes once idle"

rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$DAEMON_PID/status"; }
echo "VmRSS after the burst: $(rss) kB"
trimmed() { [ "$(stat_of memory trims)" -gt 0 ]; }
wait_for "a trim once idle: $(grep '^memory' "$MNT/.control/stats")" trimmed
under() { [ "$(rss)" -lt 32768 ]; }
wait_for "VmRSS under 32 MB once idle (now $(rss) kB)" under
echo "VmRSS once idle: $(rss) kB"
unmount_fs
check_log
