# SPDX-License-Identifier: GPL-2.0-or-later
# With -o allow_other, another user can read the tunables in
# .control/iosched/ but not write them (EACCES), and nothing changes.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require setpriv

# nobody must be able to walk to the mountpoint.
chmod 755 "$T"
mount_fs -o allow_other -o scheduler=deadline
I=$MNT/.control/iosched
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

assert_eq "$(ls "$I")" "$(as_nobody ls "$I")" "iosched as listed by nobody"
assert_eq 16 "$(as_nobody cat "$I/fifo_batch")" "fifo_batch as read by nobody"

for what in "echo 1 >$I/fifo_batch" "echo 1 >>$I/fifo_batch" \
	"truncate -s 0 $I/fifo_batch" \
	"printf 1 | dd of=$I/fifo_batch conv=notrunc status=none" \
	"echo 0 >$I/front_merges"; do
	if as_nobody sh -c "$what" >"$T/err" 2>&1; then
		fail "nobody could: $what"
	fi
	grep -q 'Permission denied' "$T/err" || fail "nobody, $what: $(cat "$T/err")"
done
assert_eq 16 "$(cat "$I/fifo_batch")" "fifo_batch after nobody's writes"
assert_eq 1 "$(cat "$I/front_merges")" "front_merges after nobody's writes"

# Checked at each write too: a descriptor opened by root and handed to
# nobody does not let nobody write.
printf '1\n' >"$T/in"
as_nobody dd if="$T/in" status=none >"$I/fifo_batch" 2>"$T/err" &&
	fail "nobody wrote through an inherited descriptor"
grep -q 'Permission denied' "$T/err" || fail "inherited fd: $(cat "$T/err")"
assert_eq 16 "$(cat "$I/fifo_batch")" "fifo_batch after the inherited fd write"

# The owner (root here) still can.
echo 4 >"$I/fifo_batch" || fail "root cannot write fifo_batch"
assert_eq 4 "$(cat "$I/fifo_batch")" "fifo_batch written by root"
assert_eq 4 "$(as_nobody cat "$I/fifo_batch")" "fifo_batch as nobody sees it"
unmount_fs
check_log
