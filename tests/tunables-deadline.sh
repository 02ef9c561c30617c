# SPDX-License-Identifier: GPL-2.0-or-later
# Under deadline, .control/iosched/ holds exactly deadline's tunables, each
# showing its value and a newline; valid writes are read back, and bad
# values (sign, garbage, empty, overflow, out of the table's range, too
# long) fail with EINVAL and change nothing.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

I=$MNT/.control/iosched

mount_fs -o scheduler=deadline
assert_eq "fifo_batch front_merges prio_aging_expire read_expire write_expire writes_starved" \
	"$(ls "$I" | tr '\n' ' ' | sed 's/ $//')" "ls .control/iosched"
[ "$(ls -la "$I" | grep -c '^-rw-r--r--')" -eq 6 ] ||
	fail "ls -la .control/iosched: $(ls -la "$I")"

# The kernel's defaults, in the kernel's units (ms for times).
set -- read_expire 500 write_expire 5000 writes_starved 2 front_merges 1 \
	fifo_batch 16 prio_aging_expire 10000
while [ $# -gt 0 ]; do
	assert_eq "$2" "$(cat "$I/$1")" "default of $1"
	shift 2
done
# The value and one newline, nothing else.
assert_eq "$(printf '500\n' | od -c)" "$(od -c <"$I/read_expire")" \
	"read_expire bytes"

# Valid values, the ends of each range included, are read back.
check_good() { # TUNABLE GOOD...
	t=$1
	shift
	for v; do
		echo "$v" >"$I/$t" || fail "echo $v >$t"
		assert_eq "$v" "$(cat "$I/$t")" "$t after $v"
	done
}
check_good read_expire 0 3600000 250
check_good write_expire 0 3600000 7000
check_good prio_aging_expire 0 3600000 2000
check_good writes_starved 0 1000 4
check_good front_merges 0 1
check_good fifo_batch 1 1024 8
# printf without a newline, trailing blanks, leading zeros.
printf 32 >"$I/fifo_batch" || fail "printf 32 >fifo_batch"
assert_eq 32 "$(cat "$I/fifo_batch")" "fifo_batch after printf 32"
write_ctl "$I/fifo_batch" '64 \t\n' || fail "64 with trailing blanks refused"
assert_eq 64 "$(cat "$I/fifo_batch")" "fifo_batch after '64 \\t\\n'"
write_ctl "$I/fifo_batch" '0009\n' || fail "0009 refused"
assert_eq 9 "$(cat "$I/fifo_batch")" "fifo_batch after 0009"
# A descriptor read again from offset 0 sees the new value.
exec 3<"$I/fifo_batch"
echo 12 >"$I/fifo_batch"
assert_eq 12 "$(cat <&3)" "fifo_batch read through an open descriptor"
exec 3<&-

# Bad values: EINVAL, and the value does not change.
long=$(head -c 5000 /dev/zero | tr '\0' '1')
# Blanks inside values are written as \040: the list is split on blanks.
bad_common="-1\n abc\n \n 1e3\n 99999999999999999999\n
	123456789012345678901\n 18446744073709551617\n +5\n 0x10\n 1.5\n
	12abc\n 1\0402\n 5\0\n \377\n"
check_bad() { # TUNABLE BAD...
	t=$1
	shift
	before=$(cat "$I/$t")
	for bad; do
		err=$(write_ctl "$I/$t" "$bad") && fail "$t: write of '$bad' succeeded"
		echo "$err" | grep -q 'Invalid argument' || fail "$t: write of '$bad': '$err'"
		assert_eq "$before" "$(cat "$I/$t")" "$t after writing '$bad'"
	done
	err=$(write_ctl "$I/$t" "$long") && fail "$t: a 5000-byte write succeeded"
	echo "$err" | grep -q 'Invalid argument' || fail "$t: 5000 bytes: '$err'"
	# The shell's own redirection, as users write.
	err=$( (echo -1 >"$I/$t") 2>&1) && fail "$t: echo -1 succeeded"
	echo "$err" | grep -q 'Invalid argument' || fail "$t: echo -1: '$err'"
	err=$( (: >"$I/$t"; printf '' >"$I/$t"; echo >"$I/$t") 2>&1) &&
		fail "$t: an empty line succeeded"
	assert_eq "$before" "$(cat "$I/$t")" "$t after the bad writes"
}
# shellcheck disable=SC2086 # split the list on purpose
check_bad read_expire $bad_common 3600001 9223372036854775808
check_bad write_expire $bad_common 3600001
check_bad prio_aging_expire $bad_common 3600001
check_bad writes_starved $bad_common 1001
check_bad front_merges $bad_common 2 10
check_bad fifo_batch $bad_common 0 1025

# Names that are not deadline's tunables do not exist.
[ -e "$I/quantum" ] && fail "cfq's quantum shows under deadline"
cat "$I/nope" 2>"$T/err" && fail "cat of a missing tunable worked"
grep -q 'No such file' "$T/err" || fail "missing tunable: $(cat "$T/err")"
ls "$I/fifo_batch/x" 2>"$T/err" && fail "lookup inside a tunable worked"
grep -q 'Not a directory' "$T/err" || fail "lookup inside fifo_batch: $(cat "$T/err")"
# Nothing can be created or removed in iosched/.
touch "$I/new" 2>/dev/null && fail "touch in iosched worked"
rm -f "$I/fifo_batch" 2>/dev/null && fail "rm of a tunable worked"
[ -e "$I/fifo_batch" ] || fail "fifo_batch vanished"

unmount_fs
check_log
