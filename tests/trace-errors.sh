#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A failed request shows in .control/trace as blkparse shows one: its C
# line carries the error in brackets ("[comm] [-28]"), a successful one
# none; fuse-iosched-replay counts them ("N failed" in its header, "failed"
# in --json), from our traces and from blkparse's ("[-5]" where a
# successful completion has "[0]").
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
: "${FUSE_IOSCHED_REPLAY:=$top_builddir/replay/fuse-iosched-replay}"
replay() { "$FUSE_IOSCHED_REPLAY" -o "module_dir=$MODULE_DIR" -s noop "$@"; }

# blkparse's own completions: [0] succeeded, [-5] failed.
cat >"$T/b.blkparse" <<'EOF'
  8,0    0        1     0.000000000   101  Q   R 0 + 8 [a]
  8,0    0        2     0.000100000     0  C   R 0 + 8 [0]
  8,0    0        3     0.001000000   101  Q   R 8 + 8 [a]
  8,0    0        4     0.001100000     0  C   R 8 + 8 [-5]
  8,0    0        5     0.002000000   101  Q   W 16 + 8 [a]
  8,0    0        6     0.002100000     0  C   W 16 + 8 [-28]
EOF
replay "$T/b.blkparse" >"$T/out" || fail "replay of blkparse failed"
grep -q '^# .*: blkparse, 3 requests, 2 failed,' "$T/out" ||
	fail "blkparse's [-5] and [-28] not counted: $(head -n 1 "$T/out")"
replay --json "$T/b.blkparse" >"$T/json" || fail "--json failed"
grep -q '"failed": 2' "$T/json" || fail "--json: no failed 2: $(cat "$T/json")"

require_root
require timeout
# A backing file system with room for little: writes beyond it fail.
mount -t tmpfs -o size=256k tmpfs "$BACKING" ||
	skip_env "cannot mount a tmpfs"
cleanup_push "fusermount3 -u '$MNT' 2>/dev/null; sleep 0.2; umount '$BACKING' 2>/dev/null || umount -l '$BACKING'"
mount_fs
TR=$MNT/.control/trace
timeout 60 cat "$TR" >"$T/run.trace" & R=$!
cleanup_push "kill $R 2>/dev/null"
wait_for "the trace's first line" grep -q '^# fuse-iosched trace' "$T/run.trace"

dd if=/dev/zero of="$MNT/small" bs=4k count=4 conv=fsync status=none ||
	fail "writing 16 KiB"
dd if=/dev/zero of="$MNT/fill" bs=64k count=16 status=none 2>"$T/dd.err" &&
	fail "1 MiB fitted in 256 KiB"
grep -q 'No space left' "$T/dd.err" || fail "dd: $(cat "$T/dd.err")"
# A last read by a program of its own marks the end of the trace.
python3 -c 'import os, sys; os.pread(os.open(sys.argv[1], os.O_RDONLY), 4096, 0)' \
	"$MNT/small" || fail "the marker read failed"
wait_for "the marker's C line" grep -Eq ' C +R.*\[python3\]' "$T/run.trace"
kill $R 2>/dev/null || true
wait $R 2>/dev/null || true

# Every failed write's C line says -ENOSPC, and no successful one has a
# mark: as many marks as the write errors the stats count.
nfail=$(awk '$6 == "C" && $12 == "[-28]"' "$T/run.trace" | wc -l)
[ "$nfail" -gt 0 ] || fail "no C line with [-28]: $(grep ' C ' "$T/run.trace" | tail -n 3)"
errs=$(stat_of write errors)
assert_eq "$errs" "$nfail" "C lines marked [-28] against the write errors"
awk '$6 == "C" && $12 != "wait" && $12 != "[-28]"' "$T/run.trace" | grep . &&
	fail "a C line with another mark"
grep -Eq ' C +R.*\[python3\] wait [0-9.]+ service [0-9.]+ cgroup [^ ]+$' "$T/run.trace" ||
	fail "a successful C line is not as before"

replay "$T/run.trace" >"$T/out" || fail "replay of our trace failed"
grep -q "^# .*: fuse-iosched, [0-9]* requests, $nfail failed," "$T/out" ||
	fail "replay does not count $nfail failed: $(head -n 1 "$T/out")"
exit 0
