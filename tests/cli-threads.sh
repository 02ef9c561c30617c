# SPDX-License-Identifier: GPL-2.0-or-later
# -o threads=N starts N dispatch workers (threads named iosched-worker in
# /proc/PID/task), with a disk model as without, beside one timer and one
# trace thread; -s serves FUSE in the main thread alone (no libfuse worker
# threads), without it libfuse adds its own.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

: >"$T/empty.conf"
# comm_count NAME: threads of the daemon called NAME.
comm_count() { cat /proc/"$DAEMON_PID"/task/*/comm | grep -cx "$1" || true; }
tasks() { ls /proc/"$DAEMON_PID"/task | wc -l; }
# ThreadSanitizer's runtime runs a thread of its own in the daemon.
extra=0
! grep -q __tsan_init "$FUSE_IOSCHED" || extra=1

for n in 1 3 7; do
	for dm in none hdd; do
		mount_fs -o "config=$T/empty.conf,threads=$n,disk_model=$dm"
		echo data >"$MNT/f$n"
		assert_eq "$n" "$(comm_count iosched-worker)" "workers at threads=$n ($dm)"
		assert_eq 1 "$(comm_count iosched-timer)" "timer threads"
		assert_eq 1 "$(comm_count iosched-trace)" "trace threads"
		# Main, timer, trace, workers, and at least one of libfuse's.
		[ "$(tasks)" -gt $((n + 3 + extra)) ] ||
			fail "threads=$n: $(tasks) threads, no libfuse worker"
		unmount_fs
	done
	mount_fs -s -o "config=$T/empty.conf,threads=$n"
	echo data >"$MNT/f$n"
	assert_eq "$((n + 3 + extra))" "$(tasks)" "threads with -s and threads=$n"
	assert_eq data "$(cat "$MNT/f$n")" "data with -s"
	unmount_fs
done
check_log
