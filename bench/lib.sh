# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash disable=SC2034
# Shared by the benchmarks in bench/.  A script sets BENCH (its name, for
# messages and its work directory) and RUNTIME (its default seconds per
# run), and SIZE (its default) if it takes -s SIZE, then sources this file
# with its arguments:
#
#	. "$(dirname "$0")/lib.sh" "$@"
#
# That parses the options every benchmark has (-t SECONDS, -r ROUNDS,
# -d DIR; -s SIZE for a script that set SIZE) and the one argument,
# RESULTS_DIR, into RUNTIME, ROUNDS, WORKDIR, SIZE and RESULTS, or prints
# the usage.  It finds the daemon and the modules (environment:
# FUSE_IOSCHED, default ../daemon/fuse-iosched next to the script, else
# fuse-iosched on PATH; MODULE_DIR, default ../schedulers/.libs next to
# the script when it exists), checks for root and the tools, makes a work
# directory $W with a backing directory $B, and unmounts and removes
# everything at exit, whatever happens.

die() { echo "$BENCH: $*" >&2; exit 1; }

if [ -n "${SIZE:-}" ]; then
	SYNOPSIS="[-t SECONDS] [-r ROUNDS] [-s SIZE] [-d DIR]"
	OPTSTRING=t:r:s:d:h
else
	SYNOPSIS="[-t SECONDS] [-r ROUNDS] [-d DIR]"
	OPTSTRING=t:r:d:h
fi
usage() { echo "usage: $0 $SYNOPSIS RESULTS_DIR" >&2; exit 2; }
ROUNDS=3 WORKDIR=/var/tmp
while getopts "$OPTSTRING" opt; do
	case $opt in
	t) RUNTIME=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	s) SIZE=$OPTARG ;;
	d) WORKDIR=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage

HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${FUSE_IOSCHED:-}" ]; then
	if [ -x "$HERE/../daemon/fuse-iosched" ]; then
		FUSE_IOSCHED=$HERE/../daemon/fuse-iosched
	else
		FUSE_IOSCHED=$(command -v fuse-iosched) ||
			die "no fuse-iosched: build it or set FUSE_IOSCHED"
	fi
fi
if [ -z "${MODULE_DIR:-}" ] && [ -d "$HERE/../schedulers/.libs" ]; then
	MODULE_DIR=$HERE/../schedulers/.libs
fi

[ "$(id -u)" -eq 0 ] || die "run me as root"
[ -c /dev/fuse ] || die "no /dev/fuse"
for c in fio python3 fusermount3 mountpoint; do
	command -v $c >/dev/null || die "needs $c"
done
[ "$ROUNDS" -ge 1 ] 2>/dev/null || die "-r: a number of rounds"
# Fewer than 3 rounds give no median worth the name: for trying a script
# out, never for a figure.
[ "$ROUNDS" -ge 3 ] ||
	echo "$BENCH: $ROUNDS round(s): to try the script out, not for figures" >&2
[ "$RUNTIME" -ge 1 ] 2>/dev/null || die "-t: a number of seconds"

mkdir -p "$1"
RESULTS=$(cd "$1" && pwd)
W=$(mktemp -d "$WORKDIR/fuse-iosched-$BENCH.XXXXXX")
B=$W/backing
mkdir -p "$B"
# An empty configuration file: the installed one must not change the runs.
: >"$W/empty.conf"
MOUNTS=
BGPIDS=
# The pid of each daemon started in the foreground, by mount name.
declare -A DAEMON

bench_cleanup() {
	set +e
	for p in $BGPIDS; do
		kill "$p" 2>/dev/null
	done
	for m in $MOUNTS; do
		fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	# The daemons exit on unmount; give them a moment, then the work dir goes.
	sleep 1
	rm -rf "$W"
}
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

# await_mount NAME: wait until the daemon just started has mounted $W/NAME,
# which is unmounted at exit from now on.
await_mount() {
	MOUNTS="$W/$1 $MOUNTS"
	for _ in $(seq 100); do
		mountpoint -q "$W/$1" && return 0
		sleep 0.1
	done
	die "$1 did not mount"
}

