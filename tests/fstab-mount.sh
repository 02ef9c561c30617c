# SPDX-License-Identifier: GPL-2.0-or-later
# Mounting from an fstab line, as an administrator does: mount(8) ->
# mount.fuse3 -> fuse-iosched found on PATH.  mount(8) gives helpers a
# fixed PATH of system directories, so the test runs in a private mount
# namespace where /usr/local/sbin is bound to a directory holding the
# build's fuse-iosched; nothing outside the namespace changes, and its
# mounts vanish with it.
if [ -z "${FSTAB_TEST_NS:-}" ]; then
	# lib.sh, sourced inside, says what is missing (and fails under CI).
	command -v unshare >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ] &&
	FSTAB_TEST_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
# Each daemon's syslog is captured (lib.sh: fstab_start) and must show its
# mount and an exit with status 0 (check_mounted).
SYSLOG_CAPTURE=yes
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
fstab_start
require_module "$MODULE_DIR" cfq
require_module "$MODULE_DIR" deadline

mkdir "$T/bin"
ln -s "$FUSE_IOSCHED" "$T/bin/fuse-iosched"
mount --bind "$T/bin" /usr/local/sbin || skip_env "cannot bind /usr/local/sbin"
cleanup_push "umount /usr/local/sbin"
echo hello >"$BACKING/f"

# The options mount(8) and fstab carry, with ours.
opts="defaults,allow_other,nofail,_netdev,noauto,user,relatime"
opts="$opts,x-systemd.automount,nosuid,nodev,noatime"
opts="$opts,module_dir=$MODULE_DIR,config=$EMPTY_CONF"
printf '%s %s fuse.fuse-iosched %s,scheduler=deadline 0 0\n' \
	"$BACKING" "$MNT" "$opts" >"$T/fstab"

timeout 20 mount -T "$T/fstab" "$MNT" >>"$LOG" 2>&1 </dev/null ||
	fail "mount -T fstab MOUNTPOINT failed: $(cat "$LOG")"
check_mounted "mount MOUNTPOINT" deadline

timeout 20 mount -T "$T/fstab" "$BACKING" >>"$LOG" 2>&1 </dev/null ||
	fail "mount -T fstab BACKING failed"
check_mounted "mount BACKING" deadline

: >"$T/empty.fstab"
timeout 20 mount -T "$T/empty.fstab" -t fuse.fuse-iosched "$BACKING" "$MNT" \
	-o "$opts,scheduler=cfq" >>"$LOG" 2>&1 </dev/null ||
	fail "mount -t fuse.fuse-iosched failed"
check_mounted "mount -t" cfq

check_log
exit 0
