# SPDX-License-Identifier: GPL-2.0-or-later
# -o threads=N starts N dispatch workers (threads named iosched-worker in
# /proc/PID/task), with a disk model as without, beside one timer thread
# and the throttle's releaser (iosched-throtl, none with -o groups=off);
# the trace thread starts with the first reader of .control/trace, one for
# all readers; -s serves FUSE in the main thread alone (no libfuse worker
# threads), without it libfuse adds its own.
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
