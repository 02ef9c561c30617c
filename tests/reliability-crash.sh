#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# kill -9 of the daemon in the middle of a write load.  Writers number their
# records, fsync every few records and only then note the count in a log
# outside the mount.  After the kill, callers on the dead mount get ENOTCONN
# at once (no hang), fusermount3 -u works, and after a remount every record
# acknowledged by a completed fsync is there, intact.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3

# writer FILE ACKLOG: 4 KiB records, record i at offset i * 4096, each
# filled with its own number and the file's name; fsync every 8 records,
# then the count goes to ACKLOG.  It runs until an error stops it and
# exits with the errno it got.
cat >"$T/writer.py" <<'PY'
import os, sys
path, acklog = sys.argv[1], sys.argv[2]
tag = os.path.basename(path).encode()
def record(i):
    head = b"record %08d of %s\n" % (i, tag)
    return (head * (4096 // len(head) + 1))[:4096]
ack = open(acklog, "a", buffering=1)
try:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    i = 0
    while True:
        os.pwrite(fd, record(i), i * 4096)
        i += 1
        if i % 8 == 0:
            os.fsync(fd)
            ack.write("%d\n" % i)
except OSError as e:
    print("%s: %s" % (path, e), file=sys.stderr)
    sys.exit(e.errno if e.errno < 256 else 1)
PY

# check FILE COUNT: the first COUNT records are intact.
cat >"$T/check.py" <<'PY'
import os, sys
path, count = sys.argv[1], int(sys.argv[2])
tag = os.path.basename(path).encode()
with open(path, "rb") as f:
    for i in range(count):
        head = b"record %08d of %s\n" % (i, tag)
        want = (head * (4096 // len(head) + 1))[:4096]
        got = f.read(4096)
        if got != want:
            sys.exit("%s: record %d of %d acknowledged is %s" % (path, i,
                     count, "missing" if len(got) < 4096 else "damaged"))
PY

mount_fs -o scheduler=deadline
# Four writers, plus a buffered dd without fsync to keep the queue full.
pids=
for w in 1 2 3 4; do
	: >"$T/ack$w"
	python3 "$T/writer.py" "$MNT/w$w" "$T/ack$w" 2>>"$T/writers.err" &
	pids="$pids $!"
done
dd if=/dev/zero of="$MNT/bulk" bs=64k count=100000 status=none 2>/dev/null &
dd_pid=$!
cleanup_push "kill $pids $dd_pid 2>/dev/null"

# Let them run until every writer has at least a few acknowledgements.
acked() { [ "$(wc -l <"$T/ack$1")" -ge 5 ]; }
for w in 1 2 3 4; do
	wait_for "5 writes acknowledged to writer $w" acked "$w"
done
sleep 0.3
{ kill -9 "$DAEMON_PID"; wait "$DAEMON_PID"; } 2>/dev/null || true
DAEMON_PID=

# Every writer stops at once with an error; nobody hangs.
for p in $pids $dd_pid; do
	wait_for "writer $p to leave the dead mount" gone "$p"
done
for p in $pids; do
	st=0; wait "$p" || st=$?
	# 107 is ENOTCONN; a request already sent to the daemon when it died
	# gets ECONNABORTED (103) from the kernel as the connection goes.
	case $st in
	107|103) ;;
	*) cat "$T/writers.err"; fail "a writer ended with status $st, not ENOTCONN" ;;
	esac
done
cat "$T/writers.err"

# New callers get ENOTCONN too, without hanging.
for cmd in "stat $MNT/w1" "ls $MNT" "cat $MNT/w1" "touch $MNT/new"; do
	fails_with "Transport endpoint is not connected" "on the dead mount" \
		"$cmd"
done

timeout 10 fusermount3 -u "$MNT" || fail "fusermount3 -u of the dead mount failed"
mountpoint -q "$MNT" && fail "still mounted after fusermount3 -u"

# Remount: every acknowledged record is there, through the mount and in
# the backing files alike.
mount_fs
for w in 1 2 3 4; do
	n=$(tail -n 1 "$T/ack$w")
	echo "w$w: $n records acknowledged, $(( $(stat -c %s "$BACKING/w$w") / 4096 )) in the file"
	python3 "$T/check.py" "$MNT/w$w" "$n" || fail "acknowledged data lost"
	python3 "$T/check.py" "$BACKING/w$w" "$n" || fail "acknowledged data lost (backing)"
done
compare_trees
unmount_fs
check_log
