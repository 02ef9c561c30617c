# SPDX-License-Identifier: GPL-2.0-or-later
# With -o allow_other, another user can read the control files but not
# write them (EACCES), and nothing changes.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require setpriv

# nobody must be able to walk to the mountpoint.
chmod 755 "$T"
mount_fs -o allow_other
C=$MNT/.control
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

as_nobody cat "$C/scheduler" >"$T/out" || fail "nobody cannot read scheduler"
assert_eq "$(cat "$C/scheduler")" "$(cat "$T/out")" "scheduler as read by nobody"
as_nobody cat "$C/stats" >/dev/null || fail "nobody cannot read stats"
sched=$(cat "$C/scheduler")
nr=$(cat "$C/nr_requests")

for what in "echo noop >$C/scheduler" "echo 5 >$C/nr_requests" \
	"echo noop >>$C/scheduler" "truncate -s 0 $C/scheduler" \
	"printf 9 | dd of=$C/nr_requests conv=notrunc status=none" \
	"echo 1 >$C/stats"; do
	if as_nobody sh -c "$what" >"$T/err" 2>&1; then
		fail "nobody could: $what"
	fi
	grep -Eqi 'permission denied|operation not permitted' "$T/err" ||
		fail "nobody, $what: $(cat "$T/err")"
done
assert_eq "$sched" "$(cat "$C/scheduler")" "scheduler after nobody's writes"
assert_eq "$nr" "$(cat "$C/nr_requests")" "nr_requests after nobody's writes"

# The check is made at each write too: a descriptor opened by root and
# handed to nobody does not let nobody write.
# (dash's echo says "I/O error" whatever the errno; dd tells.)
printf 'noop\n' >"$T/in"
as_nobody dd if="$T/in" status=none >"$C/scheduler" 2>"$T/err" &&
	fail "nobody wrote through an inherited descriptor"
grep -q 'Permission denied' "$T/err" || fail "inherited fd: $(cat "$T/err")"
assert_eq "$sched" "$(cat "$C/scheduler")" "scheduler after the inherited fd write"

# The owner (root here) still can.
echo 64 >"$C/nr_requests" || fail "root cannot write nr_requests"
assert_eq 64 "$(cat "$C/nr_requests")" "nr_requests written by root"
unmount_fs
check_log
