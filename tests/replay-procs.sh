# SPDX-License-Identifier: GPL-2.0-or-later
# The replay tells processes apart by pid however many there are: 5000
# pids, each reading three times, interleaved, count as 5000 processes,
# and each process's requests stay its own (cfq serves them per process).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
: "${FUSE_IOSCHED_REPLAY:=$top_builddir/replay/fuse-iosched-replay}"
require python3
python3 - "$T/procs.trace" <<'PY'
import random, sys
random.seed(7)
ev = [(i * 0.0001 + k * 0.3, 1000 + 7919 * i % 100000, random.randrange(1 << 27) * 8)
      for i in range(5000) for k in range(3)]
ev.sort()
with open(sys.argv[1], "w") as f:
    f.write("# fuse-iosched trace 1: dev cpu seq time pid action rwbs sector + count [comm]\n")
    for seq, (t, pid, s) in enumerate(ev, 1):
        f.write(f"  0,0    0 {seq:8d} {t:15.9f} {pid:6d}  Q  R {s} + 8 [p]\n")
PY
out=$("$FUSE_IOSCHED_REPLAY" -o "module_dir=$MODULE_DIR" -s cfq "$T/procs.trace") ||
	fail "the replay failed"
echo "$out" | head -n 1 | grep -q ', 15000 requests, 0 failed, 5000 processes,' ||
	fail "not 5000 processes: $(echo "$out" | head -n 1)"
