# SPDX-License-Identifier: GPL-2.0-or-later
# On SIGHUP only what changed in the file since it was last read is
# applied: what .control/ changed since stays, unless the file changes
# that very setting; each change is logged once, as "NAME OLD -> NEW".
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require_module "$MODULE_DIR" deadline

mount_conf 'scheduler = deadline\nnr_requests = 64\n'
echo noop >"$MNT/.control/scheduler"
echo 20 >"$MNT/.control/nr_requests"

# Another setting changes: the scheduler and nr_requests stay as set.
printf 'scheduler = deadline\nnr_requests = 64\nthreads = 3\n' >"$C"
reload_fs
grep -q 'configuration reload: threads .* -> 3' "$LOG" ||
	fail "the new file was not read"
grep -q '\[noop\]' "$MNT/.control/scheduler" ||
	fail "unchanged scheduler applied again: $(cat "$MNT/.control/scheduler")"
assert_eq 20 "$(cat "$MNT/.control/nr_requests")" "nr_requests after an unrelated change"

# nr_requests changes in the file: that, and only that, is applied.
printf 'scheduler = deadline\nnr_requests = 32\nthreads = 3\n' >"$C"
reload_fs
assert_eq 32 "$(cat "$MNT/.control/nr_requests")" "nr_requests changed in the file"
grep -q '\[noop\]' "$MNT/.control/scheduler" || fail "scheduler applied again"
assert_eq 1 "$(grep -c 'configuration reload: nr_requests 64 -> 32$' "$LOG")" \
	"log lines for the nr_requests change"
grep -q 'configuration reload: scheduler' "$LOG" && fail "scheduler logged as changed"
unmount_fs
check_log
exit 0
