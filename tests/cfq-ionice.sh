#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cfq keeps the contract of `ionice -c3`: while a best-effort reader keeps
# the (modelled) disk busy, an idle-class reader gets nothing; once
# the best-effort reader stops for longer than the grace period (100 ms),
# the idle-class reader gets the disk.  Each half asserts that the reader
# it counts on really read (the best-effort one during the first, the idle
# one after), so neither can pass on a reader that is gone or stuck.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require ionice dd truncate
mount_fs -o scheduler=cfq,disk_model=hdd
grep -q '\[cfq\]' "$MNT/.control/scheduler" || fail "cfq is not active"

idle_class_start
sleep 3
be=$(dd_pos "$BE_PID")
idle=$(dd_pos "$IDLE_PID")
echo "while best-effort reads: best-effort at ${be:-?}, idle at ${idle:-?}"
[ -n "$be" ] || fail "the best-effort reader is gone"
[ -n "$idle" ] || fail "the idle-class reader is gone"
# The disk was busy: the best-effort reader went on reading.
[ "$be" -ge $((BE0 + MIB)) ] ||
	fail "the best-effort reader read only $((be - BE0)) bytes in 3 s"
# Nothing, but for what a stall of the best-effort reader longer than the
# grace lets in on a loaded machine: allow 4 requests of 64 KiB.  Forcing
# one idle request every 250 ms, as cfq once did, makes 12 in 3 s.
[ "$idle" -le 262144 ] ||
	fail "the idle-class reader read $idle bytes under load"

# The best-effort reader stops: the idle-class one gets its turn, and
# reads far more than the grace let in while the other read.
idle_class_stop "$idle"

unmount_fs
check_log
