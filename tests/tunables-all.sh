# SPDX-License-Identifier: GPL-2.0-or-later
# For every scheduler listed in .control/scheduler: switch to it, and read,
# change, read back and restore each of its tunables in .control/iosched/;
# an invalid value is refused with EINVAL and changes nothing.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

C=$MNT/.control
I=$C/iosched
# One write(2); dd reports the errno by name.
write_ctl() { # FILE VALUE
	printf '%s\n' "$2" >"$T/in"
	dd if="$T/in" of="$1" bs=64 status=none 2>&1
}

mount_fs
scheds=$(tr -d '[]' <"$C/scheduler")
echo "schedulers: $scheds"
for s in noop deadline anticipatory cfq; do
	echo " $scheds " | grep -q " $s " || fail "$s is not listed: $scheds"
done

total=0
ro=0
for s in $scheds; do
	echo "$s" >"$C/scheduler" || fail "switch to $s failed"
	grep -q "\[$s\]" "$C/scheduler" || fail "$s is not active: $(cat "$C/scheduler")"
	names=$(ls "$I")
	if [ "$s" = noop ]; then
		assert_eq "" "$names" "noop's tunables"
		continue
	fi
	[ -n "$names" ] || fail "$s shows no tunables"
	for t in $names; do
		v=$(cat "$I/$t") || fail "$s: cannot read $t"
		case $v in
		''|*[!0-9]*) fail "$s/$t: not a number: '$v'" ;;
		esac
		# A read-only value: mode 0444, writes refused with EACCES.
		if [ "$(stat -c %a "$I/$t")" = 444 ]; then
			err=$(write_ctl "$I/$t" "$v") && fail "$s/$t: read-only, but a write succeeded"
			echo "$err" | grep -q 'Permission denied' ||
				fail "$s/$t: read-only write: '$err'"
			ro=$((ro + 1))
			continue
		fi
		[ "$(stat -c %a "$I/$t")" = 644 ] ||
			fail "$s/$t: mode $(stat -c %a "$I/$t")"
		# A neighbouring value: one of the two is within any range
		# wider than one value.
		if write_ctl "$I/$t" $((v + 1)) >"$T/err"; then
			new=$((v + 1))
		elif [ "$v" -gt 0 ] && write_ctl "$I/$t" $((v - 1)) >"$T/err"; then
			new=$((v - 1))
		else
			fail "$s/$t: neither $((v + 1)) nor $((v - 1)) accepted: $(cat "$T/err")"
		fi
		assert_eq "$new" "$(cat "$I/$t")" "$s/$t after writing $new"
		for bad in -1 x 99999999999999999999; do
			err=$(write_ctl "$I/$t" $bad) && fail "$s/$t: $bad accepted"
			echo "$err" | grep -q 'Invalid argument' ||
				fail "$s/$t: $bad: '$err'"
		done
		assert_eq "$new" "$(cat "$I/$t")" "$s/$t after bad writes"
		write_ctl "$I/$t" "$v" >"$T/err" || fail "$s/$t: restoring $v: $(cat "$T/err")"
		assert_eq "$v" "$(cat "$I/$t")" "$s/$t restored"
		total=$((total + 1))
	done
	# Writing values does not change what is listed.
	assert_eq "$names" "$(ls "$I")" "$s's tunables listed again"
done
echo "$total tunables read, written and restored, $ro read-only"
# anticipatory's est_time.
[ "$ro" -ge 1 ] || fail "no read-only tunable seen"
# deadline 5, anticipatory 5, cfq 9 when this was written.
[ "$total" -ge 19 ] || fail "only $total tunables seen"

echo deadline >"$C/scheduler"
unmount_fs
grep -E "module .*: refused" "$LOG" && fail "a scheduler module was refused"
check_log
