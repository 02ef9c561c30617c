#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Names: mkdir/rmdir, fifos, sockets, symlinks, hard links, unlink, rename
# with RENAME_NOREPLACE and RENAME_EXCHANGE.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
mount_fs

mkdir -p "$MNT/d/e/f"
[ -d "$BACKING/d/e/f" ] || fail "mkdir -p"
rmdir "$MNT/d/e/f"
[ -e "$BACKING/d/e/f" ] && fail "rmdir"

mkfifo "$MNT/fifo"
assert_eq fifo "$(stat -c %F "$BACKING/fifo")" "fifo type"
# A fifo on the mount carries data between two processes.
(echo through-fifo >"$MNT/fifo") &
writer=$!
assert_eq through-fifo "$(cat "$MNT/fifo")" "fifo data"
wait "$writer"	# not a bare wait: the daemon is a child too

python3 - "$MNT/sock" <<'PY' || fail "socket node"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.close()
PY
assert_eq socket "$(stat -c %F "$BACKING/sock")" "socket type"

ln -s target/of/link "$MNT/sym"
assert_eq target/of/link "$(readlink "$MNT/sym")" "readlink"
assert_eq target/of/link "$(readlink "$BACKING/sym")" "readlink backing"
assert_eq "symbolic link" "$(stat -c %F "$MNT/sym")" "symlink type"

echo data >"$MNT/orig"
ln "$MNT/orig" "$MNT/hard"
assert_eq 2 "$(stat -c %h "$MNT/orig")" "link count"
assert_eq "$(stat -c %i "$BACKING/orig")" "$(stat -c %i "$BACKING/hard")" "same inode"
assert_eq "$(stat -c %i "$MNT/orig")" "$(stat -c %i "$MNT/hard")" "same inode on mount"
echo more >>"$MNT/hard"
assert_eq "data
more" "$(cat "$MNT/orig")" "write through hard link"
rm "$MNT/orig"
[ -e "$BACKING/orig" ] && fail "unlink"
assert_eq 1 "$(stat -c %h "$MNT/hard")" "link count after unlink"
# A hard link to a symlink is a link to the symlink itself.
ln "$MNT/sym" "$MNT/sym2"
assert_eq target/of/link "$(readlink "$BACKING/sym2")" "hard link of symlink"

echo A >"$MNT/a"
echo B >"$MNT/b"
mkdir "$MNT/dir2"
mv "$MNT/a" "$MNT/dir2/a2"
assert_eq A "$(cat "$BACKING/dir2/a2")" "rename across directories"
mv "$MNT/dir2/a2" "$MNT/a"

python3 - "$MNT" <<'PY' || fail "renameat2"
import ctypes, errno, os, sys
m = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
NOREPLACE, EXCHANGE = 1, 2
def rename2(a, b, flags):
    r = libc.renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), flags)
    return 0 if r == 0 else ctypes.get_errno()
a, b = os.path.join(m, "a"), os.path.join(m, "b")
assert rename2(a, b, NOREPLACE) == errno.EEXIST
assert open(a).read() == "A\n" and open(b).read() == "B\n"
assert rename2(a, b, EXCHANGE) == 0
assert open(a).read() == "B\n" and open(b).read() == "A\n", "exchange"
c = os.path.join(m, "c")
assert rename2(a, c, NOREPLACE) == 0
assert not os.path.exists(a) and open(c).read() == "B\n"
assert rename2(a, c, EXCHANGE) == errno.ENOENT
PY
assert_eq A "$(cat "$BACKING/b")" "exchanged in backing"
assert_eq B "$(cat "$BACKING/c")" "renamed in backing"

# A file replaced behind the mount's back is seen with its new content.
echo new >"$T/n" && mv "$T/n" "$BACKING/c"
sleep 1.1	# past the entry cache timeout
assert_eq new "$(cat "$MNT/c")" "replaced in backing"

rm "$MNT/fifo" "$MNT/sock"	# diff -r cannot compare these
compare_trees
unmount_fs
check_log
