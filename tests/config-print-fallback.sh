# SPDX-License-Identifier: GPL-2.0-or-later
# When the default scheduler cannot be loaded, a mount falls back to noop
# with a warning, and --print-config shows noop, not the default it will
# not get.  A scheduler named explicitly has no fallback (config-print-checks).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

mkdir "$T/nomods"
"$FUSE_IOSCHED" --print-config -o "module_dir=$T/nomods,config=$EMPTY_CONF" \
	>"$T/out" 2>"$T/err" || fail "--print-config failed: $(cat "$T/err")"
grep -qxF 'scheduler = "noop"' "$T/out" ||
	fail "--print-config does not show the fallback: $(grep scheduler "$T/out")"
grep -q 'default scheduler deadline not found.*using noop' "$T/err" ||
	fail "no warning from --print-config: $(cat "$T/err")"

MODULE_DIR=$T/nomods mount_fs -o "config=$EMPTY_CONF"
assert_eq "[noop]" "$(cat "$MNT/.control/scheduler")" "the mounted scheduler"
unmount_fs
grep -q 'default scheduler deadline not found.*using noop' "$LOG" ||
	fail "no fallback warning from the mount"
check_log
exit 0
