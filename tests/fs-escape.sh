#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Symlinks in BACKING that point outside are shown as symlinks, never
# followed by the daemon; names with ".." and renames stay on the mount.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
mount_fs

ln -s /etc "$BACKING/etclink"
ln -s ../../../../../../etc/passwd "$BACKING/rel"
echo x >"$BACKING/f"
assert_eq "symbolic link" "$(stat -c %F "$MNT/etclink")" "type of etclink"
assert_eq /etc "$(readlink "$MNT/etclink")" "readlink etclink"
assert_eq ../../../../../../etc/passwd "$(readlink "$MNT/rel")" "readlink rel"
# The kernel follows it, as for any symlink: expected.
[ -e "$MNT/etclink/passwd" ] || fail "kernel-side follow of an absolute symlink"

# Operations on the link itself never reach its target.
etc_mtime=$(stat -c %Y /etc)
etc_owner=$(stat -c %u:%g /etc)
touch -h -d '2000-01-01' "$MNT/etclink"
chown -h 77:77 "$MNT/etclink"
assert_eq "$etc_mtime" "$(stat -c %Y /etc)" "/etc mtime"
assert_eq "$etc_owner" "$(stat -c %u:%g /etc)" "/etc owner"
assert_eq 77:77 "$(stat -c %u:%g "$BACKING/etclink")" "link owner"
rm "$MNT/etclink"
[ -d /etc ] || fail "/etc went away"
[ -e "$BACKING/etclink" ] && fail "unlink of a symlink"

python3 - "$MNT" "$T" <<'PY' || fail "escapes"
import errno, os, sys
from lib import err
m, t = sys.argv[1], sys.argv[2]
# A rename or link out of the mount is cross-device.
assert err(os.rename, os.path.join(m, "f"), os.path.join(m, "..", "f")) == errno.EXDEV
assert err(os.link, os.path.join(m, "f"), os.path.join(t, "f2")) == errno.EXDEV
# ".." from the mount's root is the mountpoint's parent (kernel side).
assert os.stat(os.path.join(m, "..")).st_ino == os.stat(t).st_ino
# Creating "through" the relative symlink resolves on the kernel side;
# O_NOFOLLOW refuses it, as it would on a local fs.
assert err(os.open, os.path.join(m, "rel"), os.O_RDONLY | os.O_NOFOLLOW) == errno.ELOOP
PY
[ -e "$T/f" ] && fail "file escaped the mount"
[ -e "$BACKING/f" ] || fail "file left the backing directory"

unmount_fs
check_log