# mount_fs NAME [OPTIONS [LOG]]: mount $B on $W/NAME with fuse-iosched and
# -o OPTIONS (comma-separated), and wait until the mount is there.  With
# LOG, the daemon stays in the foreground (in the background of this
# shell), its pid goes into DAEMON[NAME] and its messages to LOG; it still
# ends on unmount.
mount_fs() {
	d=$W/$1
	mkdir -p "$d"
	set -- "$1" "config=$W/empty.conf${MODULE_DIR:+,module_dir=$MODULE_DIR}${2:+,$2}" "${3:-}"
	if [ -n "$3" ]; then
		"$FUSE_IOSCHED" -f -o "$2" "$B" "$d" >>"$3" 2>&1 &
		DAEMON[$1]=$!
	else
		"$FUSE_IOSCHED" -o "$2" "$B" "$d" >>"$W/daemon-$1.log" 2>&1 ||
			die "cannot mount $1: $(cat "$W/daemon-$1.log")"
	fi
	await_mount "$1"
}

# switch_to MOUNT SCHEDULER: make SCHEDULER active on the mount, and check.
switch_to() {
	echo "$2" >"$W/$1/.control/scheduler" || die "cannot switch $1 to $2"
	grep -q "\[$2\]" "$W/$1/.control/scheduler" ||
		die "$2 is not active on $1 (MODULE_DIR?)"
}

# loop_setup SIZE: an ext4 image of SIZE on a loop device with direct I/O
# (LOOP; QUEUE, its queue's directory), mounted on B; all gone at exit (B
# unmounted after the mounts made on it later: MOUNTS goes newest first).
loop_setup() {
	LOOP=
	trap loop_cleanup EXIT
	truncate -s "$1" "$W/ext4.img"
	mkfs.ext4 -q -F "$W/ext4.img"
	LOOP=$(losetup -f --show --direct-io=on "$W/ext4.img") ||
		die "no loop device"
	QUEUE=/sys/block/$(basename "$LOOP")/queue
	mount "$LOOP" "$B"
	MOUNTS="$B $MOUNTS"
}

loop_cleanup() {
	bench_cleanup
	# Only our device; the lazy unmount above may still hold it, in
	# which case -d marks it to go when it is free.
	[ -z "$LOOP" ] || losetup -d "$LOOP" 2>/dev/null || true
}

# loop_config CONFIG, for the benchmarks on a loop device (QUEUE its
# queue's directory) with the ext4 mount B and our mounts W/NAME over it:
# kernel:SCHED makes SCHED the device's scheduler and M B; NAME:SCHED
# (fuse:SCHED, say) makes it none and SCHED that of our mount W/NAME, and
# M that mount.
loop_config() {
	case $1 in
	kernel:*)
		echo "${1#kernel:}" >"$QUEUE/scheduler"
		M=$B ;;
	*:*)
		echo none >"$QUEUE/scheduler"
		switch_to "${1%%:*}" "${1#*:}"
		M=$W/${1%%:*} ;;
	esac
}

# kconfig NAME: y, m, "not set" or "unknown" for CONFIG_NAME of this kernel.
kconfig() {
	local v
	v=$({ zcat /proc/config.gz 2>/dev/null ||
	      cat "/boot/config-$(uname -r)" 2>/dev/null; } |
	    sed -n "s/^CONFIG_$1=//p; s/^# CONFIG_$1 is not set/not set/p")
	echo "${v:-unknown}"
}

# kernel_configs SCHEDS: KCONFIGS, "kernel:S" for each of SCHEDS the loop
# device (QUEUE) offers, and KNOTES, a line for each it does not.
kernel_configs() {
	local have k

	have=$(sed 's/[][]//g' "$QUEUE/scheduler")
	KCONFIGS='' KNOTES=''
	for k in $1; do
		case " $have " in
		*" $k "*) KCONFIGS="$KCONFIGS kernel:$k"; continue ;;
		esac
		KNOTES="${KNOTES}kernel has no $k (loop: $have): kernel:$k skipped"
		[ "$k" != bfq ] || KNOTES="$KNOTES (CONFIG_IOSCHED_BFQ\
 $(kconfig IOSCHED_BFQ) on $(uname -r); the kernel's bfq:\
 ../shared/KERNEL-REFERENCE.md, bench/kernel-vm.sh)"
		KNOTES="$KNOTES
"
	done
}

# each_run FUNC: FUNC CONFIG ROUND for each of CONFIGS in each of ROUNDS
# rounds, a line of progress before each.
each_run() {
	local total n=0 r c

	# shellcheck disable=SC2153 # CONFIGS is the caller's
	total=$(( $(echo "$CONFIGS" | wc -w) * ROUNDS ))
	for r in $(seq "$ROUNDS"); do
		for c in $CONFIGS; do
			n=$((n + 1))
			printf '[%d/%d] %s, round %d\n' $n $total "$c" "$r"
			"$1" "$c" "$r"
		done
	done
}

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null ||
		echo "warning: cannot drop caches: read results include cache hits" >&2
}

