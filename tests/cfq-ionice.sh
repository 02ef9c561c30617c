#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cfq keeps the contract of `ionice -c3`: while a best-effort reader keeps
# the (modelled) disk busy, an idle-class reader gets nothing; once
# the best-effort reader stops for longer than the grace period (100 ms),
# the idle-class reader gets the disk.  Progress is read from the readers'
# file positions (/proc/PID/fdinfo/0: dd reads if= as fd 0), so nothing
# interrupts them.  Each half asserts that the reader it counts on really
# read (the best-effort one during the first, the idle one after), so
# neither can pass on a reader that is gone or stuck.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require ionice dd truncate
mount_fs -o scheduler=cfq,disk_model=hdd
grep -q '\[cfq\]' "$MNT/.control/scheduler" || fail "cfq is not active"

# Big enough that the best-effort reader cannot finish in the test (the
# hdd model charges for the size read, sparse or not).
for f in be idle; do
	truncate -s 4G "$BACKING/$f" || fail "cannot make $f"
done

MIB=1048576

# Bytes read so far by the dd of pid; empty (not an error) once it is gone.
pos_of() {
	sed -n 's/^pos:[[:space:]]*//p' "/proc/$1/fdinfo/0" 2>/dev/null || :
}

# wait_pos PID BYTES: wait (up to 10 s) until the dd of PID has read
# BYTES; its position, or empty if it is gone.
wait_pos() {
	i=0
	while p=$(pos_of "$1") && [ -n "$p" ] && [ "$p" -lt "$2" ] &&
	      [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	pos_of "$1"
}

ionice -c2 -n4 dd if="$MNT/be" of=/dev/null bs=64k iflag=direct \
	status=none &
BE_PID=$!
cleanup_push "kill $BE_PID 2>/dev/null; wait $BE_PID 2>/dev/null"
# The best-effort reader owns the disk before the idle one starts.
be0=$(wait_pos "$BE_PID" "$MIB")
[ -n "$be0" ] || fail "the best-effort reader is gone"
[ "$be0" -ge "$MIB" ] || fail "the best-effort reader is stuck at $be0"

ionice -c3 dd if="$MNT/idle" of=/dev/null bs=64k iflag=direct \
	status=none &
IDLE_PID=$!
cleanup_push "kill $IDLE_PID 2>/dev/null; wait $IDLE_PID 2>/dev/null"

sleep 3
be=$(pos_of "$BE_PID")
idle=$(pos_of "$IDLE_PID")
echo "while best-effort reads: best-effort at ${be:-?}, idle at ${idle:-?}"
[ -n "$be" ] || fail "the best-effort reader is gone"
[ -n "$idle" ] || fail "the idle-class reader is gone"
# The disk was busy: the best-effort reader went on reading.
[ "$be" -ge $((be0 + MIB)) ] ||
	fail "the best-effort reader read only $((be - be0)) bytes in 3 s"
# Nothing, but for what a stall of the best-effort reader longer than the
# grace lets in on a loaded machine: allow 4 requests of 64 KiB.  Forcing
# one idle request every 250 ms, as cfq once did, makes 12 in 3 s.
[ "$idle" -le 262144 ] ||
	fail "the idle-class reader read $idle bytes under load"

# The best-effort reader stops: the idle-class one gets its turn, and
# reads far more than the grace let in while the other read.
kill "$BE_PID"
# Killed: its status is not 0, and says nothing; the position below does.
wait "$BE_PID" 2>/dev/null || :
[ -z "$(pos_of "$BE_PID")" ] || fail "the best-effort reader did not stop"
after=$(wait_pos "$IDLE_PID" $((idle + 4 * MIB)))
echo "after best-effort stopped: idle at ${after:-?}"
[ -n "$after" ] || fail "the idle-class reader is gone"
[ "$after" -ge $((idle + 4 * MIB)) ] ||
	fail "the idle-class reader read only $((after - idle)) bytes in 10 s after the best-effort one stopped"
kill "$IDLE_PID"
wait "$IDLE_PID" 2>/dev/null || :

unmount_fs
check_log
