#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/overhead.sh: what does the trip through fuse-iosched cost?
#
#	bench/overhead.sh [-t SECONDS] [-r ROUNDS] [-s SIZE] [-d DIR] RESULTS_DIR
#
# Runs the same fio jobs against
#	backing   the backing directory itself (no FUSE),
#	ptll      libfuse's passthrough_ll example (FUSE, no scheduler),
#	ptllx     the same with -o xattr,default_permissions: the kernel then
#	          asks it what it asks fuse-iosched (a GETATTR of the
#	          directory before each create; a GETXATTR of
#	          security.capability before each write, which fuse-iosched
#	          no longer gets: FUSE_HANDLE_KILLPRIV_V2), so this is like
#	          with like,
#	pthp      with LIBFUSE_SRC only: libfuse's passthrough_hp (C++, the
#	          version in that tree) with --nopassthrough, data through
#	          the daemon as ours goes (no kernel passthrough),
#	noop      fuse-iosched with the noop scheduler,
#	deadline  fuse-iosched with the deadline scheduler,
#	base      with OVERHEAD_BASE=DAEMON only: that build of fuse-iosched
#	          with noop (an older commit, for before/after in one run),
#	uring     with OVERHEAD_URING set only: fuse-iosched with noop and
#	          -o engine=uring (OVERHEAD_URING=yes, or the options to add,
#	          e.g. OVERHEAD_URING=threads=16 for a ring of depth 16),
#	ring      with OVERHEAD_FUSE_URING=N only: fuse-iosched with noop
#	          and -o fuse_uring=N, requests through FUSE over io_uring
#	          (the script turns the kernel's enable_uring on for the run
#	          and back as it was after),
# all the views of one backing directory, and prints for each job the
# median throughput on the backing directory and, for the others, the ratio
# to it (1.00 = as fast as no FUSE at all).  A second table gives the CPU
# time of each FUSE daemon (user + system, all its threads, from
# /proc/PID/stat before and after the run) per I/O that fio did.  A third
# compares targets pairwise round by round (noop/ptll, deadline/noop ...:
# the median and range of each round's ratio), which the drift between
# rounds does not move.
#
# Every run is cold and reads each block at most once: before each run the
# test file's pages are evicted (POSIX_FADV_DONTNEED on the backing file
# and on the target's view of it, so that neither the backing page cache
# nor a FUSE page cache holds it), and fio jobs on the file are not time
# based: they stop at the end of the file or after SECONDS, whichever comes
# first, and random jobs never read a block twice (fio's random map).  So
# every column of a direct job does direct I/O, and the "served by" column
# says which cache could serve each row.
#
# The jobs: sequential 1 MiB reads and writes, buffered and O_DIRECT
# (psync); cold 4 KiB random reads with libaio, O_DIRECT, queue depth 1 and
# 16; small-file creation: 1000 files, each created, written with 4 KiB
# (psync, buffered) and closed in turn, all removed and created again until
# the time is up (file/s); an untar of a tree of small files (part of
# /usr/include) followed by a sync of the backing filesystem (file/s); and
# SQLite small transactions (one INSERT each, synchronous=FULL, so each
# commits to the device: tx/s).
# Targets run alternately for ROUNDS rounds, each round starting one
# further on (A B C D, B C D A, C D A B ...), so that drift in the machine
# (other load, a disk's write cache filling up) is spread over all of them
# rather than landing on one, and no target always runs right after the
# same other; the median of the rounds is reported.  fuse-iosched runs
# with backing_io=auto (the default): an O_DIRECT open reaches the device,
# as on the backing directory and through passthrough_ll.
#
# Options:
#	-t SECONDS   longest fio run (default 8)
#	-r ROUNDS    rounds, at least 3 (default 3)
#	-s SIZE      size of the test file (default 1g)
#	-d DIR       where the backing directory and mountpoints are created;
#	             it should be on the disk you want to measure (default
#	             /var/tmp: often tmpfs is /tmp)
# Environment: FUSE_IOSCHED (the daemon; default ../daemon/fuse-iosched next to
# this script, else fuse-iosched on PATH), MODULE_DIR (scheduler modules;
# default ../schedulers/.libs next to this script when it exists),
# OVERHEAD_JOBS (run only these jobs, by name, space-separated),
# OVERHEAD_BASE (another fuse-iosched binary, run as the target base; the
# third table then has noop/base and base/ptll too),
# OVERHEAD_URING (yes, or -o options: adds the target uring),
# OVERHEAD_FUSE_URING (ring entries per CPU: adds the target ring),
# LIBFUSE_SRC (a libfuse source tree, or a git directory whose HEAD is
# exported, e.g. a clone's .git: its passthrough_hp is built with meson,
# ninja and a C++20 compiler in the work directory and run as the target
# pthp; without it that column is left out, with a message).
#
# With the defaults the whole run takes about 20 minutes: 9 jobs x 5
# targets x 3 rounds, each at most 8 s, plus setup.  RESULTS_DIR receives
# every fio run as JSON (JOB-TARGET-rROUND.json; .rate for the untar and
# SQLite jobs), the daemon's CPU seconds during it (JOB-TARGET-rROUND.cpu),
# the daemons' messages (daemon-TARGET.log), the machine description
# (machine.txt) and the tables (summary.txt).
#
# The CPU time is counted in clock ticks (usually 10 ms): with short runs
# at low request rates the per-I/O figures are coarse.
#
# passthrough_ll opens backing files with O_DIRECT when the application
# does, and libfuse 3.14's version then fails writes with EINVAL (its
# write buffer is not aligned): such cells print "err".
#
# Needs root (mounting, dropping caches), fio, a C compiler, libfuse3-dev
# (for pkg-config fuse3 and the examples in /usr/share/doc/libfuse3-dev),
# python3 (to read fio's JSON), tar and sqlite3.  Not part of make check.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=overhead RUNTIME=8 SIZE=1g
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
EXAMPLES=/usr/share/doc/libfuse3-dev/examples
for c in cc pkg-config tar sqlite3; do
	command -v $c >/dev/null || die "needs $c"
