#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A directory of 5000 entries: readdir, readdirplus (ls -la), lookups
# (find -ls) and repeated walks must match the backing directory.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99

mkdir "$BACKING/big"
i=0
while [ $i -lt 5000 ]; do
	: >"$BACKING/big/file-$i"
	i=$((i + 1))
done
mkdir "$BACKING/big/sub" && echo x >"$BACKING/big/sub/inner"
mount_fs

n=$(ls -a "$MNT/big" | wc -l)
assert_eq 5003 "$n" "entries in ls -a (5000 files, sub, . and ..)"
n=$(ls -la "$MNT/big" | grep -c ' file-')
assert_eq 5000 "$n" "files in ls -la"

(cd "$BACKING" && find . -printf '%p %y %s %m\n' | sort) >"$T/want"
(cd "$MNT" && find . -printf '%p %y %s %m\n' | sort) >"$T/got"
cmp -s "$T/want" "$T/got" || { diff "$T/want" "$T/got" | head; fail "find differs"; }

# Walk again after dropping the kernel's caches: every inode is looked up
# anew and the old ones forgotten.
echo 2 >/proc/sys/vm/drop_caches
(cd "$MNT" && find . -printf '%p %y %s %m\n' | sort) >"$T/got2"
cmp -s "$T/want" "$T/got2" || fail "find after drop_caches differs"

# Every inode readdirplus and lookup counted is forgotten again: once the
# kernel drops its inodes, the daemon holds no O_PATH fd for them.
nfds() { ls "/proc/$DAEMON_PID/fd" | wc -l; }
# Other tests may drop the caches at any moment: allow a few tries.
looked_up=
for try in 1 2 3 4 5; do
	ls -la "$MNT/big" >/dev/null
	[ "$(nfds)" -gt 5000 ] && { looked_up=1; break; }
done
[ -n "$looked_up" ] || fail "ls -la did not look the entries up"
forgotten() { echo 2 >/proc/sys/vm/drop_caches; [ "$(nfds)" -le 200 ]; }
wait_for "the inodes forgotten (at most 200 fds open)" forgotten

# Names created behind the mount's back show up; removed ones go.
: >"$BACKING/big/late"
rm "$BACKING/big/file-0"
ls "$MNT/big" | grep -qx late || fail "new backing entry not listed"
ls "$MNT/big" | grep -qx file-0 && fail "removed backing entry listed"

# Seeking in a directory (telldir/seekdir offsets) restarts correctly.
python3 - "$MNT/big" <<'PY' || fail "readdir with seek"
import os, sys
d = sys.argv[1]
a = sorted(os.listdir(d))
fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
# Two passes over one descriptor: rewinding must give everything again.
for _ in range(2):
    os.lseek(fd, 0, os.SEEK_SET)
    b = []
    with os.scandir(fd) as it:
        b = sorted(e.name for e in it)
    assert a == b, (len(a), len(b))
os.close(fd)
PY

compare_trees
unmount_fs
check_log
