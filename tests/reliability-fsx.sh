#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/fsx (random write, read, truncate, fallocate, punch, zero, mmap,
# copy_file_range, O_DIRECT, each checked against a model of the file)
# runs 100,000 operations on the mount, as two concurrent processes of
# 50,000 on two files (which also gives the elevator two streams to sort
# and merge, and halves the wall time on two cores), while another process
# switches among every listed scheduler every few milliseconds.  First a
# shorter run on the backing directory itself, as a check of fsx.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
FSX=$top_builddir/tests/fsx
[ -x "$FSX" ] || skip_env "$FSX is not built (make check builds it)"
NOPS=${FSX_NOPS:-50000}	# per process
SANITY_NOPS=20000
# TEST_QUICK=1 (slow builds, e.g. under TSan): fewer operations.
[ -z "${TEST_QUICK:-}" ] || { NOPS=${FSX_NOPS:-5000}; SANITY_NOPS=5000; }
SEED=${FSX_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}

# fsx prints its seed; a failure is replayed with FSX_SEED (or by hand).
echo "seed $SEED"
timeout 200 "$FSX" -d -N "$SANITY_NOPS" -S "$SEED" "$BACKING/fsx-sanity" ||
	fail "fsx fails on the backing directory itself (status $?, 124: timeout)"
rm -f "$BACKING/fsx-sanity"

mount_fs -o scheduler=deadline
C=$MNT/.control
names=$(tr -d '[]' <"$C/scheduler")
echo "schedulers: $names"
[ "$(echo $names | wc -w)" -ge 2 ] || fail "fewer than two schedulers: $names"

# The switcher: one name after the other, a few milliseconds apart, until
# told to stop; it counts the switches that worked and names those that
# did not.
switcher() {
	ok=0 bad=0
	while [ ! -e "$T/stop" ]; do
		for s in $names; do
			if echo "$s" >"$C/scheduler" 2>>"$T/switch.err"; then
				ok=$((ok + 1))
			else
				bad=$((bad + 1))
				echo "switch to $s failed" >>"$T/switch.err"
			fi
			sleep 0.003
		done
	done
	echo "$ok $bad" >"$T/switch.count"
}
switcher & sw_pid=$!
cleanup_push "touch '$T/stop'; kill $sw_pid 2>/dev/null; wait $sw_pid 2>/dev/null"

start=$(date +%s)
timeout 200 "$FSX" -d -N "$NOPS" -S "$SEED" "$MNT/fsx-1" & p1=$!
timeout 200 "$FSX" -d -N "$NOPS" -S "$((SEED + 1))" "$MNT/fsx-2" & p2=$!
st1=0; wait $p1 || st1=$?
st2=0; wait $p2 || st2=$?
echo "fsx on the mount: $(( $(date +%s) - start )) s"
touch "$T/stop"
wait $sw_pid
[ "$st1" -eq 0 ] || fail "fsx on fsx-1 failed (status $st1, 124: timeout); replay: $FSX -d -N $NOPS -S $SEED FILE"
[ "$st2" -eq 0 ] || fail "fsx on fsx-2 failed (status $st2, 124: timeout); replay: $FSX -d -N $NOPS -S $((SEED + 1)) FILE"

read -r ok bad <"$T/switch.count"
echo "switches: $ok done, $bad refused"
[ -s "$T/switch.err" ] && { sort "$T/switch.err" | uniq -c; fail "some switches failed"; }
[ "$ok" -ge 100 ] || fail "only $ok switches during the run"

# What the mount shows is what the backing file holds.
cmp "$MNT/fsx-1" "$BACKING/fsx-1" || fail "mount and backing file differ (fsx-1)"
cmp "$MNT/fsx-2" "$BACKING/fsx-2" || fail "mount and backing file differ (fsx-2)"

stats_settled "the run"
unmount_fs
check_log