done
[ -f $EXAMPLES/passthrough_ll.c ] || die "no $EXAMPLES/passthrough_ll.c: install libfuse3-dev"

if [ -n "${LIBFUSE_SRC:-}" ]; then
	for c in meson ninja c++ git; do
		command -v $c >/dev/null || die "LIBFUSE_SRC needs $c"
	done
	[ -f "$LIBFUSE_SRC/meson.build" ] ||
		git --git-dir="$LIBFUSE_SRC" rev-parse -q --verify HEAD >/dev/null ||
		die "LIBFUSE_SRC=$LIBFUSE_SRC: neither a libfuse tree nor a git directory"
else
	echo "overhead: LIBFUSE_SRC is not set: no passthrough_hp column (pthp)"
fi
TARGETS="backing ptll ptllx${LIBFUSE_SRC:+ pthp} noop deadline${OVERHEAD_BASE:+ base}${OVERHEAD_URING:+ uring}${OVERHEAD_FUSE_URING:+ ring}"
NFILES=1000
NTX=300

dir_of() { # TARGET
	if [ "$1" = backing ]; then echo "$B"; else echo "$W/$1"; fi
}

# evict TARGET: the test file leaves the backing page cache and TARGET's.
evict() {
	python3 - "$B/bench.dat" "$(dir_of "$1")/bench.dat" <<'PY'
import os, sys
for path in dict.fromkeys(sys.argv[1:]):
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        continue
    os.fsync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
PY
}

# Timed jobs that are not fio: job_NAME DIR works in DIR and prints how
# many things it did; run_timed OUT NAME DIR writes things per second and
# things to OUT.rate, and removes what the job made.
job_untar() {
	mkdir "$1/untar"
	tar -xf "$W/tree.tar" -C "$1/untar"
	sync -f "$B"
	find "$1/untar" -type f | wc -l
}
job_sqlite() {
	sqlite3 "$1/bench.db" <"$W/sqlite.sql" >/dev/null
	echo "$NTX"
}
run_timed() {
	t0=$(date +%s.%N)
	done_n=$("job_$2" "$3")
	t1=$(date +%s.%N)
	awk -v n="$done_n" -v a="$t0" -v b="$t1" 'BEGIN { print n / (b - a), n }' >"$1.rate"
	rm -rf "$3/untar" "$3/bench.db" "$3/bench.db-journal"
}

# cpu_ticks TARGET: user and system time of all the threads of TARGET's
# daemon so far, in clock ticks.
cpu_ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/${DAEMON[$1]}/stat" ||
		die "the $1 daemon is gone"
}
HZ=$(getconf CLK_TCK)

