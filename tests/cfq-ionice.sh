#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cfq keeps the contract of `ionice -c3`: while a best-effort reader keeps
# the (modelled) disk busy, an idle-class reader gets nothing; once
# the best-effort reader stops for longer than the grace period (100 ms),
# the idle-class reader gets the disk.  Progress is read from the readers'
# file positions (/proc/PID/fdinfo/0: dd reads if= as fd 0), so nothing
# interrupts them.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require ionice dd truncate
mount_fs -o scheduler=cfq,disk_model=hdd
grep -q '\[cfq\]' "$MNT/.control/scheduler" || fail "cfq is not active"

# Big enough that the best-effort reader cannot finish in the test (the
# hdd model charges for the size read, sparse or not).
for f in be idle; do
	truncate -s 4G "$BACKING/$f" || fail "cannot make $f"
done

# Bytes read so far by the dd of pid.
pos_of() {
	sed -n 's/^pos:[[:space:]]*//p' "/proc/$1/fdinfo/0" 2>/dev/null
}

ionice -c2 -n4 dd if="$MNT/be" of=/dev/null bs=64k iflag=direct \
	status=none &
BE_PID=$!
cleanup_push "kill $BE_PID 2>/dev/null; wait $BE_PID 2>/dev/null"
sleep 0.5
ionice -c3 dd if="$MNT/idle" of=/dev/null bs=64k iflag=direct \
	status=none &
IDLE_PID=$!
cleanup_push "kill $IDLE_PID 2>/dev/null; wait $IDLE_PID 2>/dev/null"

sleep 3
be=$(pos_of "$BE_PID")
idle=$(pos_of "$IDLE_PID")
echo "while best-effort reads: best-effort at ${be:-?}, idle at ${idle:-?}"
[ -n "$be" ] && [ -n "$idle" ] || fail "a reader is gone"
[ "$be" -gt 0 ] || fail "the best-effort reader read nothing"
# Nothing, but for what a stall of the best-effort reader longer than the
# grace lets in on a loaded machine: allow 4 requests of 64 KiB.  Forcing
# one idle request every 250 ms, as cfq once did, makes 12 in 3 s.
[ "$idle" -le 262144 ] ||
	fail "the idle-class reader read $idle bytes under load"

# The best-effort reader stops: the idle-class one gets its turn.
kill "$BE_PID"
wait "$BE_PID" 2>/dev/null || true
i=0
while [ "$(pos_of "$IDLE_PID")" = 0 ] && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
idle=$(pos_of "$IDLE_PID")
echo "after best-effort stopped: idle at ${idle:-?}"
[ -n "$idle" ] && [ "$idle" -gt 0 ] ||
	fail "the idle-class reader got nothing after the best-effort one stopped"
kill "$IDLE_PID"
wait "$IDLE_PID" 2>/dev/null || true

unmount_fs
check_log
