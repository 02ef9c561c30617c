# SPDX-License-Identifier: GPL-2.0-or-later
# The daemon tells the scheduler that a process exited (procwatch.c, a
# pidfd per thread on the event loop), and anticipatory's wait for a
# process that exited ends by that exit.  At first an exit is taken as
# likely to be followed by another process reading close by (a shell
# script's next command): the wait goes on, and, nobody coming here, ends
# at antic_expire; after six such timeouts exit_no_coop is above half and
# the next exit ends its wait at once (antic_exits).  Each reader is one
# dd reading one block with O_DIRECT, after the wait for the one before
# has ended; a buffered writer keeps (asynchronous) writes queued, so that
# anticipatory has something to idle against.  Counters only: each wait's
# end is waited for, never timed.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require dd timeout fallocate
require_module "$MODULE_DIR" anticipatory

dio_backing 200
fallocate -l 64M "$BACKING/a"
sync
mount_fs -o disk_model=hdd,scheduler=anticipatory
# The longest wait there is, so that an exit comes long before the
# timeout even on a loaded machine; the read batch outlasts it.
echo 1000 >"$MNT/.control/iosched/antic_expire"
echo 60000 >"$MNT/.control/iosched/read_batch_expire"

timeout 120 dd if=/dev/zero of="$MNT/w" bs=64k count=100000 status=none &
W=$!
cleanup_push "kill $W 2>/dev/null"
wait_for "the writer" test -s "$BACKING/w"

sched() { awk -v c="$1" '$1 == "scheduler" && $2 == "anticipatory" &&
	$3 == c { print $4 }' "$MNT/.control/stats"; }
# No wait in progress: every one started has ended one way or another.
waits_over() {
	[ "$(sched antic_started)" -eq $(( $(sched antic_hits) +
		$(sched antic_close) + $(sched antic_timeouts) +
		$(sched antic_other) + $(sched antic_exits) )) ]
}

for k in $(seq 1 10); do
	timeout 30 dd if="$MNT/a" of=/dev/null bs=4k count=1 \
		skip=$((k * 1000)) iflag=direct status=none ||
		fail "reader $k failed"
	wait_for "the wait after reader $k to end" waits_over
done
kill "$W" 2>/dev/null || true
wait "$W" 2>/dev/null || true

grep -E '^(scheduler anticipatory|procwatch)' "$MNT/.control/stats"
[ "$(sched antic_started)" -ge 7 ] ||
	fail "only $(sched antic_started) waits: the readers were not waited for"
[ "$(sched antic_exits)" -ge 1 ] ||
	fail "no wait ended by an exit: exits not told, or not heard"
[ "$(sched antic_timeouts)" -ge 1 ] ||
	fail "no wait timed out: exits ended waits before any was learned"
exits=$(awk '$1 == "procwatch" { for (i = 2; i < NF; i += 2)
	if ($i == "exits") print $(i + 1) }' "$MNT/.control/stats")
[ "$exits" -ge 10 ] || fail "procwatch told $exits exits, expected 10 readers' at least"
check_log
