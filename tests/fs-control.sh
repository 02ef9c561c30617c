#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# .control in the root: reachable by name, hidden from readdir, shadowing
# a backing entry of that name, and not creatable, removable or renamable.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
mkdir "$BACKING/.control"
echo mine >"$BACKING/.control/mine"
echo x >"$BACKING/f"
mkdir "$BACKING/sub"
mount_fs

ls -a "$MNT" | grep -qx .control && fail ".control listed in readdir of the root"
ls -la "$MNT" | grep -q '\.control' && fail ".control listed by ls -la"
find "$MNT" | grep -q '\.control' && fail "find walked into .control"
[ -d "$MNT/.control" ] || fail ".control not reachable by name"
[ -e "$MNT/.control/mine" ] && fail "backing .control not shadowed"
[ -e "$MNT/.control/scheduler" ] || fail "no scheduler file"
ls -la "$MNT/.control" >/dev/null || fail "ls -la .control"
grep -q '\[' "$MNT/.control/scheduler" || fail "scheduler file content"

# Elsewhere ".control" is an ordinary name.
mkdir "$MNT/sub/.control"
ls -a "$MNT/sub" | grep -qx .control || fail ".control hidden outside the root"
rmdir "$MNT/sub/.control"

python3 - "$MNT" <<'PY' || fail "operations on .control"
import errno, os, sys
from lib import err
m = sys.argv[1]
c = os.path.join(m, ".control")
f = os.path.join(m, "f")
assert err(os.mkdir, c) == errno.EEXIST
assert err(os.rmdir, c) != 0
assert err(os.unlink, c) != 0
assert err(os.rename, c, os.path.join(m, "x")) == errno.EPERM
assert err(os.rename, f, c) != 0
assert err(os.link, f, c) == errno.EEXIST
assert err(os.symlink, "f", c) == errno.EEXIST
assert err(os.open, os.path.join(c, "new"), os.O_CREAT | os.O_WRONLY) != 0
assert err(os.setxattr, os.path.join(c, "scheduler"), "user.x", b"1") != 0
assert os.listxattr(os.path.join(c, "scheduler")) == []
os.statvfs(c)
# Writing a control file and closing it succeeds.
cur = open(os.path.join(c, "scheduler")).read().split("[")[1].split("]")[0]
with open(os.path.join(c, "scheduler"), "w") as fh:
    fh.write(cur + "\n")
PY
assert_eq mine "$(cat "$BACKING/.control/mine")" "backing .control untouched"
[ -e "$BACKING/x" ] && fail ".control renamed"

unmount_fs
check_log
