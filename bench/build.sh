#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
# bench/build.sh: a build and a git checkout from a cold cache, on the
# idle disk and against a streaming write (issue 27): Morton's test and
# the short-process stream again, on workloads shaped otherwise.
#
#	[SCHEDS=...] [MODES=...] [WORKLOADS=...] [BUILD=...] [GIT_FILES=N]
#	bench/build.sh [-t SECONDS] [-r ROUNDS] [-d DIR] RESULTS_DIR
#
# morton.sh and shortproc.sh read small files with cat, the shape the
# schedulers were tuned on.  Here the same claims meet two real workloads:
#
#   build     make -j2 (JOBS) of BUILD, targets of a fuse-iosched tree
#             configured once (default: two scheduler modules, about 90
#             short processes: make, sh, libtool's seds, gcc, cc1, as, ld;
#             BUILD=all for the whole tree, about 700), each time from
#             the tree as configured (what a build added removed);
#   checkout  git checkout of a distant commit and back in a clone of the
#             same repository: one process reading its pack and writing,
#             unlinking and rewriting files (the older commit is the
#             nearest first-parent ancestor of HEAD from which at least
#             GIT_FILES files differ, default 30).
#
# Each runs twice in a row under a scheduler: on the idle disk, and while
# dd streams a large file (bs=1M) onto the same filesystem, as in Morton's
# test (it starts 1 s before the workload and stops after it).  Before
# each run every file of the tree is evicted from the page cache
# (POSIX_FADV_DONTNEED, the tree only: the machine's other caches stay);
# the "cache" column shows the largest share of the tree still resident
# at the start of a run (should be 0 %).  The toolchain and the system
# headers stay cached, as on a machine that builds.
#
# Where: an ext4 image on a loop device with direct I/O (as kernel.sh),
# holding a copy of both trees per mode (MODES, default all three):
#
#   sync    fuse-iosched over it, -o disk_model=hdd (the model's defaults),
#           the loop device's scheduler none; the six schedulers (SCHEDS)
#   wbc     the same with -o writeback_cache
#   kernel  the ext4 mount itself, the loop device's scheduler set to each
#           of none, mq-deadline, kyber and bfq (KSCHEDS) that this kernel
#           has; no disk model: the image file's disk is the device, so
#           these rows show the kernel's schedulers on this machine's
#           disk, not on the hdd model.  A kernel without bfq
#           (CONFIG_IOSCHED_BFQ unset) says so and skips it.
#
# The loop device's writeback is limited as the kernel limits a FUSE
# mount's (strict_limit, max_ratio 1 % in /sys/class/bdi), for the run and
# put back after, so that dd's stream reaches the device from its first
# second on every row, not once gigabytes of dirty pages have piled up.
#
# Reading the table, one per workload, medians of ROUNDS rounds (the
# configurations alternate within each round; SECONDS, default 10, caps a
# run, shown as ">", and a ratio with a capped run is a bound, "<" or ">";
# "dd x dl" can show anticipatory 4 x faster than deadline only if the cap
# is more than 4 x anticipatory's time):
#   idle s      the workload on the idle disk under that scheduler
#   idle x dl   that time over deadline's on the same mount (mq-deadline's
#               for the kernel): what idling costs a stream of short
#               processes when nothing else runs (shortproc.sh's claim:
#               cfq and bfq at most 1.5 x)
#   dd s        the workload with dd streaming ("*": dd ended early, the
#               image full, in some round: enlarge IMAGE_SIZE)
#   dd x idle   dd s over idle s of the same scheduler (Morton's figure:
#               the claim is anticipatory at most 2 x)
#   dd x dl     dd s over deadline's dd s (the claim: anticipatory at
#               least 4 x faster, 0.25 or less)
# Below the tables: each workload's shape (requests and process exits the
# daemon saw per run), the counters of anticipatory, cfq and bfq summed
# over their runs with dd, and the load average over the runs.
#
# Under writeback_cache a process that closes a file it wrote waits for
# the file's writeback (fuse_flush, write_inode_now: /proc/PID/stack shows
# git in folio_wait_writeback), and that writeback is asynchronous and
# without the writer's pid, queued behind dd's (the kernel's FUSE
# background queue, then the scheduler's async requests, where it cannot
# be told from dd's): git checkout, which closes every file it writes,
# waits on dd's stream there whatever the scheduler; so may the build,
# whose as and ld close what they write.
#
# Duration: the defaults take about 10 minutes on a quiet 2-CPU machine
# (3 rounds of 2 workloads x 15 configurations x 2 runs, a third of it
# the runs with dd under writeback_cache, most of them at the cap; the
# summary says how long); -t 30 measures more of those rows (about 15
# minutes); BUILD=all, GIT_FILES=300, -t 120 and -r 5 scale it up (a
# whole build takes 25 s on the idle hdd model without writeback_cache,
# its runs with dd minutes).  SRC names
# the git repository to clone (default: the one holding this script);
# IMAGE_SIZE the image (default 12G, sparse: dd fills it at most).
# RESULTS_DIR gets each run's time, the daemon's stats and the
# scheduler's counters around it, machine.txt and summary.txt.
set -euo pipefail
# shellcheck disable=SC2034 # used by lib.sh
BENCH=build RUNTIME=10
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"
for c in git make losetup mkfs.ext4 fincore; do
	command -v $c >/dev/null || die "needs $c"
