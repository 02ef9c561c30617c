#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Another user (65534, on an allow_other mount) reads from more groups
# than the daemon keeps (CGROUP_MAX, 1024) and from more processes than
# it caches: the daemon forgets the least recently used groups (and says
# so, once), its memory stays bounded, and a group seen after all that is
# still told apart: its limit applies, and the trace names it.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require setpriv nm
dio_backing 64
cg_setup g
N=1100
dd if=/dev/urandom of="$BACKING/f" bs=1M count=20 status=none
chmod 755 "$T"
chmod 644 "$BACKING/f"

mount_fs -o allow_other
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$DAEMON_PID/status"; }
before=$(rss)
cleanup_push "rmdir '$CG_ROOT$CG'/g/*/ 2>/dev/null"
i=0
while [ $i -lt $N ]; do
	mkdir "$CG_ROOT$CG/g/$i" || fail "cannot make group $i"
	i=$((i + 1))
done
# One process per group, each a new pid, each reading as 65534.
i=0
while [ $i -lt $N ]; do
	sh -c 'echo $$ >"$0/cgroup.procs" && exec setpriv --reuid=65534 \
		--regid=65534 --clear-groups dd if="$1" of=/dev/null bs=4k \
		count=1 iflag=direct status=none' "$CG_ROOT$CG/g/$i" "$MNT/f" ||
		fail "the read in group $i failed"
	i=$((i + 1))
done
kill -0 "$DAEMON_PID" || fail "the daemon died"
after=$(rss)
echo "daemon RSS: $before KiB before, $after KiB after $N groups"
# A sanitizer's allocator keeps freed memory (ASan's quarantine): the
# bound holds only without one; the table's bound is checked below.
if ! nm -D "$FUSE_IOSCHED" | grep -Eq ' (__asan|__tsan|__msan)_'; then
	[ $((after - before)) -lt 16384 ] ||
		fail "the daemon grew by $((after - before)) KiB"
fi
grep -q "control groups: more than 1023 in use" "$LOG" ||
	fail "no word of groups forgotten"
[ "$(grep -c "control groups: more than" "$LOG")" -le 10 ] ||
	fail "the forgotten groups flood the log"

# A new group after the table went round: limited, and named.
trace_start "$T/trace"
cg_mkdir "$CG/late"
cg_limit "$CG/late" rbps $((10 * MIB))
r=$(mib_per_s 15 cg_run "$CG/late" setpriv --reuid=65534 --regid=65534 \
	--clear-groups dd if="$MNT/f" of=/dev/null bs=1M count=15 \
	iflag=direct status=none)
echo "a group after $N others, limited to 10 MiB/s: $r MiB/s"
in_band "$r" 5 15 || fail "the late group read at $r MiB/s"
wait_for "the late group in the trace" \
	grep -q " C  *RS .* cgroup $CG/late\$" "$T/trace"
trace_stop
unmount_fs
check_log "control groups: more than"
