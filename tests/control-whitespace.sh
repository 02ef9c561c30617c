# SPDX-License-Identifier: GPL-2.0-or-later
# One rule for every control file, sysfs's for its scheduler attribute:
# white space around the value (spaces, tabs, newlines, carriage returns)
# is ignored, one value only; numbers are decimal digits, leading zeros
# allowed.  The same writes succeed or fail on scheduler, nr_requests and
# a tunable.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

C=$MNT/.control

mount_fs -o scheduler=deadline
# Each accepted form, around a value: scheduler, nr_requests, read_expire.
for around in '%s' '%s\n' ' %s' '%s ' '\t%s\t\n' '\n%s\n' ' \t%s\r\n' \
	'%s\n\n'; do
	for s in noop deadline; do
		write_ctl "$C/scheduler" "$(printf "$around" $s)" ||
			fail "scheduler: '$around' around $s refused"
		assert_eq $s "$(scheduler_active)" "scheduler after '$around' around $s"
	done
	for v in 7 07 128; do
		write_ctl "$C/nr_requests" "$(printf "$around" $v)" ||
			fail "nr_requests: '$around' around $v refused"
		assert_eq $((10#$v)) "$(cat "$C/nr_requests")" "nr_requests after '$around' around $v"
		write_ctl "$C/iosched/read_expire" "$(printf "$around" $v)" ||
			fail "read_expire: '$around' around $v refused"
		assert_eq $((10#$v)) "$(cat "$C/iosched/read_expire")" "read_expire after '$around' around $v"
	done
done
# Refused alike: two values, a sign, a prefix, a NUL, only white space.
for bad in '7 8' '7\n8' '+7' '-7' '0x7' '7\0' '\0 7' ' \t\n' '7.0'; do
	for f in nr_requests iosched/read_expire; do
		before=$(cat "$C/$f")
		err=$(write_ctl "$C/$f" "$bad") && fail "$f: '$bad' accepted"
		echo "$err" | grep -q 'Invalid argument' || fail "$f: '$bad': $err"
		assert_eq "$before" "$(cat "$C/$f")" "$f after '$bad'"
	done
done
for bad in 'noop deadline' 'noop\ndeadline' ' \t\n' 'noop\0'; do
	err=$(write_ctl "$C/scheduler" "$bad") && fail "scheduler: '$bad' accepted"
	echo "$err" | grep -q 'Invalid argument' || fail "scheduler: '$bad': $err"
	assert_eq deadline "$(scheduler_active)" "scheduler after '$bad'"
done
unmount_fs
check_log 'switch refused'