# layout FILE SIZE: write FILE sequentially in the backing directory, so
# that it has real extents (FIEMAP) close together.
layout() {
	fio --name=layout --filename="$1" --size="$2" --rw=write --bs=1m \
		--ioengine=psync --end_fsync=1 --output=/dev/null ||
		die "cannot lay out $1"
}

# sqlite_script FILE N: SQL for sqlite3 that commits N small transactions
# (one INSERT each), each to the device (synchronous=FULL).
sqlite_script() {
	{
		echo "PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL;"
		echo "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);"
		for _ in $(seq "$2"); do
			echo "BEGIN; INSERT INTO t (v) VALUES (hex(randomblob(100))); COMMIT;"
		done
	} >"$1"
}

# spread DIR N SIZE GAP: N files DIR/f1..fN of SIZE random bytes, each
# followed on the disk by a preallocated spacer of GAP (in DIR.gap), so
# that reading them one after the other costs a short seek each, as the
# files of a source tree or an application do, not one sequential read.
spread() {
	mkdir -p "$1" "$1.gap"
	for i in $(seq "$2"); do
		head -c "$3" /dev/urandom >"$1/f$i"
		sync "$1/f$i"
		fallocate -l "$4" "$1.gap/g$i"
	done
	sync
}

# The machine, for the top of every summary.
describe_machine() {
	dev=$(df -P "$B" | awk 'NR == 2 { print $1 }')
	fstype=$(df --output=fstype "$B" | tail -n 1)
	echo "date:      $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "cpus:      $(nproc) x $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "memory:    $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "kernel:    $(uname -srm)"
	echo "backing:   $B on $dev ($fstype)"
	if command -v lsblk >/dev/null && [ -b "$dev" ]; then
		echo "disk:      $(lsblk -dno NAME,MODEL,SIZE,ROTA "$dev" 2>/dev/null |
			awk '{ $NF = $NF == 1 ? "rotational" : "non-rotational"; print }')"
	fi
	echo "load:      $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at start"
	echo "software:  $("$FUSE_IOSCHED" --version | head -n 1), fio $(fio --version)"
	echo "runs:      $RUNTIME s each, $ROUNDS rounds alternating, median reported"
}

# evict FILE...: drop the page cache of these files only (POSIX_FADV_DONTNEED),
# not the whole machine's: other people's benchmarks share it.  Dirty pages
# are written first, since DONTNEED leaves them.  On a fuse-iosched mount
# this drops the kernel's copy (the daemon keeps the cache on open), so
# the next read reaches the scheduler.
evict() {
	python3 - "$@" <<'PY'
import os, sys
for path in sys.argv[1:]:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
PY
}

# resident FILE...: the percentage of these files' pages in the page cache,
# to show which figures a cache could have served.
resident() {
	fincore -nbo RES,SIZE "$@" 2>/dev/null |
		awk '{ r += $1; s += $2 } END { printf "%.0f\n", s ? 100 * r / s : 0 }'
}

# timed TAG COMMAND...: run COMMAND (its output discarded, its errors in
# RESULTS/TAG.err if any) for at most RUNTIME seconds; RESULTS/TAG.time
# gets the microseconds taken, "cap" if it was stopped at RUNTIME, "err"
# if it failed.
timed() {
	local tag=$1 t0 t1 st=0
	shift
	t0=$(date +%s%N)
	timeout "$RUNTIME" "$@" >/dev/null 2>"$RESULTS/$tag.err" || st=$?
	t1=$(date +%s%N)
	case $st in
	0) echo "$(( (t1 - t0) / 1000 ))" ;;
	124) echo cap ;;
	*) echo err ;;
	esac >"$RESULTS/$tag.time"
	[ -s "$RESULTS/$tag.err" ] || rm -f "$RESULTS/$tag.err"
}

# timed_cat TAG FILE...: evict FILEs, then read them all with one cat, as
# a process that reads one file after another; RESULTS/TAG.time gets the
# microseconds taken (see timed), RESULTS/TAG.cache the share of the files
# that was still cached at the start.
timed_cat() { timed_read "$1" one "${@:2}"; }

# timed_cats TAG FILE...: as timed_cat, but each FILE is read by a cat of
# its own, one after the other, as a shell script or a build reads: each
# process reads one file and exits.
timed_cats() { timed_read "$1" each "${@:2}"; }

