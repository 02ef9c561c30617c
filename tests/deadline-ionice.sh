#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# deadline serves the idle class as mq-deadline does: while a best-effort
# reader keeps the (modelled) disk busy, an idle-class reader gets a small
# share of it (a loose bound: what slips in between the best-effort
# reader's requests on a loaded machine, against about half without
# classes); once the best-effort reader stops, the idle one gets the
# disk.  Progress is read from the readers' file positions
# (/proc/PID/fdinfo/0: dd reads if= as fd 0), so nothing interrupts them.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require ionice dd truncate
mount_fs -o scheduler=deadline,disk_model=hdd
grep -q '\[deadline\]' "$MNT/.control/scheduler" || fail "deadline is not active"

# Big enough that neither reader can finish in the test (the hdd model
# charges for the size read, sparse or not).
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
be0=$(wait_pos "$BE_PID" "$MIB")
[ -n "$be0" ] || fail "the best-effort reader is gone"
[ "$be0" -ge "$MIB" ] || fail "the best-effort reader is stuck at $be0"

ionice -c3 dd if="$MNT/idle" of=/dev/null bs=64k iflag=direct \
	status=none &
IDLE_PID=$!
cleanup_push "kill $IDLE_PID 2>/dev/null; wait $IDLE_PID 2>/dev/null"

be1=$(pos_of "$BE_PID")
sleep 3
be=$(pos_of "$BE_PID")
idle=$(pos_of "$IDLE_PID")
echo "while best-effort reads: best-effort read $((${be:-0} - ${be1:-0})), idle ${idle:-?}"
[ -n "$be" ] || fail "the best-effort reader is gone"
[ -n "$idle" ] || fail "the idle-class reader is gone"
be=$((be - be1))
[ "$be" -ge "$MIB" ] ||
	fail "the best-effort reader read only $be bytes"
# Without classes the two share the disk about evenly; with them the
# idle one gets about a sixth on the hdd model on a loaded machine.
[ $((idle * 2)) -le "$be" ] ||
	fail "the idle-class reader read $idle bytes beside $be best-effort"

# The best-effort reader stops: the idle-class one gets the disk.
kill "$BE_PID"
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
