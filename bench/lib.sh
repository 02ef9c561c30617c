# shellcheck shell=bash disable=SC2034
# Shared helpers for bench/latency.sh, idleness.sh, fairness.sh, switch.sh.
# Source it after setting BENCH (the script's name, for messages) and
# parsing the options; it expects RUNTIME, ROUNDS and WORKDIR set and the
# results directory as $1.
#
# It finds the daemon and the modules (FUSE_IOSCHED, MODULE_DIR, as for
# overhead.sh), makes a work directory $W with a backing directory $B,
# and unmounts and removes everything at exit, whatever happens.

die() { echo "$BENCH: $*" >&2; exit 1; }

HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${FUSE_IOSCHED:-}" ]; then
	if [ -x "$HERE/../src/fuse-iosched" ]; then
		FUSE_IOSCHED=$HERE/../src/fuse-iosched
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
[ "$ROUNDS" -ge 3 ] 2>/dev/null || die "-r: at least 3 rounds"
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

# mount_fs NAME [OPTIONS [LOG]]: mount $B on $W/NAME with fuse-iosched and
# -o OPTIONS (comma-separated), and wait until the mount is there.  With
# LOG, the daemon stays in the foreground (in the background of this
# shell) and its messages go to LOG; it still ends on unmount.
mount_fs() {
	d=$W/$1
	mkdir -p "$d"
	set -- "$1" "config=$W/empty.conf${MODULE_DIR:+,module_dir=$MODULE_DIR}${2:+,$2}" "${3:-}"
	if [ -n "$3" ]; then
		"$FUSE_IOSCHED" -f -o "$2" "$B" "$d" >>"$3" 2>&1 &
	else
		"$FUSE_IOSCHED" -o "$2" "$B" "$d" >>"$W/daemon-$1.log" 2>&1 ||
			die "cannot mount $1: $(cat "$W/daemon-$1.log")"
	fi
	MOUNTS="$d $MOUNTS"
	for _ in $(seq 100); do
		mountpoint -q "$d" && return 0
		sleep 0.1
	done
	die "$1 did not mount"
}

# switch_to MOUNT SCHEDULER: make SCHEDULER active on the mount, and check.
switch_to() {
	echo "$2" >"$W/$1/.control/scheduler" || die "cannot switch $1 to $2"
	grep -q "\[$2\]" "$W/$1/.control/scheduler" ||
		die "$2 is not active on $1 (MODULE_DIR?)"
}

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches 2>/dev/null ||
		echo "warning: cannot drop caches" >&2
}

# layout FILE SIZE: write FILE sequentially in the backing directory, so
# that it has real extents (FIEMAP) close together.
layout() {
	fio --name=layout --filename="$1" --size="$2" --rw=write --bs=1m \
		--ioengine=psync --end_fsync=1 --output=/dev/null ||
		die "cannot lay out $1"
}

# The machine, for the top of every summary.
describe_machine() {
	dev=$(df -P "$B" | awk 'NR == 2 { print $1 }')
	fstype=$(df --output=fstype "$B" | tail -n 1)
	echo "date:      $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
	echo "cpus:      $(nproc) x $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
	echo "kernel:    $(uname -srm)"
	echo "backing:   $B on $dev ($fstype)"
	echo "load:      $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) at start"
	echo "software:  $("$FUSE_IOSCHED" --version | head -n 1), fio $(fio --version)"
	echo "runs:      $RUNTIME s each, $ROUNDS rounds alternating, median reported"
}
