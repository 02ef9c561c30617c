#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# deadline serves the idle class as mq-deadline does: while a best-effort
# reader keeps the (modelled) disk busy, an idle-class reader gets a small
# share of it (a loose bound: what slips in between the best-effort
# reader's requests on a loaded machine, against about half without
# classes); once the best-effort reader stops, the idle one gets the disk.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require ionice dd truncate
mount_fs -o scheduler=deadline,disk_model=hdd
grep -q '\[deadline\]' "$MNT/.control/scheduler" || fail "deadline is not active"

idle_class_start
be1=$(dd_pos "$BE_PID")
sleep 3
be=$(dd_pos "$BE_PID")
idle=$(dd_pos "$IDLE_PID")
echo "while best-effort reads: best-effort read $((${be:-0} - ${be1:-0})), idle ${idle:-?}"
if [ -z "$be" ] || [ -z "$be1" ]; then
	fail "the best-effort reader is gone"
fi
[ -n "$idle" ] || fail "the idle-class reader is gone"
be=$((be - be1))
[ "$be" -ge "$MIB" ] || fail "the best-effort reader read only $be bytes"
# Without classes the two share the disk about evenly; with them the
# idle one gets about a sixth on the hdd model on a loaded machine.
[ $((idle * 2)) -le "$be" ] ||
	fail "the idle-class reader read $idle bytes beside $be best-effort"

idle_class_stop "$idle"

unmount_fs
check_log
