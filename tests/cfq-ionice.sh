#!/bin/sh
# cfq honours ionice: of two direct-I/O readers of different files started
# together, the best-effort one gets most of the throughput and the one
# under `ionice -c3` (idle class) waits.  The idle reader is stopped as
# soon as the best-effort one is done (or after 5 s), and the bytes each
# has read by then are compared.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require ionice timeout dd
mount_fs -o scheduler=cfq
grep -q '\[cfq\]' "$MNT/.control/scheduler" || fail "cfq is not active"

# 200 MiB each, written to the backing directory directly.
for f in be idle; do
	dd if=/dev/zero of="$BACKING/$f" bs=1M count=200 status=none ||
		fail "cannot make $f"
done
sync
# Cold caches, so the readers compete for the backing device.
echo 3 >/proc/sys/vm/drop_caches 2>/dev/null || true

# The bytes a dd reported last ("N bytes ... copied").
bytes_of() {
	sed -n 's/^\([0-9][0-9]*\) bytes.*/\1/p' "$1" | tail -n 1
}

ionice -c3 timeout -s INT 10 dd if="$MNT/idle" of=/dev/null bs=64k \
	iflag=direct 2>"$T/idle.err" &
IDLE_PID=$!
cleanup_push "kill -INT $IDLE_PID 2>/dev/null; wait $IDLE_PID 2>/dev/null"
ionice -c2 -n4 timeout -s INT 5 dd if="$MNT/be" of=/dev/null bs=64k \
	iflag=direct 2>"$T/be.err" &
BE_PID=$!
cleanup_push "kill -INT $BE_PID 2>/dev/null; wait $BE_PID 2>/dev/null"

# reader_done NAME STATUS: a reader may finish (0) or be stopped by its
# timeout (124) or by the INT below (130, dd's own status); anything else,
# or an error message from dd, is a failed read, which must not pass for
# an idle reader held back.
reader_done() {
	case $2 in
	0|124|130) ;;
	*) cat "$T/$1.err" >&2; fail "the $1 reader failed with status $2" ;;
	esac
	! grep -q '^dd: ' "$T/$1.err" || fail "the $1 reader: $(cat "$T/$1.err")"
}

# When the best-effort reader is done, stop the idle one at once.
st=0; wait "$BE_PID" || st=$?
reader_done be "$st"
kill -INT "$IDLE_PID" 2>/dev/null || true
st=0; wait "$IDLE_PID" || st=$?
reader_done idle "$st"

be=$(bytes_of "$T/be.err")
idle=$(bytes_of "$T/idle.err")
echo "best-effort: ${be:-?} bytes, idle: ${idle:-?} bytes"
[ -n "$be" ] && [ -n "$idle" ] || {
	cat "$T/be.err" "$T/idle.err" >&2
	fail "no byte counts from dd"
}
[ "$be" -gt 0 ] || fail "the best-effort reader read nothing"
# Most of the throughput: at least four times the idle reader's share.
[ "$be" -ge $((idle * 4)) ] ||
	fail "best-effort read $be bytes, idle $idle: idle not held back"

unmount_fs
check_log
