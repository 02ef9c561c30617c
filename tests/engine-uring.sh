#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# -o engine=uring: one ring thread and no workers; the elevator never has
# more ios in flight than threads says, however many the callers have;
# data, O_DIRECT, unaligned direct writes and a disk model's service time
# as with the workers; a refused io_uring_setup (seccomp here, as a
# sandbox or kernel.io_uring_disabled would refuse it) fails the mount in
# one line, with nothing mounted; an unknown engine is refused; SIGTERM
# finishes the writes queued and in flight first.  The core
# tests under this engine are tests/engine-uring-suite.sh.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require fio python3 timeout

out=$("$FUSE_IOSCHED" --print-config -o "module_dir=$MODULE_DIR,engine=uring" \
	2>&1) || {
	case $out in
	*"without liburing"*) skip "built without liburing" ;;
	*io_uring_setup*) skip_env "io_uring refused here: $out" ;;
	*) fail "--print-config -o engine=uring: $out" ;;
	esac
}
echo "$out" | grep -qx 'engine = "uring"' ||
	fail "--print-config does not show the engine"
fails_with "threads or uring" "for an unknown engine" \
	"$FUSE_IOSCHED --print-config -o engine=fast"

# Refused io_uring_setup: the mount fails before mounting, in one line.
st=0
python3 -c 'import errno, sys
from lib import exec_without_io_uring
exec_without_io_uring(sys.argv[1:], errno.EPERM)' "$FUSE_IOSCHED" -f \
	-o "module_dir=$MODULE_DIR,engine=uring" "$BACKING" "$MNT" \
	>"$T/refused" 2>&1 || st=$?
assert_eq 1 "$st" "exit status with io_uring_setup refused"
assert_eq "fuse-iosched: engine=uring: io_uring_setup: Operation not permitted" \
	"$(cat "$T/refused")" "the refusal's message"
! mountpoint -q "$MNT" || fail "mounted with io_uring refused"
# The thread pool does not need it.
python3 -c 'import errno, sys
from lib import exec_without_io_uring
exec_without_io_uring(sys.argv[1:], errno.EPERM)' "$FUSE_IOSCHED" \
	--print-config -o "module_dir=$MODULE_DIR" >/dev/null ||
	fail "engine=threads needs io_uring"

# Depth 2: 16 direct reads in flight from fio reach the backing file
# two at a time (the trace's dispatches less its completions).
head -c 4194304 /dev/urandom >"$BACKING/f"
mount_fs -o engine=uring,threads=2,scheduler=noop
grep -q "2 in flight on io_uring" "$LOG" || fail "no engine in the mount line"
comms=$(cat /proc/"$DAEMON_PID"/task/*/comm)
echo "$comms" | grep -qx iosched-ring || fail "no ring thread: $comms"
! echo "$comms" | grep -qx iosched-worker || fail "workers with uring"
timeout 60 cat "$MNT/.control/trace" >"$T/trace" & TR=$!
cleanup_push "kill $TR 2>/dev/null"
wait_line "$T/trace" '^# fuse-iosched trace'
timeout -k 5 60 fio --name=r --filename="$MNT/f" --ioengine=libaio --direct=1 \
	--rw=randread --bs=4k --iodepth=16 --size=4m --number_ios=2000 \
	--output=/dev/null || fail "fio randread failed"
timeout -k 5 60 fio --name=w --filename="$MNT/g" --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=4k --iodepth=16 --size=1m --number_ios=500 \
	--verify=crc32c --verify_state_save=0 --output=/dev/null ||
	fail "fio randwrite verify failed"
wait_line "$T/trace" ' C +R.*\[fio\]'
sleep 0.2	# the last events (not asserted on: a bound only)
kill $TR 2>/dev/null || true
max=$(awk '$6 == "D" { n++; if (n > m) m = n } $6 == "C" { n-- }
	END { print m + 0 }' "$T/trace")
echo "ios in flight at once: at most $max"
[ "$max" -ge 1 ] && [ "$max" -le 2 ] ||
	fail "ios in flight at once: $max, depth 2"

# Unaligned direct writes that share blocks (read-modify-writes), with
# aligned ones in flight beside them: nothing lost.
timeout -k 5 60 python3 - "$MNT/u" <<'PY' || fail "unaligned direct writes"
import os, sys, threading
path = sys.argv[1]
fd = os.open(path, os.O_CREAT | os.O_RDWR | os.O_DIRECT, 0o644)
size, step = 65536, 1000
def writer(k):
    for off in range(k * step // 4, size, step):
        os.pwrite(fd, bytes([65 + k]) * (step // 4), off)
ts = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
for t in ts: t.start()
for t in ts: t.join()
os.close(fd)
data = open(path, "rb").read()
for k in range(4):
    for off in range(k * step // 4, size, step):
        want = bytes([65 + k]) * (step // 4)
        got = data[off:off + step // 4]
        assert got == want[:len(got)], (k, off)
PY
cmp "$MNT/u" "$BACKING/u" || fail "mount and backing differ"
# Buffered writes onto an idle queue: the writer lends its buffer.
head -c 1048576 /dev/urandom >"$T/b"
timeout -k 5 60 dd if="$T/b" of="$MNT/b" bs=64k status=none ||
	fail "buffered writes"
cmp "$T/b" "$BACKING/b" || fail "buffered writes: data"
unmount_fs
check_log

# SIGTERM with writes queued and one in flight (the hdd model serves one
# at a time, the ring has room for two): the daemon finishes every one of
# them before it exits, and each writer is told its write succeeded.
# Half a turn at 100 rpm, 300 ms, for each write (three new files).
mount_fs -o engine=uring,threads=2,disk_model=hdd,rpm=100,mb_per_s=1
# All three writes received, one at least not done yet.
arrived() {
	awk '$1 == "write" { for (i = 2; i < NF; i += 2) v[$i] = $(i + 1)
		exit !(v["requests"] >= 3 && v["requests"] > v["completed"]) }' \
		"$MNT/.control/stats"
}
head -c 65536 /dev/urandom >"$T/w"
pids=
for k in 1 2 3; do
	timeout -k 5 60 python3 -c 'import os, sys
fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT)
assert os.write(fd, open(sys.argv[1], "rb").read()) == 65536' \
		"$T/w" "$MNT/w$k" 2>"$T/w$k.err" &
	pids="$pids $!"
done
wait_for "three writes, one pending" arrived
kill -TERM "$DAEMON_PID"
wait_daemon_exit SIGTERM
st=0; wait "$DAEMON_PID" || st=$?
DAEMON_PID=
assert_eq 0 "$st" "exit status after SIGTERM"
for p in $pids; do
	wait "$p" || fail "a write pending at SIGTERM failed: $(cat "$T"/w*.err)"
done
for k in 1 2 3; do
	cmp "$T/w" "$BACKING/w$k" || fail "w$k: not the data written"
done
check_log

# A disk model: each io completes at the end the model booked for it,
# not when its transfer is done (the first read too, the head idle).
mount_fs -o engine=uring,disk_model=hdd,seek_ms=0,rpm=600
timeout -k 5 60 python3 - "$MNT/f" <<'PY' || fail "hdd model under uring"
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
took = []
for off in (1 << 20, 3 << 20, 4096 * 10, 2 << 20):
    t0 = time.monotonic()
    assert os.preadv(fd, [buf], off) == 4096
    took.append(time.monotonic() - t0)
# Each elsewhere than the head: half a turn at 600 rpm, 50 ms.
assert min(took) >= 0.04, took
PY
unmount_fs
check_log
