# SPDX-License-Identifier: GPL-2.0-or-later
# On SIGHUP, -o options keep their precedence over the configuration
# file: a setting given with -o stays as given whatever the file now
# says, while the file's other changes are applied.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require_module "$MODULE_DIR" deadline

mount_conf 'scheduler = noop\nnr_requests = 64\nlog = info\n' \
	scheduler=deadline,nr_requests=48
grep -q '\[deadline\]' "$MNT/.control/scheduler" || fail "-o scheduler not active"
assert_eq 48 "$(cat "$MNT/.control/nr_requests")" "-o nr_requests at mount"

cat >"$C" <<CONF
scheduler = kyber
nr_requests = 16
deadline {
	read_expire = 150
}
CONF
reload_fs
grep -q 'reload failed' "$LOG" && fail "reload failed"
grep -q '\[deadline\]' "$MNT/.control/scheduler" ||
	fail "the file's scheduler replaced -o's: $(cat "$MNT/.control/scheduler")"
assert_eq 48 "$(cat "$MNT/.control/nr_requests")" "-o nr_requests after SIGHUP"
# The file's tunable reached the active deadline: the reload happened.
[ -d "$MNT/.control/iosched" ] &&
	assert_eq 150 "$(cat "$MNT/.control/iosched/read_expire")" "the file's read_expire"
grep -Eq 'configuration reload: (scheduler|nr_requests)' "$LOG" &&
	fail "the reload changed what -o set: $(grep 'configuration reload:' "$LOG")"
unmount_fs
check_log
exit 0