done

SCHEDS=${SCHEDS:-noop deadline anticipatory cfq bfq kyber}
KSCHEDS=${KSCHEDS:-none mq-deadline kyber bfq}
MODES=${MODES:-sync wbc kernel}
WORKLOADS=${WORKLOADS:-build checkout}
BUILD=${BUILD:-schedulers/deadline.la schedulers/kyber.la}
JOBS=${JOBS:-2}
GIT_FILES=${GIT_FILES:-30}
IMAGE_SIZE=${IMAGE_SIZE:-12G}
SRC=${SRC:-$(git -C "$HERE" rev-parse --show-toplevel 2>/dev/null)} ||
	die "not in a git tree: set SRC to a git repository of fuse-iosched"
DD_LEAD=1
for m in $MODES; do
	case $m in
	sync|wbc|kernel) ;;
	*) die "MODES: sync, wbc or kernel, not $m" ;;
	esac
done
for wl in $WORKLOADS; do
	case $wl in
	build|checkout) ;;
	*) die "WORKLOADS: build or checkout, not $wl" ;;
	esac
done

loop_setup "$IMAGE_SIZE"
# The loop device's writeback as a FUSE mount's (see above), put back at
# exit: the device outlives us.
BDI=/sys/block/$(basename "$LOOP")/bdi
BDI_SAVED="$(cat "$BDI/max_ratio") $(cat "$BDI/strict_limit")"
bdi_restore() {
	# shellcheck disable=SC2086 # two numbers
	set -- $BDI_SAVED
	echo "$2" >"$BDI/strict_limit" 2>/dev/null || true
	echo "$1" >"$BDI/max_ratio" 2>/dev/null || true
	loop_cleanup
}
trap bdi_restore EXIT
echo 1 >"$BDI/max_ratio" && echo 1 >"$BDI/strict_limit" ||
	echo "$BENCH: cannot limit $BDI: dd's stream starts late on kernel:" >&2

