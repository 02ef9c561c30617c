#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Extended attributes: set, get, list, remove, errors, and symlinks.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require setfattr getfattr
# The backing fs must support user xattrs for this test to mean anything.
: >"$BACKING/probe"
setfattr -n user.probe -v 1 "$BACKING/probe" 2>/dev/null ||
	skip "backing filesystem has no user xattrs"
rm "$BACKING/probe"
mount_fs

echo x >"$MNT/f"
mkdir "$MNT/d"
setfattr -n user.color -v blue "$MNT/f"
setfattr -n user.empty "$MNT/f"
setfattr -n user.dir -v yes "$MNT/d"
assert_eq blue "$(getfattr --absolute-names --only-values -n user.color "$BACKING/f")" "xattr in backing"
assert_eq blue "$(getfattr --absolute-names --only-values -n user.color "$MNT/f")" "xattr on mount"
assert_eq yes "$(getfattr --absolute-names --only-values -n user.dir "$MNT/d")" "xattr on a directory"
assert_eq "$(getfattr --absolute-names -d "$BACKING/f" | tail -n +2)" "$(getfattr --absolute-names -d "$MNT/f" | tail -n +2)" \
	"getfattr --absolute-names -d"

# A large value, and the size probe (getxattr with size 0).
v=$(head -c 3000 /dev/zero | tr '\0' v)
setfattr -n user.big -v "$v" "$MNT/f"
assert_eq "$v" "$(getfattr --absolute-names --only-values -n user.big "$MNT/f")" "large value"

python3 - "$MNT/f" <<'PY' || fail "xattr errors"
import errno, os, sys
from lib import err
p = sys.argv[1]
assert err(os.getxattr, p, "user.none") == errno.ENODATA
assert err(os.setxattr, p, "user.color", b"red", os.XATTR_CREATE) == errno.EEXIST
assert err(os.setxattr, p, "user.nosuch", b"red", os.XATTR_REPLACE) == errno.ENODATA
assert err(os.removexattr, p, "user.none") == errno.ENODATA
assert sorted(os.listxattr(p)) == ["user.big", "user.color", "user.empty"], os.listxattr(p)
PY

setfattr -x user.color "$MNT/f"
getfattr --absolute-names -n user.color "$BACKING/f" >/dev/null 2>&1 && fail "removexattr"

# Symlinks: no user xattrs (as on any Linux fs); the target is untouched.
ln -s f "$MNT/l"
setfattr -h -n user.x -v 1 "$MNT/l" 2>/dev/null && fail "user xattr on a symlink"
getfattr --absolute-names -h -n user.big "$MNT/l" >/dev/null 2>&1 && fail "symlink shows target's xattr"
getfattr --absolute-names -n user.big "$MNT/l" >/dev/null || fail "following the symlink"
getfattr --absolute-names -h -d "$MNT/l" >/dev/null || fail "listing a symlink's xattrs"

unmount_fs
check_log
