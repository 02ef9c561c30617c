#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# More remembered inodes than descriptors: a tree of 100,000 files (10,000
# under TEST_QUICK=1) is walked, stat'ed, read and written with the daemon
# started under `ulimit -n 256` (soft and hard).  Its descriptor count,
# sampled all along, stays under the limit; nothing fails with EMFILE.
# Once with file handles, once without them (no CAP_DAC_READ_SEARCH: the
# daemon reaches inodes again by parent and name), that time with renamed
# directories too.  And the issue's reproducer: ulimit -n 64, 200 files.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3 setpriv

# A tmpfs for BACKING: creating 100,000 files on a disk takes long.
mount -t tmpfs -o size=256m tmpfs "$BACKING" || skip "cannot mount a tmpfs"
cleanup_push "fusermount3 -u '$MNT' 2>/dev/null; sleep 0.2; umount '$BACKING' 2>/dev/null || umount -l '$BACKING'"

NFILES=100000
[ -z "${TEST_QUICK:-}" ] || NFILES=10000
REAL=$FUSE_IOSCHED

# Start the daemon under a limit (and capabilities) of its own.
limited() { # limit setpriv-args...
	local limit=$1; shift
	printf '#!/bin/sh\nulimit -n %s || exit 99\nexec %s "%s" "$@"\n' \
		"$limit" "$*" "$REAL" >"$T/limited"
	chmod +x "$T/limited"
	FUSE_IOSCHED=$T/limited
}

# Sample the daemon's descriptors until the file stop appears; the most
# seen goes into $T/maxfd.
sample_fds() {
	local max=0 n
	while [ ! -e "$T/stop" ] && kill -0 "$DAEMON_PID" 2>/dev/null; do
		n=$(ls "/proc/$DAEMON_PID/fd" 2>/dev/null | wc -l)
		[ "$n" -le "$max" ] || max=$n
		sleep 0.1
	done
	echo "$max" >"$T/maxfd"
}

# files per directory, and the tree in BACKING made directly (quick).
make_tree() { # nfiles
	local dirs=$(( $1 / 1000 )) d
	rm -rf "${BACKING:?}"/*
	for d in $(seq 1 "$dirs"); do
		mkdir "$BACKING/d$d"
		(cd "$BACKING/d$d" && touch f{1..1000} && echo "data of d$d" >f1)
	done
}

walk() { # nfiles limit what [rename]
	local n=$1 limit=$2 what=$3
	rm -f "$T/stop" "$T/maxfd"
	sample_fds &
	local sampler=$!
	python3 - "$MNT" "$n" "${4:-}" <<'PY' || { touch "$T/stop"; fail "$what: walking the tree"; }
import os, sys
from concurrent.futures import ThreadPoolExecutor
m, n, rename = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "rename"
dirs = n // 1000
def walk_dir(d):
    d = os.path.join(m, d)
    names = os.listdir(d)
    for f in names:
        os.lstat(os.path.join(d, f))
    return len(names)
# Four walkers at once: the daemon's threads share the descriptors.
def walk_all():
    tops = [d for d in os.listdir(m) if d != ".control"]
    with ThreadPoolExecutor(4) as pool:
        seen = sum(pool.map(walk_dir, tops))
    if seen != n:
        sys.exit("walked %d files, expected %d" % (seen, n))
walk_all()
if rename:
    # Renames the daemon is told about: inodes reached again by name must
    # be found under the new names.
    for d in range(1, dirs + 1, 2):
        os.rename(os.path.join(m, "d%d" % d), os.path.join(m, "r%d" % d))
def name(d):
    return ("r%d" if rename and d % 2 == 1 else "d%d") % d
# Read and write the first file of every directory, then stat all again:
# most inodes have lost their descriptor by now.
for d in range(1, dirs + 1):
    p = os.path.join(m, name(d), "f1")
    with open(p) as f:
        assert f.read() == "data of d%d\n" % d, p
    with open(p, "a") as f:
        f.write("more\n")
    os.chmod(os.path.join(m, name(d), "f2"), 0o600)
walk_all()
for d in range(1, dirs + 1):
    with open(os.path.join(m, name(d), "f1")) as f:
        assert f.read() == "data of d%d\nmore\n" % d
    assert os.stat(os.path.join(m, name(d), "f2")).st_mode & 0o777 == 0o600
PY
	touch "$T/stop"
	wait "$sampler"
	max=$(cat "$T/maxfd")
	echo "$what: at most $max descriptors (limit $limit), ${SECONDS}s"
	[ "$max" -lt "$limit" ] || fail "$what: $max descriptors, limit $limit"
	ls -la "$MNT" >/dev/null || fail "$what: ls of the root"
}

echo "=== file handles, ulimit -n 256 (${SECONDS}s)"
make_tree "$NFILES"
limited 256
mount_fs
grep -q 'others reopened by file handle' "$LOG" ||
	fail "the daemon does not use file handles: $(grep descriptors "$LOG")"
walk "$NFILES" 256 handles
[ "$(cat "$BACKING/d1/f1")" = "$(printf 'data of d1\nmore')" ] ||
	fail "backing file d1/f1 after the write"
unmount_fs

echo "=== parent and name, ulimit -n 256 (${SECONDS}s)"
make_tree 10000
limited 256 setpriv --inh-caps=-dac_read_search --bounding-set=-dac_read_search
mount_fs
grep -q 'others reopened by parent and name' "$LOG" ||
	fail "without CAP_DAC_READ_SEARCH: $(grep descriptors "$LOG")"
walk 10000 256 names rename
unmount_fs

echo "=== ulimit -n 64, 200 files (${SECONDS}s)"
rm -rf "${BACKING:?}"/*
(cd "$BACKING" && touch f{1..200})
limited 64
mount_fs
grep -q 'descriptor limit 64 ' "$LOG" || fail "limit not logged"
stat "$MNT"/f* >/dev/null || fail "stat of 200 files under ulimit -n 64"
[ "$(ls "$MNT" | wc -l)" -eq 200 ] || fail "ls of the root under ulimit -n 64"
unmount_fs
check_log