# The trees, made in the first mode's directory and copied to the others
# with their times (make must not run configure again): src, configured
# and built once (so that .deps holds the real dependencies), cleaned;
# git, a clone with a pack of its own (--no-local), at HEAD.
first=${MODES%% *}
T=$B/$first
mkdir -p "$T"
echo "cloning $SRC and configuring it in $T"
git clone -q --no-local "$SRC" "$T/src"
git clone -q --no-local "$SRC" "$T/git"
git -C "$T/git" config gc.auto 0
(
	cd "$T/src"
	[ -x configure ] || autoreconf -fi >/dev/null 2>&1 ||
		die "autoreconf failed in $T/src"
	./configure -q >/dev/null 2>&1 || die "configure failed: $T/src/config.log"
	# shellcheck disable=SC2086
	make -s -j"$JOBS" $BUILD >/dev/null 2>&1 || die "make $BUILD failed in $T/src"
	make -s clean >/dev/null 2>&1
	find . -type f | sort >"$W/src.files"
	find . -type d | sort >"$W/src.dirs"
)
GIT_TO=$(git -C "$T/git" rev-parse HEAD)
for GIT_FROM in $(git -C "$T/git" rev-list --first-parent HEAD); do
	GIT_NFILES=$(git -C "$T/git" diff --name-only "$GIT_FROM" "$GIT_TO" | wc -l)
	[ "$GIT_NFILES" -lt "$GIT_FILES" ] || break
done
git -C "$T/git" checkout -q "$GIT_FROM"
git -C "$T/git" checkout -q "$GIT_TO"
for mode in $MODES; do
	[ "$mode" = "$first" ] || cp -a "$T" "$B/$mode"
done

CONFIGS=''
for mode in $MODES; do
	case $mode in
	sync) mount_fs sync "disk_model=hdd" ;;
	wbc) mount_fs wbc "disk_model=hdd,writeback_cache" ;;
	kernel) continue ;;
	esac
	for s in $SCHEDS; do
		CONFIGS="$CONFIGS $mode:$s"
	done
done
case " $MODES " in
*" kernel "*)
	kernel_configs "$KSCHEDS"
	CONFIGS="$CONFIGS$KCONFIGS" ;;
esac
# What dd may write: the image's free space, less room for the trees.
WRITE_MB=$(( $(df -m --output=avail "$B" | tail -n 1) - 1024 ))
[ "$WRITE_MB" -ge 1024 ] || die "IMAGE_SIZE $IMAGE_SIZE leaves dd no room"

NOTES=${KNOTES:-}
git_short() { git -C "$T/git" rev-parse --short "$1"; }
{
	describe_machine
	echo "source:    $SRC at $(git -C "$T/src" rev-parse --short HEAD)"
	echo "build:     make -j$JOBS $BUILD, from the tree as configured"
	echo "checkout:  git checkout $(git_short "$GIT_FROM") and back to" \
	     "$(git_short "$GIT_TO") ($GIT_NFILES files differ)"
	echo "writer:    dd bs=1M onto the same filesystem, from $DD_LEAD s" \
	     "before the workload to its end (at most $WRITE_MB MiB)"
	echo "loop:      $LOOP, direct I/O $(cat "$QUEUE/../loop/dio" 2>/dev/null ||
	     echo '?'), ext4 image of $IMAGE_SIZE in $W; writeback limited" \
	     "(max_ratio $(cat "$BDI/max_ratio")," \
	     "strict_limit $(cat "$BDI/strict_limit"))"
	echo "hdd model: defaults (seek_ms 8, rpm 7200, mb_per_s 150);" \
	     "scheduler tunables at their defaults"
	printf '%s' "$NOTES"
	echo "configs:  $CONFIGS"
} | tee "$RESULTS/machine.txt"
echo

# settle MOUNT: wait (5 s at most) until nothing is queued or in flight on
# our mount W/MOUNT, or on the loop device for "kernel".
settle() {
	local i r w
	for i in $(seq 50); do
		if [ "$1" = kernel ]; then
			read -r r w <"$QUEUE/../inflight"
			[ $((r + w)) -eq 0 ] && return
		else
			awk '$1 == "read" || $1 == "write" {
				for (i = 2; i < NF; i++)
					if ($i == "in_flight" || $i == "queued")
						n += $(i + 1)
			} END { exit n != 0 }' "$W/$1/.control/stats" && return
		fi
		sleep 0.1
	done
}

# src_reset DIR: the build tree DIR as it was configured: what a build
# added goes (make clean costs a second on the mount, this a tenth).
src_reset() {
	(
		cd "$1"
		find . -type d | sort | comm -13 "$W/src.dirs" - |
			xargs -r rm -rf --
		find . -type f | sort | comm -13 "$W/src.files" - |
			xargs -r rm -f --
	)
}

