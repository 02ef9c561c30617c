#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/cpu.sh: what the daemon spends per request, measured so that the
# machine's load does not move it.
#
#	bench/cpu.sh [-r ROUNDS] [-s SIZE] [-d DIR] RESULTS_DIR
#
# For each job, a fresh noop mount serves one fixed piece of work (no
# time limit: the same requests every time) and the daemon's cost is
# taken over its whole life, all threads, and divided by the I/Os the job
# did: with CPU_TOOL=perf (the default) its CPU time (perf stat's
# task-clock, user and system, in microseconds per I/O), which load can
# still move (caches, the other hyperthread), and its system calls,
# context switches and page faults, which it cannot; with
# CPU_TOOL=callgrind the instructions it executed in user space
# (valgrind's Ir, thousands per I/O), which is exact and the same from
# run to run whatever else runs.  A run that only mounts and unmounts is
# taken away from each, so that start-up does not count.  With
# CPU_BASE=DAEMON, that other build of fuse-iosched runs too, alternately
# (base, then this build, each job, each round); the last column is this
# build's cost over the base's.  With CPU_URING=yes (or -o options to
# add, e.g. threads=16), this build also runs with -o engine=uring, as
# the column uring; the last column is then the last build's cost over
# the first's.
#
# The jobs, as bench/overhead.sh's of the same names: seqwrite-buffered
# (SIZE, default 256m, in 1 MiB writes, then fsync), seqwrite-direct (the
# same with O_DIRECT, no fsync; run only when named), create-4k (1000
# files created, written with 4 KiB and closed, then removed), sqlite-tx
# (300 SQLite transactions of one INSERT, synchronous=FULL),
# randread-qd1 and randread-qd16 (5000 random 4 KiB O_DIRECT reads of a
# 64 MiB file laid out beforehand, psync, and libaio at depth 16; run
# only when named).  CPU_JOBS picks some of them.
#
# RESULTS_DIR gets each run's raw figure (JOB-BUILD-rROUND.cost) and the
# table (summary.txt), the median over the rounds (at least 3; callgrind's
# agree within a few per cent from round to round).  Needs perf or valgrind, fio and sqlite3.  Not part of
# make check.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=cpu RUNTIME=1 SIZE=256m
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
TOOL=${CPU_TOOL:-perf}
case $TOOL in
perf)		command -v perf >/dev/null || die "needs perf" ;;
callgrind)	command -v valgrind >/dev/null || die "needs valgrind" ;;
*)		die "CPU_TOOL: perf or callgrind" ;;
esac
command -v sqlite3 >/dev/null || die "needs sqlite3"

BUILDS="${CPU_BASE:+base }this${CPU_URING:+ uring}"
declare -A BIN=([this]=$FUSE_IOSCHED [base]=${CPU_BASE:-} [uring]=$FUSE_IOSCHED)
declare -A OPTS=([this]=scheduler=noop [base]=scheduler=noop
	[uring]=scheduler=noop,engine=uring)
[ "${CPU_URING:-yes}" = yes ] || OPTS[uring]+=,$CPU_URING
NFILES=1000
NTX=300
sqlite_script "$W/sqlite.sql" $NTX

# Each job works in DIR and prints the number of I/Os it did.
job_idle() { echo 1; }
# seqwrite DIR FIO_OPTION: SIZE in 1 MiB writes.
seqwrite() {
	fio --name=w --directory="$1" --filename=bench.dat --size="$SIZE" \
		--rw=write --bs=1m --ioengine=psync "$2" \
		--output=/dev/null || die "fio failed"
	rm -f "$1/bench.dat"
	echo $(( $(numfmt --from=iec "${SIZE^^}") / 1048576 ))
}
job_seqwrite-buffered() { seqwrite "$1" --end_fsync=1; }
job_seqwrite-direct() { seqwrite "$1" --direct=1; }
job_create-4k() {
	fio --name=c --directory="$1" --nrfiles=$NFILES --filesize=4k \
		--openfiles=1 --file_service_type=sequential \
		--create_on_open=1 --unlink=1 --rw=write --bs=4k \
		--ioengine=psync --output=/dev/null || die "fio failed"
	echo $NFILES
}
# randread DIR FIO_OPTIONS: 5000 random 4 KiB direct reads of rr.dat.
randread() {
	d=$1
	shift
	fio --name=r --filename="$d/rr.dat" --size=64m --rw=randread --bs=4k \
		--direct=1 --number_ios=5000 --norandommap "$@" \
		--output=/dev/null || die "fio failed"
	echo 5000
}
job_randread-qd1() { randread "$1" --ioengine=psync; }
job_randread-qd16() { randread "$1" --ioengine=libaio --iodepth=16; }
job_sqlite-tx() {
	sqlite3 "$1/bench.db" <"$W/sqlite.sql" >/dev/null || die "sqlite3 failed"
	rm -f "$1/bench.db"
	echo $NTX
}

