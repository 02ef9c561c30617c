# SPDX-License-Identifier: GPL-2.0-or-later
# anticipatory's think-time cap (the kernel's MAX_THINKTIME, 20 ms), on a
# mount with the hdd model: one long pause counts as 20 ms, so a reader
# that pauses for 600 ms and then reads with short think times is waited
# for again at once, while another process streams reads far away on the
# disk.  Its reads right after the pause go out back to back; without the
# cap (a 600 ms sample) the first ten or so would each wait behind the
# other reader's.  Also est_time, the think time assumed for a new
# process, learns the capped sample: it stays at most 40000 us (the cap,
# or the 2 x antic_expire a new process that did not come back counts
# for), not near 600000.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3 dd timeout fallocate
require_module "$MODULE_DIR" anticipatory

dio_backing 2200
# a, then 2 GiB, then b: b's reads are far from a's (4 Mi sectors, past
# the close window for the first 9 ms of a wait).
fallocate -l 8M "$BACKING/a"
fallocate -l 2G "$BACKING/gap"
fallocate -l 64M "$BACKING/b"
sync
mount_fs -o disk_model=hdd,scheduler=anticipatory
# 20 ms: the longest think time the cap lets a sample have, so a loaded
# machine's slow round trips do not turn anticipation off by themselves.
echo 20 >"$MNT/.control/iosched/antic_expire"

timeout 30 cat "$MNT/.control/trace" >"$T/trace" & TR=$!
cleanup_push "kill $TR 2>/dev/null"
wait_for "the trace header" grep -q '^# fuse-iosched trace' "$T/trace"

# b is read by one dd throughout: a stream of close, short-think reads.
timeout 30 dd if="$MNT/b" of=/dev/null bs=4k iflag=direct status=none & DD=$!
cleanup_push "kill $DD 2>/dev/null"
sleep 0.3

# a: one read, 600 ms of thinking, then 16 sequential reads.
timeout 30 python3 - "$MNT/a" "$T/a.pid" <<'EOF' || fail "reader of a failed"
import mmap, os, sys, time
open(sys.argv[2], "w").write("%d\n" % os.getpid())
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
os.preadv(fd, [buf], 0)
time.sleep(0.6)
for i in range(1, 17):
    if os.preadv(fd, [buf], i * 4096) != 4096:
        sys.exit("short read")
EOF
kill "$DD" 2>/dev/null || true
wait "$DD" 2>/dev/null || true
sleep 0.3
kill "$TR" 2>/dev/null || true
wait "$TR" 2>/dev/null || true

# In dispatch order: how many of a's 16 reads after the pause came right
# after a read of a's own (the first may wait for the other's turn).
apid=$(cat "$T/a.pid")
awk -v a="$apid" '$6 == "D" && substr($7, 1, 1) == "R" { print $5 }' \
	"$T/trace" >"$T/order"
nr_a=$(grep -c "^$apid\$" "$T/order" || true)
assert_eq 17 "$nr_a" "reads of a in the trace"
[ "$(grep -vc "^$apid\$" "$T/order" || true)" -gt 16 ] ||
	fail "the other reader hardly ran: $(grep -vc "^$apid\$" "$T/order")"
b2b=$(awk -v a="$apid" '$1 == a { n++; if (n > 2 && prev == a) b++ }
	{ prev = $1 } END { print b + 0 }' "$T/order")
echo "a's reads 3..17 right after one of a's: $b2b of 15"
[ "$b2b" -ge 10 ] ||
	fail "only $b2b of a's 15 reads after the pause were back to back: anticipation did not come back"

# The counters agree: waits were started and ended by the awaited reader.
sched() { awk -v c="$1" '$1 == "scheduler" && $2 == "anticipatory" &&
	$3 == c { print $4 }' "$MNT/.control/stats"; }
grep '^scheduler anticipatory' "$MNT/.control/stats"
[ "$(sched antic_hits)" -ge 10 ] || fail "antic_hits $(sched antic_hits), expected at least 10"
[ "$(sched antic_started)" -ge "$(sched antic_hits)" ] || fail "more hits than waits"
est=$(cat "$MNT/.control/iosched/est_time")
echo "est_time $est us"
[ "$est" -le 40000 ] || fail "est_time $est us: a think-time sample above the 20 ms cap"
check_log
