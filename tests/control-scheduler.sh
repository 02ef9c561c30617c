# SPDX-License-Identifier: GPL-2.0-or-later
# .control/scheduler lists the schedulers with the active one in brackets,
# switches on a write of a name, and refuses anything that is not exactly
# one known name (EINVAL, nothing changes).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

S=$MNT/.control/scheduler

mount_fs
# Default: deadline, with noop listed too, one line, one active name.
list=$(cat "$S")
echo "scheduler: $list"
assert_eq 1 "$(printf '%s\n' "$list" | wc -l)" "lines in scheduler"
assert_eq deadline "$(scheduler_active)" "default active scheduler"
printf '%s\n' "$list" | grep -qw noop || fail "noop not listed: $list"
assert_eq 1 "$(printf '%s\n' "$list" | grep -o '\[' | wc -l)" "bracketed names"

# Switching is reflected at once.
echo noop >"$S" || fail "echo noop failed"
assert_eq noop "$(scheduler_active)" "after echo noop"
printf '%s\n' "$(cat "$S")" | grep -qw deadline || fail "deadline no longer listed"
echo deadline >"$S" || fail "echo deadline failed"
assert_eq deadline "$(scheduler_active)" "after echo deadline"

# Writing the active name is a successful no-op.
echo deadline >"$S" || fail "writing the active name failed"
assert_eq deadline "$(scheduler_active)" "after writing the active name"

# Without a newline, and with trailing blanks and newlines.
printf noop >"$S" || fail "printf noop (no newline) failed"
assert_eq noop "$(scheduler_active)" "after printf noop"
# (bash's printf writes at each newline: dd makes it one write.)
write_ctl "$S" 'deadline  \t\n\n' || fail "trailing blanks were refused"
assert_eq deadline "$(scheduler_active)" "after a name with trailing blanks"

# Bad values: the writer gets EINVAL and nothing changes.
before=$(cat "$S")
err=$( (echo bogus >"$S") 2>&1) && fail "echo bogus succeeded"
echo "$err" | grep -q 'Invalid argument' || fail "echo bogus: '$err'"
assert_eq "$before" "$(cat "$S")" "scheduler after a bad name"

for bad in '' '\n' ' \n' 'noop deadline\n' 'noop\nnoop\n' 'deadline\0\n' \
	'\001\377\n' 'NOOP\n' 'noo\n' 'noopx\n' '\tnoop extra\n'; do
	err=$(write_ctl "$S" "$bad") && {
		[ -z "$bad" ] && continue	# no write(2) at all: nothing to refuse
		fail "write of '$bad' succeeded"
	}
	echo "$err" | grep -q 'Invalid argument' || fail "write of '$bad': '$err'"
	assert_eq "$before" "$(cat "$S")" "scheduler after writing '$bad'"
done

# Too long: a 300-byte name and a 5000-byte write.
long=$(head -c 300 /dev/zero | tr '\0' n)
err=$(write_ctl "$S" "$long\n") && fail "a 300-byte name was accepted"
echo "$err" | grep -q 'Invalid argument' || fail "300-byte name: '$err'"
long=$(head -c 5000 /dev/zero | tr '\0' ' ')
err=$(write_ctl "$S" "noop$long") && fail "a 5000-byte write was accepted"
echo "$err" | grep -q 'Invalid argument' || fail "5000-byte write: '$err'"
assert_eq "$before" "$(cat "$S")" "scheduler after too-long writes"

# The mount still works.
echo data >"$MNT/f"
assert_eq data "$(cat "$MNT/f")" "file content after the control writes"
unmount_fs
check_log
