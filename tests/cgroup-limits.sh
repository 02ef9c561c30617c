#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# blk-throttle on the mount: a reader in a group whose parent is limited
# to 10 MiB/s (blkio.throttle.read_bps_device or io.max, for BACKING's
# disk) reads through the mount at about that rate (5 to 15 MiB/s: the
# machine is shared), while a reader in the root group at the same time
# is not throttled; .control/trace names the group charged.  A limit
# removed from a live group frees a read already waiting for it; a group
# limited in writes still gets its fsync; and a daemon stopped with a
# throttled read waiting exits at once.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
dio_backing 160
cg_setup a b c
cg_limit "$CG" rbps $((10 * MIB))
dd if=/dev/urandom of="$BACKING/f" bs=1M count=40 status=none

mount_fs
trace_start "$T/trace"

# The unthrottled reader, in the root group, beside the throttled one.
(
	while :; do
		mib_per_s 40 dd if="$MNT/f" of=/dev/null bs=1M iflag=direct \
			status=none
	done
) >"$T/free" 2>&1 &
FREE_PID=$!
cleanup_push "kill $FREE_PID 2>/dev/null"
limited=$(mib_per_s 30 cg_run "$CG/a" dd if="$MNT/f" of=/dev/null bs=1M \
	count=30 iflag=direct status=none)
kill $FREE_PID
wait $FREE_PID 2>/dev/null || :
free=$(head -n 1 "$T/free")
echo "limited to 10 MiB/s: $limited MiB/s; beside it, unlimited: $free MiB/s"
in_band "$limited" 5 15 || fail "the limited reader read at $limited MiB/s"
in_band "$free" 40 1000000 || fail "the root group's reader read at $free MiB/s"
wait_for "the group in the trace" \
	grep -q " C  *RS .* cgroup $CG/a\$" "$T/trace"
grep -q " C  *RS .* cgroup /\$" "$T/trace" ||
	fail "no read of the root group in the trace"

# A limit lifted while a read waits: at 8 KiB/s, a 128 KiB read (one
# FUSE request, so that no other request of the group arrives meanwhile)
# leaves the group's budget 16 s in debt, which the next read waits out;
# lifted, the limit frees it within 1 s (the throttle asks the limits of
# waiting groups again every 0.25 s, cgroup.c reads them every 0.5 s).
cg_limit "$CG/b" rbps 8192
cg_start "$CG/b" dd if="$MNT/f" of=/dev/null bs=128k count=3 iflag=direct \
	status=none
B_PID=$CG_PID
[ "$(dd_wait_pos $B_PID 131072)" = 131072 ] ||
	fail "the reader of b did not read its first 128 KiB"
sleep 1
cg_limit "$CG/b" rbps 0
t0=$(date +%s)
wait $B_PID || fail "the reader of b failed"
t1=$(date +%s)
[ $((t1 - t0)) -le 8 ] ||
	fail "a lifted limit took $((t1 - t0)) s to free a waiting read"

# fsync waits for the group's throttled writes, which do get there.
cg_limit "$CG/c" wbps $MIB
timeout 60 sh -c 'echo $$ >"$0/cgroup.procs" && exec dd if=/dev/zero \
	of="$1" bs=256k count=8 conv=fsync status=none' "$CG_ROOT$CG/c" \
	"$MNT/w" || fail "write and fsync in a limited group"
cmp "$BACKING/w" "$MNT/w" || fail "the written file differs"

# Stopped with a read waiting 32 s (at 4 KiB/s, after a first 128 KiB):
# the daemon submits it and exits at once.
cg_limit "$CG/b" rbps 4096
cg_start "$CG/b" dd if="$MNT/f" of=/dev/null bs=128k count=3 iflag=direct \
	status=none 2>/dev/null
B_PID=$CG_PID
[ "$(dd_wait_pos $B_PID 131072)" = 131072 ] ||
	fail "the reader of b did not read its first 128 KiB"
trace_stop
kill -TERM "$DAEMON_PID"
wait_daemon_exit "SIGTERM with a throttled read"
wait "$DAEMON_PID" 2>/dev/null || :
DAEMON_PID=
wait $B_PID 2>/dev/null || :
check_log
