#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# -o writeback_cache lets the kernel keep writes: write(2) returns before
# any write request reaches the daemon, and fsync sends them (as the
# kernel's, pid 0).  Without it each write(2) is a request before it
# returns.  -o max_background=N bounds the asynchronous requests (here
# libaio direct writes) the daemon holds at once.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3 fio

# writes MODE: write 4 KiB, then fsync, noting the daemon's write requests
# before, after the write and after the fsync; checks them against MODE.
writes() {
	python3 - "$MNT/f" "$MNT/.control/stats" "$1" <<'PY'
import os, sys

def requests():
    for line in open(sys.argv[2]):
        w = line.split()
        if w and w[0] == "write":
            return int(w[w.index("requests") + 1])

fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
r0 = requests()
os.write(fd, b"w" * 4096)
r1 = requests()
os.fsync(fd)
r2 = requests()
os.close(fd)
print("%s: %d write requests before, %d after write(2), %d after fsync" %
      (sys.argv[3], r0, r1, r2))
if sys.argv[3] == "writethrough" and r1 <= r0:
    sys.exit("write(2) returned before its request reached the daemon")
if sys.argv[3] == "writeback" and r1 != r0:
    sys.exit("the kernel did not keep the write in its cache")
if r2 <= r0:
    sys.exit("no write request after fsync")
PY
}

mount_fs -o "config=$EMPTY_CONF"
writes writethrough || fail "without writeback_cache"
unmount_fs
: >"$LOG"
mount_fs -d -o "config=$EMPTY_CONF,writeback_cache"
writes writeback || fail "with writeback_cache"
assert_eq wwww "$(head -c 4 "$BACKING/f")" "data written back"
grep -q 'opcode: WRITE .* pid: 0$' "$LOG" ||
	fail "no write from the kernel (pid 0) in the FUSE debug output"
unmount_fs
check_log 'unique: [0-9]+, error: '

# max_background: asynchronous writes beyond it wait in the kernel.  Slow
# writes (hdd model, 1 MB/s) keep the daemon's hands full; it never holds
# more than N at once, and with a larger N it holds more than the small one.
for bg in 2 16; do
	: >"$LOG"
	mount_fs -o "config=$EMPTY_CONF,disk_model=hdd,mb_per_s=2" \
		-o "max_background=$bg"
	(cd "$T" && fio --name=w --filename="$MNT/g" --rw=randwrite --bs=64k \
		--size=1M --ioengine=libaio --direct=1 --iodepth=16 \
		--output="$T/fio.out") &
	fio_pid=$!
	most=0
	while kill -0 "$fio_pid" 2>/dev/null; do
		h=$(held write)
		[ "$h" -le "$bg" ] ||
			fail "max_background=$bg, and the daemon holds $h writes"
		[ "$h" -le "$most" ] || most=$h
		sleep 0.02
	done
	wait "$fio_pid" || fail "fio failed: $(cat "$T/fio.out")"
	echo "max_background=$bg: at most $most writes held"
	[ "$bg" -eq 2 ] || [ "$most" -gt 2 ] ||
		fail "max_background=$bg: never more than $most writes held"
	unmount_fs
	check_log
done
