# SPDX-License-Identifier: GPL-2.0-or-later
# Another user on an allow_other mount cannot make the process watch
# (procwatch.c) hold unbounded descriptors or memory, nor keep its own
# processes from being watched.  With a descriptor limit of 512 the daemon
# watches at most 64 threads.  nobody starts 200 processes that each read
# a file of their own and stay alive (more than the watch holds), then a
# stream of short processes, each reading one block and exiting.  The
# daemon's descriptors grow by at most the 64 pidfds, its RSS stays
# within a few MiB, most of the short processes' exits are still told
# (the longest watched are dropped for new ones), and it keeps serving.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require setpriv dd timeout nm
NR=${TEST_QUICK:+300}
NR=${NR:-2000}

# nobody must be able to walk to the mountpoint.
chmod 755 "$T"
dio_backing 64
for i in $(seq 200); do echo "line $i" >"$BACKING/h$i"; done
head -c 4096 /dev/urandom >"$BACKING/s"
chmod 644 "$BACKING"/h* "$BACKING/s"
: >"$T/pids"
chmod 666 "$T/pids"
cleanup_push 'kill $(cat "$T/pids") 2>/dev/null'
# The daemon's limit: an eighth of it is watched (procwatch_limit).
ulimit -n 512
mount_fs -o allow_other,scheduler=cfq
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
pw() { awk -v f="$1" '$1 == "procwatch" { for (i = 2; i < NF; i += 2)
	if ($i == f) print $(i + 1) }' "$MNT/.control/stats"; }
fds() { find "/proc/$DAEMON_PID/fd" -mindepth 1 | wc -l; }
rss() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$DAEMON_PID/status"; }
assert_eq 64 "$(pw max)" "threads watched at most"
# fs_fd.c leaves the pidfds room: (512 - 64 reserved - 64) / 2.
grep -q "up to 192 inode descriptors" "$LOG" ||
	fail "inode descriptors not sized around the watch: $(grep 'inode descriptors' "$LOG")"

# Every inode looked up first, so that its descriptor is counted before.
ls -l "$MNT" >/dev/null
as_nobody dd if="$MNT/s" of=/dev/null bs=4k iflag=direct status=none ||
	fail "nobody cannot read"
fd0=$(fds)
rss0=$(rss)

as_nobody bash -c 'for i in $(seq 200); do
	(read -r x <"$1/h$i" && echo $BASHPID >>"$2" && exec sleep 120) &
done' sh "$MNT" "$T/pids"
nr_pids() { [ "$(wc -l <"$T/pids")" -eq 200 ]; }
wait_for "200 readers that stay" nr_pids
# Each read was answered after procwatch_note: all 200 came by the watch.
[ "$(pw refused)" -gt 0 ] || fail "200 threads in a watch of 64, none refused"
[ "$(pw watched)" -le 64 ] || fail "$(pw watched) threads watched, at most 64"

exits0=$(pw exits)
as_nobody timeout 300 sh -c 'i=0; while [ $i -lt $2 ]; do
	dd if="$1" of=/dev/null bs=4k count=1 iflag=direct status=none ||
		exit 1
	i=$((i + 1))
done' sh "$MNT/s" "$NR" || fail "the short readers failed"
fd1=$(fds)
rss1=$(rss)
grep '^procwatch' "$MNT/.control/stats"
echo "descriptors $fd0 -> $fd1, VmRSS $rss0 -> $rss1 KiB"
# Slack for the short readers' backing files whose release is late.
[ "$fd1" -le $((fd0 + 64 + 16)) ] ||
	fail "descriptors grew from $fd0 to $fd1: more than the 64 pidfds"
# A sanitizer's allocator keeps freed memory and its own: no bound then.
if ! nm -D "$FUSE_IOSCHED" | grep -Eq ' (__asan|__tsan|__msan)_'; then
	[ "$rss1" -le $((rss0 + 16384)) ] ||
		fail "VmRSS grew from $rss0 to $rss1 KiB"
fi
told=$(( $(pw exits) - exits0 ))
[ "$told" -ge $((NR / 2)) ] ||
	fail "only $told of $NR short readers' exits told: the watch stayed full"
[ "$(pw evicted)" -gt 0 ] || fail "nothing evicted from a full watch"

# Still serving, to nobody and to root.
as_nobody cat "$MNT/s" | cmp - "$BACKING/s" || fail "nobody reads wrong data"
cmp "$MNT/h7" "$BACKING/h7" || fail "root reads wrong data"
kill $(cat "$T/pids") 2>/dev/null || true
unmount_fs
check_log
