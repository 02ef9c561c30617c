#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# SIGTERM under load: the daemon drains its queue, answers every pending
# request, unmounts and exits 0.  Precisely: every write(2) that returned
# success before the daemon went away is in the backing file; no writer
# hangs (each one stops, with an error for writes after the unmount); the
# daemon's own log has no error.  With -o writeback_cache, a write is only
# acknowledged by fsync, so there it is every fsync-acknowledged record.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3

# writer FILE ACKLOG EVERY: 16 KiB records, record i at offset i * 16 KiB,
# each one filled with its number and the file's name; after every
# successful write (EVERY = 0) or after the fsync that follows every EVERY
# records, the record count goes to ACKLOG.
cat >"$T/writer.py" <<'PY'
import os, sys
path, acklog, every = sys.argv[1], sys.argv[2], int(sys.argv[3])
tag = os.path.basename(path).encode()
RS = 16384
def record(i):
    head = b"record %08d of %s\n" % (i, tag)
    return (head * (RS // len(head) + 1))[:RS]
ack = open(acklog, "a", buffering=1)
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
i = 0
try:
    while True:
        n = os.pwrite(fd, record(i), i * RS)
        if n != RS:
            sys.exit("%s: short write of record %d: %d" % (path, i, n))
        i += 1
        if every == 0:
            ack.write("%d\n" % i)
        elif i % every == 0:
            os.fsync(fd)
            ack.write("%d\n" % i)
except OSError as e:
    # The mount went away under us: expected once the signal is sent.
    print("%s: stopped after %d records: %s" % (path, i, e), file=sys.stderr)
PY
cat >"$T/check.py" <<'PY'
import os, sys
path, count = sys.argv[1], int(sys.argv[2])
tag = os.path.basename(path).encode()
RS = 16384
with open(path, "rb") as f:
    for i in range(count):
        head = b"record %08d of %s\n" % (i, tag)
        want = (head * (RS // len(head) + 1))[:RS]
        got = f.read(RS)
        if got != want:
            sys.exit("%s: acknowledged record %d of %d is %s" % (path, i,
                     count, "missing" if len(got) < RS else "damaged"))
PY

# acked W: whether writer W has had a few writes acknowledged.
acked() { [ "$(wc -l <"$T/ack$1")" -ge 5 ]; }

run() { # EVERY [daemon options...]
	every=$1
	shift
	rm -f "${BACKING:?}"/* "$T"/ack* "$T/writers.err"
	mount_fs "$@"
	pids=
	for w in 1 2 3 4; do
		: >"$T/ack$w"
		python3 "$T/writer.py" "$MNT/w$w" "$T/ack$w" "$every" \
			2>>"$T/writers.err" &
		pids="$pids $!"
	done
	dd if=/dev/zero of="$MNT/bulk" bs=128k count=100000 status=none \
		2>/dev/null &
	pids="$pids $!"
	cleanup_push "kill $pids 2>/dev/null"
	for w in 1 2 3 4; do
		wait_for "5 writes acknowledged to writer $w" acked "$w"
	done
	sleep 0.5

	kill -TERM "$DAEMON_PID"
	wait_daemon_exit SIGTERM
	st=0; wait "$DAEMON_PID" || st=$?
	DAEMON_PID=
	assert_eq 0 "$st" "daemon exit status after SIGTERM"
	mountpoint -q "$MNT" && fail "still mounted after SIGTERM"

	for p in $pids; do
		wait_for "writer $p to exit after SIGTERM" gone "$p"
		wait "$p" || true
	done
	# A writer that reports anything but an error from the vanished
	# mount (e.g. a short write) is a failure.
	if grep -v -e 'stopped after' -e '^$' "$T/writers.err"; then
		fail "writers reported unexpected errors"
	fi
	cat "$T/writers.err"

	for w in 1 2 3 4; do
		n=$(tail -n 1 "$T/ack$w")
		echo "w$w: $n records acknowledged, $(( $(stat -c %s "$BACKING/w$w") / 16384 )) in the file"
		python3 "$T/check.py" "$BACKING/w$w" "$n" ||
			fail "acknowledged data lost ($*)"
	done
	check_log
}

echo "--- write-through: every successful write(2) counts"
run 0
echo "--- writeback_cache: fsync-acknowledged records count"
run 4 -o writeback_cache
exit 0
