# SPDX-License-Identifier: GPL-2.0-or-later
# SIGTERM (and SIGINT) to a foreground daemon unmount and exit 0, after
# finishing the writes already accepted: with the hdd disk model at
# 1 MB/s, three writers of 1 MiB writes keep writes queued and in flight
# when the signal arrives; those are completed and acknowledged, and every
# byte a writer was told is written is in the backing file.  Control
# files and directories held open across the signal never get their
# release: the daemon frees them itself (a sanitized build's leak check
# fails the exit status).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3

dd if=/dev/urandom of="$T/src" bs=1M count=4 status=none
# Writes queued or in flight, now.
pending() { [ "$(held write)" -ge 3 ]; }
# writer FILE OUT: write $T/src to FILE in 1 MiB writes, noting in OUT
# after each one how many bytes have been acknowledged.
writer() {
	python3 -c '
import os, sys
data = open(sys.argv[1], "rb").read()
done = 0
open(sys.argv[3], "w").write("0\n")
try:
    fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    while done < len(data):
        done += os.write(fd, data[done:done + 1048576])
        open(sys.argv[3], "w").write("%d\n" % done)
except OSError:
    pass
' "$T/src" "$1" "$2"
}

for sig in TERM INT; do
	: >"$LOG"
	# One worker: one write in flight, the others queued behind it.
	mount_fs -o "config=$EMPTY_CONF,disk_model=hdd,mb_per_s=1,threads=1"
	pids=
	for k in 1 2 3; do
		writer "$MNT/f$k" "$T/acked$k" 2>"$T/w$k.err" &
		pids="$pids $!"
	done
	wait_for "writes pending" pending
	for k in 1 2 3; do eval "a0_$k=\$(cat "\$T/acked$k")"; done
	exec 3<"$MNT/.control/stats" 4<"$MNT/.control/scheduler" 5<"$MNT"
	kill -s "$sig" "$DAEMON_PID"
	wait_daemon_exit "SIG$sig"
	st=0; wait "$DAEMON_PID" || st=$?
	DAEMON_PID=
	exec 3<&- 4<&- 5<&-
	assert_eq 0 "$st" "SIG$sig: exit status"
	mountpoint -q "$MNT" && fail "SIG$sig: still mounted"
	grep -q " $MNT " /proc/mounts && fail "SIG$sig: still in /proc/mounts"
	# The writers end (their next write fails: nothing is mounted).
	for p in $pids; do wait "$p" || true; done
	for k in 1 2 3; do
		n=$(cat "$T/acked$k")
		size=$(stat -c %s "$BACKING/f$k" 2>/dev/null || echo 0)
		[ "$size" -eq 0 ] || cmp -n "$size" "$T/src" "$BACKING/f$k" ||
			fail "SIG$sig: f$k differs from what was written"
		[ "$size" -ge "$n" ] ||
			fail "SIG$sig: writer $k was told $n bytes, f$k has $size"
		# Its write pending at the signal was finished and acknowledged.
		eval "a0=\$a0_$k"
		want=$((a0 + 1048576))
		[ "$want" -le 4194304 ] || want=4194304
		echo "SIG$sig: writer $k: $a0 bytes acknowledged at the signal, $n at the end"
		[ "$n" -ge "$want" ] ||
			fail "SIG$sig: writer $k's write pending at the signal was not finished"
		rm -f "$BACKING/f$k"
	done
done
check_log
exit 0
