# SIGTERM (and SIGINT) to a foreground daemon unmount and exit 0, after
# finishing the writes already accepted.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

for sig in TERM INT; do
	mount_fs
	dd if=/dev/urandom of="$T/src" bs=64k count=64 status=none
	cp "$T/src" "$MNT/f"
	kill -s "$sig" "$DAEMON_PID"
	i=0
	while kill -0 "$DAEMON_PID" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "SIG$sig: daemon still running after 10 s"
		sleep 0.05
	done
	st=0; wait "$DAEMON_PID" || st=$?
	DAEMON_PID=
	assert_eq 0 "$st" "SIG$sig: exit status"
	mountpoint -q "$MNT" && fail "SIG$sig: still mounted"
	grep -q " $MNT " /proc/mounts && fail "SIG$sig: still in /proc/mounts"
	cmp "$T/src" "$BACKING/f" || fail "SIG$sig: data lost"
	rm -f "$BACKING/f"
done
check_log
exit 0