# run JOB BUILD OUT: a fresh mount of BUILD under the tool does JOB; OUT
# gets the daemon's cost over its life and the job's I/Os.
run() {
	wrap=$W/wrap-$2
	case $TOOL in
	perf)	printf '#!/bin/sh\nexec perf stat -x, -e task-clock,raw_syscalls:sys_enter,context-switches,page-faults -o %s -- %s "$@"\n' \
			"$3.raw" "${BIN[$2]}" ;;
	callgrind) printf '#!/bin/sh\nexec valgrind -q --tool=callgrind --callgrind-out-file=%s -- %s "$@"\n' \
			"$3.raw" "${BIN[$2]}" ;;
	esac >"$wrap"
	chmod +x "$wrap"
	FUSE_IOSCHED=$wrap mount_fs "$2" "${OPTS[$2]}" "$RESULTS/daemon-$2.log"
	ios=$("job_$1" "$W/$2")
	fusermount3 -u "$W/$2"
	MOUNTS=${MOUNTS/$W\/$2 /}
	wait "${DAEMON[$2]}" || die "$2's daemon exited with status $?"
	case $TOOL in
	# task-clock in ms, system calls, context switches.
	perf)	awk -F, -v ios="$ios" '{ v[$3] = $1 }
			END { print v["task-clock"] * 1000, ios,
				v["raw_syscalls:sys_enter"], v["context-switches"],
				v["page-faults"] }' \
			"$3.raw" >"$3.cost" ;;
	# callgrind's totals in instructions.
	callgrind) awk -v ios="$ios" '$1 == "totals:" { print $2 / 1000, ios }' \
			"$3.raw" >"$3.cost" ;;
	esac
}

JOBS="seqwrite-buffered create-4k sqlite-tx"
[ -z "${CPU_JOBS:-}" ] || JOBS=$CPU_JOBS
case " $JOBS " in
*" randread-"*) layout "$B/rr.dat" 64m ;;
esac
{
	# Fixed jobs, not timed runs.
	describe_machine | grep -v '^runs:'
	echo "runs:      fixed jobs, $ROUNDS rounds alternating, median reported"
	echo "tool:      $TOOL"
	for b in $BUILDS; do
		echo "$b:$(printf '%*s' $((10 - ${#b})) '')$("${BIN[$b]}" --version | head -n 1) (${BIN[$b]}, -o ${OPTS[$b]})"
	done
} | tee "$RESULTS/machine.txt"
for r in $(seq "$ROUNDS"); do
	for job in idle $JOBS; do
		for b in $BUILDS; do
			echo "$job $b round $r"
			run "$job" "$b" "$RESULTS/$job-$b-r$r"
		done
	done
done

python3 - "$RESULTS" "$ROUNDS" "$TOOL" "$BUILDS" "$JOBS" <<'PY' | tee "$RESULTS/summary.txt"
import os, statistics, sys

results, rounds, tool, builds, jobs = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(), sys.argv[5].split()

def cost(job, b, r, i):
    """Figure i of a run: the cost (0), the I/Os (1), with perf the
    system calls (2), the context switches (3) and the page faults (4)."""
    with open(os.path.join(results, "%s-%s-r%d.cost" % (job, b, r))) as f:
        return float(f.read().split()[i])

def table(i, unit):
    print("%-18s %-9s %s" % ("job", "unit", " ".join("%9s" % b for b in builds)
                             + ("  %9s" % (builds[-1] + "/" + builds[0])
                                if len(builds) > 1 else "")))
    for job in jobs:
        cells = []
        for b in builds:
            cells.append(statistics.median(
                (cost(job, b, r, i) - cost("idle", b, r, i)) / cost(job, b, r, 1)
                for r in range(1, rounds + 1)))
        line = "%-18s %-9s %s" % (job, unit, " ".join("%9.1f" % c for c in cells))
        if len(cells) > 1:
            line += "  %9.2f" % (cells[-1] / cells[0] if cells[0] else 0)
        print(line)
    print()

if tool == "perf":
    table(0, "us/IO")
    table(2, "calls/IO")
    table(3, "cswch/IO")
    table(4, "faults/IO")
    print("the daemon's CPU time (perf task-clock), system calls, context"
          " switches and page faults over its life, all threads,")
else:
    table(0, "kIr/IO")
    print("user-space instructions (callgrind Ir) over the daemon's life,"
          " all threads,")
print("less a mount that did nothing, per I/O; median of %d rounds" % rounds)
PY
