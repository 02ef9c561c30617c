# SPDX-License-Identifier: GPL-2.0-or-later
# Mounting the way /etc/fstab does: mount(8) -> mount.fuse3 -> fuse-iosched,
# with mount options mixed with ours.  mount(8) runs helpers with a clean
# environment (a PATH of system directories only), so the uninstalled
# binary is reached two ways: mount -t fuse PROGRAM#BACKING, and the
# fuse.fuse-iosched type handed to mount.fuse3 directly, as mount(8) does.
# Each daemon's syslog is captured (lib.sh: fstab_start) and must show its
# mount and an exit with status 0 (check_mounted).
SYSLOG_CAPTURE=yes
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
fstab_start
require_module "$MODULE_DIR" deadline

echo hello >"$BACKING/f"

opts="nosuid,nodev,nofail,scheduler=deadline,module_dir=$MODULE_DIR"

st=0
timeout 20 mount -t fuse "$FUSE_IOSCHED#$BACKING" "$MNT" -o "$opts" \
	>>"$LOG" 2>&1 </dev/null || st=$?
assert_eq 0 "$st" "exit status of mount -t fuse"
check_mounted "mount -t fuse" deadline

st=0
PATH=$(dirname "$FUSE_IOSCHED"):$PATH timeout 20 /sbin/mount.fuse3 \
	"$BACKING" "$MNT" -o "rw,$opts" -t fuse.fuse-iosched \
	>>"$LOG" 2>&1 </dev/null || st=$?
assert_eq 0 "$st" "exit status of mount.fuse3 -t fuse.fuse-iosched"
check_mounted "mount.fuse3 -t fuse.fuse-iosched" deadline

check_log
exit 0
