# SPDX-License-Identifier: GPL-2.0-or-later
# -o threads=N starts N dispatch workers (threads named iosched-worker in
# /proc/PID/task), with a disk model as without, beside one timer thread
# and the throttle's releaser (iosched-throtl, none with -o groups=off);
# the trace thread starts with the first reader of .control/trace, one for
# all readers; -s serves FUSE in the main thread alone (no session
# threads), without it the session loop (daemon/loop.c, iosched-fuse)
# adds one whenever a request leaves none waiting, up to max_threads (10
# by default, as libfuse's loop), and with max_idle_threads=N the extra
# ones end once more than N are idle.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

# comm_count NAME: threads of the daemon called NAME.
comm_count() { cat /proc/"$DAEMON_PID"/task/*/comm | grep -cx "$1" || true; }
tasks() { ls /proc/"$DAEMON_PID"/task | wc -l; }
# ThreadSanitizer's runtime runs a thread of its own in the daemon.
extra=0
! grep -q __tsan_init "$FUSE_IOSCHED" || extra=1

for n in 1 3 7; do
	for dm in none hdd; do
		mount_fs -o "config=$EMPTY_CONF,threads=$n,disk_model=$dm"
		echo data >"$MNT/f$n"
		assert_eq "$n" "$(comm_count iosched-worker)" "workers at threads=$n ($dm)"
		assert_eq 1 "$(comm_count iosched-timer)" "timer threads"
		assert_eq 1 "$(comm_count iosched-throtl)" "throttle threads"
		assert_eq 0 "$(comm_count iosched-trace)" "trace threads, no reader"
		# Main, timer, releaser, workers, and one of libfuse's at least.
		[ "$(tasks)" -gt $((n + 3 + extra)) ] ||
			fail "threads=$n: $(tasks) threads, no libfuse worker"
		unmount_fs
	done
	mount_fs -s -o "config=$EMPTY_CONF,threads=$n,groups=off"
	echo data >"$MNT/f$n"
	assert_eq 0 "$(comm_count iosched-throtl)" "throttle threads, groups=off"
	assert_eq "$((n + 2 + extra))" "$(tasks)" "threads with -s and threads=$n"
	assert_eq data "$(cat "$MNT/f$n")" "data with -s"
	unmount_fs
done

# 4 x 64 writes of 192 KiB in flight (copied: too small to keep their
# receive buffer) fill the 32 MiB bound on queued copies, which the hdd
# model drains in seconds: the writers past it wait for room, each
# holding a session thread.
session_threads() { # EXPECTED-MIN EXPECTED-MAX -o OPTIONS
	lo=$1 hi=$2; shift 2
	mount_fs "$@"
	fio --name=t --directory="$MNT" --rw=randwrite --bs=192k \
		--ioengine=libaio --direct=1 --iodepth=64 --numjobs=4 \
		--size=12m >"$T/fio.out" 2>&1 &
	fio=$!
	enough() { [ "$(comm_count iosched-fuse)" -ge "$lo" ]; }
	wait_for "$lo session threads ($(comm_count iosched-fuse))" enough
	wait "$fio" || { cat "$T/fio.out"; fail "fio failed"; }
	n=$(comm_count iosched-fuse)
	echo "session threads with $*: $n"
	[ "$n" -le "$hi" ] || fail "$n session threads with $*, more than $hi"
}
require fio
session_threads 9 10 -o "config=$EMPTY_CONF,backing_io=buffered,max_background=256,disk_model=hdd,mb_per_s=10"
unmount_fs
session_threads 3 3 -o "config=$EMPTY_CONF,backing_io=buffered,max_background=256,disk_model=hdd,mb_per_s=10,max_threads=3"
unmount_fs
session_threads 9 10 -o "config=$EMPTY_CONF,backing_io=buffered,max_background=256,disk_model=hdd,mb_per_s=10,max_idle_threads=1"
few() { [ "$(comm_count iosched-fuse)" -le 2 ]; }
wait_for "idle session threads to end ($(comm_count iosched-fuse))" few
unmount_fs

# Two readers of the trace: one trace thread, started with the first.
mount_fs -o "config=$EMPTY_CONF"
timeout 30 cat "$MNT/.control/trace" >"$T/t1" & R1=$!
cleanup_push "kill $R1 2>/dev/null"
timeout 30 cat "$MNT/.control/trace" >"$T/t2" & R2=$!
cleanup_push "kill $R2 2>/dev/null"
for i in $(seq 50); do
	[ -s "$T/t1" ] && [ -s "$T/t2" ] && break
	sleep 0.1
done
echo data >"$MNT/traced"
assert_eq 1 "$(comm_count iosched-trace)" "trace threads, two readers"
kill $R1 $R2
wait $R1 $R2 2>/dev/null || true
unmount_fs
check_log