# timed_read TAG one|each FILE...: timed_cat's and timed_cats' work.
timed_read() {
	local tag=$1
	local -a cmd=(cat)
	# shellcheck disable=SC2016 # expanded by sh
	[ "$2" = one ] || cmd=(sh -c 'for f; do cat "$f"; done' sh)
	shift 2
	evict "$@"
	resident "$@" >"$RESULTS/$tag.cache"
	timed "$tag" "${cmd[@]}" "$@"
}

# reader FILE NAME SECONDS [BWLOG]: one program reading FILE sequentially,
# $BS at a time with psync and O_DIRECT (every read reaches the scheduler),
# for SECONDS; fio's JSON in RESULTS/NAME.json, with BWLOG a bandwidth
# log in 500 ms buckets too.  BS and SIZE are the script's, exported.  Run
# it under ionice with
#	ionice -c3 bash -c "$READER; reader ..."
# (READER, set below, brings the function along).
reader() {
	fio --name="$2" --filename="$1" --rw=read --bs="${BS:?}" \
		--ioengine=psync --direct=1 --size="${SIZE:?}" --time_based \
		--runtime="$3" ${4:+--write_bw_log="$RESULTS/$2" --log_avg_msec=500} \
		--output-format=json --output="$RESULTS/$2.json" \
		>/dev/null 2>"$RESULTS/$2.err" || true
	[ -s "$RESULTS/$2.err" ] || rm -f "$RESULTS/$2.err"
}
READER="$(declare -f reader); RESULTS=$(printf %q "$RESULTS")"

# save_counters MOUNT TAG: the active scheduler's counters on $W/MOUNT, as
# "NAME VALUE" lines in RESULTS/TAG.counters (see counters_delta below).
save_counters() {
	sed -n 's/^scheduler [^ ]* //p' "$W/$1/.control/stats" \
		>"$RESULTS/$2.counters"
}

# summarize ARG... <<'PY': run the Python summary on stdin, with ARGs in
# sys.argv[1:], after the helpers the result tables share:
#   fio_jobs(name)	NAME.json's (ext=) fio jobs, or None if unreadable
#   fio_job(name)	its first job, or None if it is missing or failed
#   fio_bw(name)		MiB/s read (ddir=) by NAME.json's first job, or None
#   fio_bws(name)	the same of each of its jobs, or None if one failed
#   counters_delta(tag)	{counter: TAG-after minus TAG-before} (save_counters)
#   median(xs)		None when xs is empty
#   table(header, rows)	columns aligned; floats with 2 decimals, None "err",
#			short rows padded
summarize() {
	RESULTS=$RESULTS python3 -c "$(cat <<'PY'
import glob, json, os, statistics, sys

RESULTS = os.environ["RESULTS"]

def fio_jobs(name, ext=".json"):
    try:
        text = open(os.path.join(RESULTS, name + ext)).read()
        # fio may print warnings before the JSON.
        return json.loads(text[text.index("{"):])["jobs"]
    except (OSError, ValueError, KeyError):
        return None

def fio_job(name):
    jobs = fio_jobs(name)
    if not jobs or jobs[0].get("error"):
        return None
    return jobs[0]

def fio_bw(name, ddir="read"):
    j = fio_job(name)
    return None if j is None else j[ddir]["bw"] / 1024.0

def fio_bws(name, ddir="read"):
    jobs = fio_jobs(name)
    if jobs is None or any(j.get("error") for j in jobs):
        return None
    return [j[ddir]["bw"] / 1024.0 for j in jobs]

def read_counters(tag):
    try:
        lines = open(os.path.join(RESULTS, tag + ".counters")).read().split("\n")
    except OSError:
        return {}
    return {l.split()[0]: int(l.split()[1]) for l in lines if l.strip()}

def counters_delta(tag):
    a, b = read_counters(tag + "-before"), read_counters(tag + "-after")
    return {k: v - a.get(k, 0) for k, v in b.items()}

def read_result(tag, ext):
    try:
        return open(os.path.join(RESULTS, "%s.%s" % (tag, ext))).read().strip()
    except OSError:
        return None

# A timed run's seconds (timed's TAG.time), inf if it hit the cap, None
# if it failed or did not run.
def timed_secs(tag):
    t = read_result(tag, "time")
    if t is None or t == "err":
        return None
    return float("inf") if t == "cap" else int(t) / 1e6

# The number after KEY on the daemon's stats line that starts with
# SECTION, in TAG.stats-after minus TAG.stats-before; None if missing.
def stats_delta(tag, section, key):
    def get(ext):
        text = read_result(tag, ext)
        for line in (text or "").split("\n"):
            f = line.split()
            if f[:1] == [section] and key in f[1:-1]:
                return int(f[f.index(key, 1) + 1])
        return None
    a, b = get("stats-before"), get("stats-after")
    return None if a is None or b is None else b - a

def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def table(header, rows):
    def cell(x):
        if x is None:
            return "err"
        return "%.2f" % x if isinstance(x, float) else str(x)
    rows = [[cell(x) for x in r] + [""] * (len(header) - len(r))
            for r in rows]
    widths = [max(len(r[i]) for r in [header] + rows)
              for i in range(len(header))]
    for r in [header] + rows:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(r, widths))).rstrip())
