# SPDX-License-Identifier: GPL-2.0-or-later
# Several writers switching the scheduler at once, plus readers of all
# control files, while a file is being copied: every write either succeeds
# or fails cleanly, the daemon survives, and data is intact.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

mount_fs
C=$MNT/.control
s0=$(awk '$1 == "switches" { print $2 }' "$C/stats")
head -c $((16 * 1024 * 1024)) /dev/urandom >"$T/src"

pids=
for w in 1 2 3 4; do
	(
		i=0
		while [ $i -lt 50 ]; do
			if [ $(((i + w) % 2)) -eq 0 ]; then s=noop; else s=deadline; fi
			echo $s >"$C/scheduler" || exit 1
			i=$((i + 1))
		done
	) 2>"$T/writer$w" &
	pids="$pids $!"
done
for r in 1 2; do
	(
		i=0
		while [ $i -lt 100 ]; do
			cat "$C/scheduler" "$C/stats" "$C/nr_requests" >/dev/null || exit 1
			grep -q '\[' "$C/scheduler" || exit 2
			i=$((i + 1))
		done
	) 2>"$T/reader$r" &
	pids="$pids $!"
done
(
	i=0
	while [ $i -lt 20 ]; do
		echo $((16 + i)) >"$C/nr_requests" || exit 1
		i=$((i + 1))
	done
) 2>"$T/nr" &
pids="$pids $!"
cp "$T/src" "$MNT/f" & cp_pid=$!

st=0
for p in $pids; do wait "$p" || st=$?; done
cat "$T"/writer? "$T"/reader? "$T/nr"
assert_eq 0 "$st" "a concurrent writer or reader failed"
wait $cp_pid || fail "cp failed"
kill -0 "$DAEMON_PID" || fail "the daemon died"
cmp "$T/src" "$MNT/f" || fail "the copy differs"

# Exactly one active scheduler, and a consistent switch count.
list=$(cat "$C/scheduler")
assert_eq 1 "$(printf '%s\n' "$list" | grep -o '\[' | wc -l)" "active schedulers in '$list'"
s1=$(awk '$1 == "switches" { print $2 }' "$C/stats")
[ "$s1" -gt "$s0" ] || fail "no switch was counted: $s0 -> $s1"
[ "$((s1 - s0))" -le 200 ] || fail "more switches than writes: $((s1 - s0))"
unmount_fs
check_log
