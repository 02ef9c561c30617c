#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# bench/overhead.sh: what does the trip through fuse-iosched cost?
#
#	bench/overhead.sh [-t SECONDS] [-r ROUNDS] [-s SIZE] [-d DIR] RESULTS_DIR
#
# Runs the same fio jobs against
#	backing   the backing directory itself (no FUSE),
#	ptll      libfuse's passthrough_ll example (FUSE, no scheduler),
#	noop      fuse-iosched with the noop scheduler,
#	deadline  fuse-iosched with the deadline scheduler,
# all four views of one backing directory, and prints for each job the
# median throughput on the backing directory and, for the others, the ratio
# to it (1.00 = as fast as no FUSE at all).
#
# The jobs: sequential 1 MiB reads and writes, buffered and O_DIRECT
# (psync), and 4 KiB random reads with libaio, O_DIRECT, queue depth 16.
# Targets run alternately (A B C D A B C D ...) for ROUNDS rounds, so that
# drift in the machine (other load, a disk's write cache filling up) is
# spread over all of them rather than landing on one; the median of the
# rounds is reported.  The page cache is dropped before every read run.
#
# Options:
#	-t SECONDS   length of each fio run (default 8)
#	-r ROUNDS    rounds, at least 3 (default 3)
#	-s SIZE      size of the test file (default 256m)
#	-d DIR       where the backing directory and mountpoints are created;
#	             it should be on the disk you want to measure (default
#	             /var/tmp: often tmpfs is /tmp)
# Environment: FUSE_IOSCHED (the daemon; default ../src/fuse-iosched next to
# this script, else fuse-iosched on PATH), MODULE_DIR (scheduler modules;
# default ../schedulers/.libs next to this script when it exists).
#
# With the defaults the whole run takes about 9 minutes: 5 jobs x 4
# targets x 3 rounds x 8 s, plus setup.  RESULTS_DIR receives every fio run
# as JSON (JOB-TARGET-rROUND.json), the machine description (machine.txt)
# and the table (summary.txt).
#
# Reading the numbers: with O_DIRECT on a FUSE mount only the FUSE page
# cache is bypassed; fuse-iosched reads and writes the backing file through
# the page cache of the backing filesystem, while on "backing" O_DIRECT
# reaches the device.  So direct rows can exceed 1.00; they measure the
# request path, not the device.  passthrough_ll opens backing files with
# O_DIRECT when the application does, and libfuse 3.14's version then fails
# writes with EINVAL: such cells print "err".
#
# Needs root (mounting, dropping caches), fio, a C compiler, libfuse3-dev
# (for pkg-config fuse3 and the examples in /usr/share/doc/libfuse3-dev),
# python3 (to read fio's JSON).  Not part of make check.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=overhead RUNTIME=8 SIZE=256m
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
EXAMPLES=/usr/share/doc/libfuse3-dev/examples
for c in cc pkg-config; do
	command -v $c >/dev/null || die "needs $c"
done
[ -f $EXAMPLES/passthrough_ll.c ] || die "no $EXAMPLES/passthrough_ll.c: install libfuse3-dev"

TARGETS="backing ptll noop deadline"

dir_of() { # TARGET
	if [ "$1" = backing ]; then echo "$B"; else echo "$W/$1"; fi
}

# --- setup ---------------------------------------------------------------

mkdir -p "$W/pt-src"
cp "$EXAMPLES/passthrough_ll.c" "$EXAMPLES/passthrough_helpers.h" "$W/pt-src/"
# shellcheck disable=SC2046 # pkg-config prints several flags
cc -O2 -Wall -o "$W/passthrough_ll" "$W/pt-src/passthrough_ll.c" \
	$(pkg-config --cflags --libs fuse3) 2>"$W/pt-src/cc.log" ||
	{ cat "$W/pt-src/cc.log" >&2; die "cannot build passthrough_ll"; }
mkdir -p "$W/ptll"
"$W/passthrough_ll" -o "source=$B" "$W/ptll"
await_mount ptll
for t in noop deadline; do
	mount_fs $t "scheduler=$t"
	switch_to $t $t		# fails when the module is not there
done

# The test file, laid out once, read and overwritten by every target.
layout "$B/bench.dat" "$SIZE"

{
	describe_machine
	echo "file:      $SIZE"
} | tee "$RESULTS/machine.txt"
echo

# --- the runs ------------------------------------------------------------

# name | read or write | fio arguments
JOBS='seqread-buffered|read|--rw=read --bs=1m --ioengine=psync --direct=0
seqread-direct|read|--rw=read --bs=1m --ioengine=psync --direct=1
seqwrite-buffered|write|--rw=write --bs=1m --ioengine=psync --direct=0 --end_fsync=1
seqwrite-direct|write|--rw=write --bs=1m --ioengine=psync --direct=1
randread-4k-qd16|read|--rw=randread --bs=4k --ioengine=libaio --direct=1 --iodepth=16'

total=$(( $(echo "$JOBS" | wc -l) * 4 * ROUNDS ))
n=0
while IFS='|' read -r job dir args; do
	for r in $(seq "$ROUNDS"); do
		for t in $TARGETS; do
			n=$((n + 1))
			printf '[%d/%d] %s %s round %d\n' $n $total "$job" "$t" "$r"
			[ "$dir" = write ] || drop_caches
			out=$RESULTS/$job-$t-r$r.json
			# shellcheck disable=SC2086
			fio --name="$job" --filename="$(dir_of "$t")/bench.dat" \
				--size="$SIZE" --time_based --runtime="$RUNTIME" \
				--output-format=json --output="$out" $args \
				>/dev/null 2>"$out.err" || true
			[ -s "$out.err" ] || rm -f "$out.err"
		done
	done
done <<EOF
$JOBS
EOF

# --- the table -----------------------------------------------------------

python3 - "$RESULTS" "$ROUNDS" "$TARGETS" "$JOBS" <<'PY' | tee "$RESULTS/summary.txt"
import json, os, statistics, sys

results, rounds, targets, jobs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4]

def measure(job, direction, target, r):
    """MiB/s for 1 MiB jobs, thousands of IOPS for 4 KiB; None on error."""
    path = os.path.join(results, "%s-%s-r%d.json" % (job, target, r))
    try:
        with open(path) as f:
            text = f.read()
        # fio may print warnings before the JSON.
        data = json.loads(text[text.index("{"):])
        j = data["jobs"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return None
    if j.get("error"):
        return None
    d = j[direction]
    if job.startswith("rand"):
        return d["iops"] / 1000.0
    return d["bw"] / 1024.0

print("%-18s %-6s %9s %9s %9s %9s" % (("job", "unit") + tuple(targets)))
for line in jobs.splitlines():
    job, direction, _ = line.split("|", 2)
    unit = "kIOPS" if job.startswith("rand") else "MiB/s"
    med = {}
    for t in targets:
        vals = [measure(job, direction, t, r) for r in range(1, rounds + 1)]
        med[t] = None if None in vals else statistics.median(vals)
    base = med[targets[0]]
    cells = ["%9.1f" % base if base is not None else "%9s" % "err"]
    for t in targets[1:]:
        if med[t] is None:
            cells.append("%9s" % "err")
        elif not base:
            cells.append("%9s" % "-")
        else:
            cells.append("%9.2f" % (med[t] / base))
    print("%-18s %-6s %s" % (job, unit, " ".join(cells)))
print()
print("%s: median of %d rounds, in the unit shown; other columns: ratio"
      " to %s (higher is faster)" % (targets[0], rounds, targets[0]))
PY
