#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A process moved to another group is charged to that group: a reader's
# requests, charged to its group a in .control/trace, are charged to b
# once it is moved there (cgroup.c: from its first request 0.5 s after
# its group was last read, though each session thread remembers the
# group of the last pid it served), and none to a after the first to b.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
dio_backing 64
cg_setup a b
# Sparse: the reads cost no disk, and the reader outlasts the test.
truncate -s 4G "$BACKING/f" || fail "cannot make f"

mount_fs
trace_start "$T/trace"

# One process, one 4 KiB request at a time, for the whole test.
cg_start "$CG/a" dd if="$MNT/f" of=/dev/null bs=4k iflag=direct status=none
R=$CG_PID

# reads SKIP GROUP: the reader's queued requests after the trace's first
# SKIP lines, charged to GROUP ("" for any), counted.
reads() {
	tail -n "+$(($1 + 1))" "$T/trace" | awk -v pid="$R" -v g="$2" \
		'$5 == pid && $6 == "Q" && (g == "" || $NF == g) { n++ }
		 END { print n + 0 }'
}
some_reads() { [ "$(reads "$1" "$2")" -ge "$3" ]; }

wait_for "a read charged to a" some_reads 0 "$CG/a" 1
echo "$R" >"$CG_ROOT$CG/b/cgroup.procs" || fail "cannot move the reader to b"
wait_for "a read charged to b after the move" some_reads 0 "$CG/b" 1
# Every thread's memory of a went with the read of the group it came
# from, which the first read charged to b came after.
first=$(grep -n " $R  *Q .* cgroup $CG/b\$" "$T/trace" | head -n 1 |
	cut -d: -f1)
wait_for "200 more reads" some_reads "$first" "" 200
stale=$(reads "$first" "$CG/a")
echo "after the first read charged to b: $(reads "$first" "$CG/b") to b," \
	"$stale to a"
[ "$stale" -eq 0 ] || fail "$stale reads charged to a after the first to b"
kill "$R" 2>/dev/null
wait "$R" 2>/dev/null || :
check_log