PY
)
$(cat)" "$@"
}

# readers_bench THINKS UNIT_US SCHEDS: Iyer and Druschel's deceptive-
# idleness experiment, as bench/idleness.sh and bench/thinktime.sh run it:
# the hdd-model mount $W/hdd with the files readers_fio reads, the
# machine (RESULTS/machine.txt), then readers_fio at each think time of
# THINKS (in units of UNIT_US microseconds) under each of SCHEDS,
# switching schedulers on that one mount, for ROUNDS rounds; the runs are
# tagged thinkT-SCHED-rR.
readers_bench() {
	local thinks=$1 unit=$2 scheds=$3 nproc=3 bs=8k size=256m
	local i r t s n=0 total ms
	mount_fs hdd "disk_model=hdd"
	for i in $(seq "$nproc"); do
		layout "$B/f$i.dat" "$size"
	done
	ms=$(awk -v u="$unit" '{ for (i = 1; i <= NF; i++)
		printf "%s%g", (i > 1 ? ", " : ""), $i * u / 1000 }' <<<"$thinks")
	{
		describe_machine
		echo "workload:  $nproc readers, own file each, sequential $bs psync O_DIRECT reads, think time $ms ms"
		echo "hdd model: defaults (seek_ms 8, rpm 7200, mb_per_s 150); antic_expire default (6 ms)"
	} | tee "$RESULTS/machine.txt"
	echo
	total=$(( $(wc -w <<<"$thinks") * $(wc -w <<<"$scheds") * ROUNDS ))
	for r in $(seq "$ROUNDS"); do
		for t in $thinks; do
			for s in $scheds; do
				n=$((n + 1))
				printf '[%d/%d] think %s x %d us, %s, round %d\n' \
					$n "$total" "$t" "$unit" "$s" "$r"
				switch_to hdd "$s"
				readers_fio "think$t-$s-r$r" "$nproc" "$bs" "$size" \
					$((t * unit))
			done
		done
	done
}

# readers_fio TAG NPROC BS SIZE THINK_US: NPROC fio readers on the mount
# $W/hdd, each reading its own file f1.dat... sequentially with BS psync
# O_DIRECT reads and THINK_US microseconds of think time between them, for
# RUNTIME seconds: Iyer and Druschel's deceptive-idleness workload.
# RESULTS gets TAG.fio, TAG.json, and the daemon's stats and the
# scheduler's counters around the run (TAG.stats-before, TAG.stats-after,
# TAG-before.counters, TAG-after.counters: see save_counters).
readers_fio() {
	local tag=$1 m=$W/hdd i
	{
		printf '[global]\ntime_based\nruntime=%s\n' "$RUNTIME"
		printf 'direct=1\nioengine=psync\nrw=read\nbs=%s\n' "$3"
		printf 'size=%s\nthinktime=%d\n' "$4" "$5"
		for i in $(seq "$2"); do
			printf '\n[reader%d]\nfilename=%s/f%d.dat\n' "$i" "$m" "$i"
		done
	} >"$RESULTS/$tag.fio"
	cat "$m/.control/stats" >"$RESULTS/$tag.stats-before"
	save_counters hdd "$tag-before"
	fio --output-format=json --output="$RESULTS/$tag.json" \
		"$RESULTS/$tag.fio" >/dev/null 2>"$RESULTS/$tag.err" || true
	[ -s "$RESULTS/$tag.err" ] || rm -f "$RESULTS/$tag.err"
	cat "$m/.control/stats" >"$RESULTS/$tag.stats-after"
	save_counters hdd "$tag-after"
}