# --- setup ---------------------------------------------------------------

mkdir -p "$W/pt-src"
cp "$EXAMPLES/passthrough_ll.c" "$EXAMPLES/passthrough_helpers.h" "$W/pt-src/"
# shellcheck disable=SC2046 # pkg-config prints several flags
cc -O2 -Wall -o "$W/passthrough_ll" "$W/pt-src/passthrough_ll.c" \
	$(pkg-config --cflags --libs fuse3) 2>"$W/pt-src/cc.log" ||
	{ cat "$W/pt-src/cc.log" >&2; die "cannot build passthrough_ll"; }
# Every daemon in the foreground, so that its pid is known for its CPU time.
mkdir -p "$W/ptll"
"$W/passthrough_ll" -f -o "source=$B" "$W/ptll" >>"$RESULTS/daemon-ptll.log" 2>&1 &
DAEMON["ptll"]=$!
await_mount ptll
mkdir -p "$W/ptllx"
"$W/passthrough_ll" -f -o "source=$B,xattr,default_permissions" "$W/ptllx" \
	>>"$RESULTS/daemon-ptllx.log" 2>&1 &
DAEMON["ptllx"]=$!
await_mount ptllx
if [ -n "${LIBFUSE_SRC:-}" ]; then
	# Out of tree, so that a checkout is left as it was; a git directory
	# gives its HEAD.  Only what passthrough_hp needs is built.
	src=$LIBFUSE_SRC
	if [ ! -f "$src/meson.build" ]; then
		src=$W/libfuse-src
		mkdir -p "$src"
		git --git-dir="$LIBFUSE_SRC" archive HEAD | tar -x -C "$src"
	fi
	{ meson setup --buildtype=release -Dexamples=true -Dutils=false \
		-Dtests=false -Denable-io-uring=false "$W/libfuse-build" "$src" &&
	  ninja -C "$W/libfuse-build" example/passthrough_hp; } \
		>"$W/libfuse-build.log" 2>&1 ||
		{ tail -n 20 "$W/libfuse-build.log" >&2
		  die "cannot build passthrough_hp from $LIBFUSE_SRC"; }
	echo "pthp:      passthrough_hp of libfuse $(git --git-dir="$LIBFUSE_SRC" \
		describe --always 2>/dev/null || echo "in $LIBFUSE_SRC")" \
		>"$W/pthp.txt"
	mkdir -p "$W/pthp"
	"$W/libfuse-build/example/passthrough_hp" --foreground --nopassthrough \
		"$B" "$W/pthp" >>"$RESULTS/daemon-pthp.log" 2>&1 &
	DAEMON["pthp"]=$!
	await_mount pthp
fi
for t in noop deadline; do
	mount_fs $t "scheduler=$t" "$RESULTS/daemon-$t.log"
	switch_to $t $t		# fails when the module is not there
done
if [ -n "${OVERHEAD_BASE:-}" ]; then
	FUSE_IOSCHED=$OVERHEAD_BASE mount_fs base scheduler=noop \
		"$RESULTS/daemon-base.log"
fi
if [ -n "${OVERHEAD_URING:-}" ]; then
	o=scheduler=noop,engine=uring
	[ "$OVERHEAD_URING" = yes ] || o=$o,$OVERHEAD_URING
	mount_fs uring "$o" "$RESULTS/daemon-uring.log"
fi
if [ -n "${OVERHEAD_FUSE_URING:-}" ]; then
	P=/sys/module/fuse/parameters/enable_uring
	[ -w $P ] || die "OVERHEAD_FUSE_URING: the kernel has no $P"
	uring_was=$(cat $P)
	# Back as it was once the mounts are gone (off, a ring mount fails).
	trap 'bench_cleanup; echo "$uring_was" >$P' EXIT
	echo Y >$P
	mount_fs ring "scheduler=noop,fuse_uring=$OVERHEAD_FUSE_URING" \
		"$RESULTS/daemon-ring.log"
	for i in $(seq 50) fail; do
		[ "$i" != fail ] || die "ring: the daemon did not start its ring"
		! grep -q "fuse_uring: [0-9]* queues" "$RESULTS/daemon-ring.log" ||
			break
		sleep 0.1
	done
fi

# The test file, laid out once, read and overwritten by every target.
layout "$B/bench.dat" "$SIZE"
# The tree to untar, about 1200 small files; the SQLite transactions.
tar -cf "$W/tree.tar" -C /usr/include linux x86_64-linux-gnu
sqlite_script "$W/sqlite.sql" $NTX

