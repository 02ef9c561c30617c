#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# flock and POSIX (fcntl) locks between two processes on the mount behave
# as on a local filesystem.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require flock
mount_fs

: >"$MNT/lock"
# flock: a holder in the background, a non-blocking contender fails.
# The holder keeps the lock until told: a fixed sleep could end before a
# loaded machine had run the contenders.
flock -x "$MNT/lock" -c "touch $T/held; while [ ! -e $T/release ]; do sleep 0.05; done" &
holder=$!
wait_for "the flock holder" test -e "$T/held"
flock -n -x "$MNT/lock" true && fail "flock: second exclusive lock granted"
flock -n -s "$MNT/lock" true && fail "flock: shared lock granted under exclusive"
# A blocking waiter gets the lock once the holder is done.
flock -w 60 -x "$MNT/lock" true & waiter=$!
touch "$T/release"
wait "$waiter" || fail "flock: waiter never got the lock"
wait "$holder"
flock -n -x "$MNT/lock" true || fail "flock: lock not released"

# POSIX byte-range locks across two processes.
python3 - "$MNT/lock" <<'PY' || fail "POSIX locks"
import fcntl, os, sys, time
p = sys.argv[1]
r, w = os.pipe()
go_r, go_w = os.pipe()
child = os.fork()
if child == 0:
    fd = os.open(p, os.O_RDWR)
    fcntl.lockf(fd, fcntl.LOCK_EX, 100, 0)   # bytes 0..99
    os.write(w, b"1")
    os.read(go_r, 1)     # held until the parent is done checking
    time.sleep(0.5)
    os._exit(0)                              # exit releases the lock
os.read(r, 1)
fd = os.open(p, os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 50)
    raise SystemExit("overlapping POSIX lock granted")
except OSError:
    pass
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 10, 200)   # disjoint: fine
# F_GETLK reports the other process as the holder.
import struct
fl = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 10, 0)
res = fcntl.fcntl(fd, fcntl.F_GETLK, fl)
typ, _, _, _, pid = struct.unpack("hhqqi", res)
assert typ == fcntl.F_WRLCK and pid == child, (typ, pid, child)
t = time.time()
os.write(go_w, b"1")     # the child exits 0.5 s after this, not before
fcntl.lockf(fd, fcntl.LOCK_EX, 100, 0)       # blocks until the child exits
assert time.time() - t > 0.5, "blocking lock did not wait"
os.waitpid(child, 0)
PY

unmount_fs
check_log