# run WORKLOAD CONFIG TAG WRITER: WORKLOAD's tree under CONFIG made ready
# and evicted, then WORKLOAD timed, with dd streaming when WRITER is 1.
run() {
	local mnt=${2%%:*} tree files st w_pid=
	loop_config "$2"
	tree=$M/$mnt
	case $1 in
	build)
		src_reset "$tree/src"
		tree=$tree/src ;;
	checkout)
		# A run stopped at the cap may leave its lock.
		rm -f "$tree/git/.git/index.lock"
		git -C "$tree/git" checkout -qf "$GIT_TO"
		tree=$tree/git ;;
	esac
	mapfile -t files < <(find "$tree" -type f)
	evict "${files[@]}"
	resident "${files[@]}" >"$RESULTS/$3.cache"
	if [ "$mnt" != kernel ]; then
		cat "$M/.control/stats" >"$RESULTS/$3.stats-before"
		save_counters "$mnt" "$3-before"
	fi
	if [ "$4" = 1 ]; then
		dd if=/dev/zero of="$M/big" bs=1M count="$WRITE_MB" 2>/dev/null &
		w_pid=$!
		BGPIDS="$BGPIDS $w_pid"
		sleep $DD_LEAD
	fi
	cut -d' ' -f1 /proc/loadavg >"$RESULTS/$3.load"
	case $1 in
	build)
		# shellcheck disable=SC2086
		timed "$3" make -s -j"$JOBS" -C "$tree" $BUILD ;;
	checkout)
		# shellcheck disable=SC2016 # expanded by sh
		timed "$3" sh -c 'git -C "$1" checkout -q "$2" &&
			git -C "$1" checkout -q "$3"' sh "$tree" "$GIT_FROM" "$GIT_TO" ;;
	esac
	if [ "$mnt" != kernel ]; then
		cat "$M/.control/stats" >"$RESULTS/$3.stats-after"
		save_counters "$mnt" "$3-after"
	fi
	if [ -n "$w_pid" ]; then
		kill "$w_pid" 2>/dev/null || true
		# 143, SIGTERM: dd ran to the end of the workload.
		st=0
		wait "$w_pid" 2>/dev/null || st=$?
		[ $st -eq 143 ] || : >"$RESULTS/$3.short"
		# Unlinking drops what writeback has not sent yet.
		rm -f "$M/big"
		settle "$mnt"
	fi
}

total=$(( ROUNDS * $(wc -w <<<"$WORKLOADS") * $(wc -w <<<"$CONFIGS") * 2 ))
n=0
for r in $(seq "$ROUNDS"); do
	for wl in $WORKLOADS; do
		for c in $CONFIGS; do
			t=$wl-${c/:/-}
			n=$((n + 1))
			printf '[%d/%d] %s, %s, idle disk, round %d\n' $n $total "$wl" "$c" "$r"
			run "$wl" "$c" "$t-idle-r$r" 0
			n=$((n + 1))
			printf '[%d/%d] %s, %s with dd, round %d\n' $n $total "$wl" "$c" "$r"
			run "$wl" "$c" "$t-dd-r$r" 1
		done
	done
done
echo none >"$QUEUE/scheduler"

summarize "$ROUNDS" "$WORKLOADS" "$CONFIGS" "$RUNTIME" "make -j$JOBS $BUILD" \
	"$GIT_NFILES" "$NOTES" "$SECONDS" <<'PY' | tee "$RESULTS/summary.txt"
import os, sys

rounds, workloads = int(sys.argv[1]), sys.argv[2].split()
configs, cap, build = sys.argv[3].split(), float(sys.argv[4]), sys.argv[5]
nfiles, notes, took = sys.argv[6], sys.argv[7], int(sys.argv[8])
INF = float("inf")
what = {"build": "%s from a cold cache" % build,
        "checkout": "git checkout of a commit %s files away and back,"
                    " from a cold cache" % nfiles}