{
	describe_machine
	[ -z "${OVERHEAD_BASE:-}" ] || echo "base:      $OVERHEAD_BASE"
	[ -z "${LIBFUSE_SRC:-}" ] || cat "$W/pthp.txt"
	echo "file:      $SIZE; small files: $NFILES of 4 KiB, created, written, closed"
	echo "untar:     $(tar -tf "$W/tree.tar" | wc -l) entries, $(du -h "$W/tree.tar" | cut -f1); sqlite: $NTX transactions"
} | tee "$RESULTS/machine.txt"
echo

# --- the runs ------------------------------------------------------------

# name | read or write | unit | served by | fio arguments, or @NAME for
# job_NAME; each fio run adds the target's directory and the run time.
# Not time based, but for create-4k: each block at most once per run.
FILE="--filename=bench.dat --size=$SIZE"
JOBS="seqread-buffered|read|MiB/s|cold page caches|$FILE --rw=read --bs=1m --ioengine=psync --direct=0
seqread-direct|read|MiB/s|device|$FILE --rw=read --bs=1m --ioengine=psync --direct=1
seqwrite-buffered|write|MiB/s|page caches, fsync|$FILE --rw=write --bs=1m --ioengine=psync --direct=0 --end_fsync=1
seqwrite-direct|write|MiB/s|device|$FILE --rw=write --bs=1m --ioengine=psync --direct=1
randread-4k-qd1|read|kIOPS|device (cold)|$FILE --rw=randread --bs=4k --ioengine=libaio --direct=1 --iodepth=1
randread-4k-qd16|read|kIOPS|device (cold)|$FILE --rw=randread --bs=4k --ioengine=libaio --direct=1 --iodepth=16
create-4k|write|file/s|page caches|--time_based --nrfiles=$NFILES --filesize=4k --openfiles=1 --file_service_type=sequential --create_on_open=1 --unlink_each_loop=1 --unlink=1 --rw=write --bs=4k --ioengine=psync
untar|write|file/s|page caches, syncfs|@untar
sqlite-tx|write|tx/s|device (fsync)|@sqlite"
if [ -n "${OVERHEAD_JOBS:-}" ]; then
	JOBS=$(echo "$JOBS" | while IFS='|' read -r job rest; do
		case " $OVERHEAD_JOBS " in *" $job "*) echo "$job|$rest" ;; esac
	done)
fi

# rotate K WORD...: the words, starting from the K-th (from 0), wrapping.
rotate() {
	local k=$1 i
	shift
	local -a w=("$@")
	for ((i = 0; i < ${#w[@]}; i++)); do
		echo "${w[(i + k) % ${#w[@]}]}"
	done
}

total=$(( $(echo "$JOBS" | wc -l) * $(echo "$TARGETS" | wc -w) * ROUNDS ))
n=0
while IFS='|' read -r job _ _ _ args; do
	for r in $(seq "$ROUNDS"); do
		# shellcheck disable=SC2086 # the targets are words
		for t in $(rotate $((r - 1)) $TARGETS); do
			n=$((n + 1))
			printf '[%d/%d] %s %s round %d\n' $n $total "$job" "$t" "$r"
			evict "$t"
			out=$RESULTS/$job-$t-r$r
			[ "$t" = backing ] || ticks=$(cpu_ticks "$t")
			case $args in
			@*)	run_timed "$out" "${args#@}" "$(dir_of "$t")" \
					2>"$out.err" || true ;;
			*)	# shellcheck disable=SC2086
				fio --name="$job" --directory="$(dir_of "$t")" \
					--runtime="$RUNTIME" --output-format=json \
					--output="$out.json" $args \
					>/dev/null 2>"$out.err" || true ;;
			esac
			[ -s "$out.err" ] || rm -f "$out.err"
			if [ "$t" != backing ]; then
				after=$(cpu_ticks "$t")
				awk -v t=$((after - ticks)) -v hz="$HZ" \
					'BEGIN { print t / hz }' >"$out.cpu"
			fi
		done
	done
done <<EOF
$JOBS
EOF

# --- the tables ----------------------------------------------------------

summarize "$RESULTS" "$ROUNDS" "$TARGETS" "$JOBS" <<'PY' | tee "$RESULTS/summary.txt"
import json, os, statistics, sys

results, rounds, targets, jobs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4]
jobs = [line.split("|", 4)[:4] for line in jobs.splitlines()]
scale = {"MiB/s": ("bw", 1024.0), "kIOPS": ("iops", 1000.0), "file/s": ("iops", 1.0)}

