# SPDX-License-Identifier: GPL-2.0-or-later
# -o scheduler=NAME picks the scheduler shown as active in
# .control/scheduler; the other one is listed without brackets.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

S=$MNT/.control/scheduler

for sched in noop deadline; do
	mount_fs -o scheduler=$sched
	list=$(cat "$S")
	echo "-o scheduler=$sched: $list"
	assert_eq $sched "$(scheduler_active)" "active scheduler with -o scheduler=$sched"
	for other in noop deadline; do
		printf '%s\n' "$list" | grep -qw $other || fail "$other not listed: $list"
	done
	unmount_fs
done
check_log