def tags(wl, c, kind):
    return ["%s-%s-%s-r%d" % (wl, c.replace(":", "-"), kind, r)
            for r in range(1, rounds + 1)]

def secs(x):
    return "err" if x is None else (">%.0f" % cap if x == INF else "%.2f" % x)

# a / b; a run at the cap took at least cap seconds, which bounds it.
def ratio(a, b):
    if a is None or b is None or b == 0 or a == b == INF:
        return "-"
    if a == INF:
        return ">%.2f" % (cap / b)
    if b == INF:
        return "<%.2f" % (a / cap)
    return "%.2f" % (a / b)

def base(c):
    mode = c.split(":")[0]
    return mode + (":mq-deadline" if mode == "kernel" else ":deadline")

loads = []
for wl in workloads:
    idle, dd = ({c: median([timed_secs(t) for t in tags(wl, c, kind)])
                 for c in configs} for kind in ("idle", "dd"))
    print("%s: %s; seconds, median of %d" % (wl, what.get(wl, wl), rounds))
    rows = []
    for c in configs:
        every = tags(wl, c, "idle") + tags(wl, c, "dd")
        cache = [read_result(t, "cache") for t in every]
        cache = max([int(x) for x in cache if x], default=None)
        loads += [float(x) for x in (read_result(t, "load") for t in every)
                  if x]
        short = any(os.path.exists(os.path.join(RESULTS, t + ".short"))
                    for t in tags(wl, c, "dd"))
        b = base(c)
        rows.append([c, secs(idle[c]), ratio(idle[c], idle.get(b)),
                     secs(dd[c]) + ("*" if short else ""),
                     ratio(dd[c], idle[c]),
                     ratio(dd[c], dd.get(b)),
                     "-" if cache is None else "%d%%" % cache,
                     " ".join(secs(timed_secs(t)) for t in tags(wl, c, "dd"))])
    table(["mount:scheduler", "idle s", "idle x dl", "dd s", "dd x idle",
           "dd x dl", "cache", "dd, each round (s)"], rows)
    print()

mounts = sorted({c.split(":")[0] for c in configs} - {"kernel"})
if mounts:
    print("shape: per run on the idle disk, median over schedulers and"
          " rounds (the daemon's stats)")
    rows = []
    for wl in workloads:
        for mode in mounts:
            ts = [t for c in configs if c.startswith(mode + ":")
                  for t in tags(wl, c, "idle")]
            meds = [median([stats_delta(t, sec, key) for t in ts])
                    for sec, key in (("read", "requests"),
                                     ("write", "requests"),
                                     ("procwatch", "exits"))]
            rows.append([wl, mode] + [None if x is None else int(round(x))
                                      for x in meds])
    table(["workload", "mount", "reads", "writes", "exits"], rows)
    print("exits: of the processes that sent the mount a request (those"
          " the daemon watches)")
    print()

idlers = [c for c in configs if c.split(":")[0] != "kernel" and
          c.split(":")[1] in ("anticipatory", "cfq", "bfq")]
if idlers:
    print("counters of anticipatory, cfq and bfq, summed over their runs"
          " with dd")
    for wl in workloads:
        for c in idlers:
            tot = {}
            for t in tags(wl, c, "dd"):
                for k, v in counters_delta(t).items():
                    tot[k] = tot.get(k, 0) + v
            print("%-8s %-18s %s" % (wl, c, " ".join("%s %d" % kv
                                                     for kv in tot.items())))
    print()
if loads:
    print("load average (1 min) at the start of the runs: %.2f to %.2f;"
          " at the end: %s" % (min(loads), max(loads), " ".join(
              open("/proc/loadavg").read().split()[:3])))
print("took %d s, setup included" % took)
print(notes, end="")
print("Claims (bench/RESULTS.md) to hold here too: Morton's, anticipatory"
      " 'dd x idle' <= 2 and 'dd x dl' <= 0.25 on both mounts; process"
      " exits, cfq and bfq 'idle x dl' <= 1.5.  kernel rows: no disk"
      " model, the loop device on this machine's disk.")
PY