def measure(job, direction, unit, target, r):
    """Throughput in unit and the daemon's CPU microseconds per I/O (None
    without a daemon), or None when fio failed."""
    path = os.path.join(results, "%s-%s-r%d" % (job, target, r))
    cpu = None
    if os.path.exists(path + ".rate"):
        try:
            with open(path + ".rate") as f:
                rate, count = map(float, f.read().split())
        except (OSError, ValueError):
            return None
        if os.path.exists(path + ".cpu") and count:
            with open(path + ".cpu") as f:
                cpu = float(f.read()) * 1e6 / count
        return rate, cpu
    j = fio_job("%s-%s-r%d" % (job, target, r))
    if j is None:
        return None
    d = j[direction]
    key, div = scale[unit]
    if os.path.exists(path + ".cpu") and d["total_ios"]:
        with open(path + ".cpu") as f:
            cpu = float(f.read()) * 1e6 / d["total_ios"]
    return d[key] / div, cpu

runs = {(job, t): [measure(job, direction, unit, t, r) for r in range(1, rounds + 1)]
        for job, direction, unit, _ in jobs for t in targets}

def median(job, t, i):
    """Median over rounds of throughput (i = 0) or CPU per I/O (i = 1)."""
    vals = runs[job, t]
    if None in vals or None in (v[i] for v in vals):
        return None
    return statistics.median(v[i] for v in vals)

def row(job, unit, cells, served=""):
    print("%-18s %-6s %s  %s" % (job, unit,
                                 " ".join("%9s" % c for c in cells), served))

row("job", "unit", targets, "served by")
for job, _, unit, served in jobs:
    base = median(job, targets[0], 0)
    cells = ["%.1f" % base if base is not None else "err"]
    for t in targets[1:]:
        m = median(job, t, 0)
        if m is None:
            cells.append("err")
        elif not base:
            cells.append("-")
        else:
            cells.append("%.2f" % (m / base))
    row(job, unit, cells, served)
print()
print("%s: median of %d rounds, in the unit shown; other columns: ratio"
      " to %s (higher is faster)" % (targets[0], rounds, targets[0]))
print()
print("daemon CPU time (user + system, all threads) per I/O")
row("job", "unit", targets)
for job, _, _, _ in jobs:
    cells = ["-"]
    for t in targets[1:]:
        m = median(job, t, 1)
        cells.append("%.1f" % m if m is not None else "err")
    row(job, "us/IO", cells)
print()
print("microseconds, median of %d rounds; an I/O is one fio request (one"
      " file for create-4k and untar, one transaction for sqlite-tx)" % rounds)
print()
print("served by: what could serve the row on every target.  device: O_DIRECT")
print("reaches the disk (fuse-iosched: backing_io=auto); cold: evicted first;")
print("page caches: the backing page cache and, through FUSE, the mount's.")

# Targets that ran in the same round are compared round by round: the
# ratio of each round's pair sheds the drift between rounds that the
# medians above keep.
pairs = [(a, b) for a, b in (("noop", "ptll"), ("noop", "ptllx"),
                             ("noop", "pthp"), ("deadline", "noop"),
                             ("noop", "base"), ("base", "ptll"),
                             ("uring", "noop"), ("ring", "ptll"),
                             ("ring", "ptllx"), ("ring", "pthp"),
                             ("ring", "noop"))
         if a in targets and b in targets]
print()
print("each against another, round by round")
print("%-18s %s" % ("job", " ".join("%-16s" % ("%s/%s" % p) for p in pairs)))
for job, _, _, _ in jobs:
    cells = []
    for a, b in pairs:
        rs = sorted(x[0] / y[0] for x, y in zip(runs[job, a], runs[job, b])
                    if x is not None and y is not None and y[0])
        cells.append("%.2f (%.2f-%.2f)" % (statistics.median(rs), rs[0],
                                           rs[-1]) if rs else "err")
    print("%-18s %s" % (job, " ".join("%-16s" % c for c in cells)))
print()
print("median (min-max) over the rounds of the ratio of the two targets'"
      " runs in each round")
PY
