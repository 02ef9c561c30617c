#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/soak.sh: a long mixed load with continual scheduler switching, to
# show that the daemon's memory and descriptors do not grow without bound.
#
#	bench/soak.sh [-d DIR] [-o OPTS] [SECONDS] [RESULTS_DIR]
#
# Mounts a fresh backing directory and, for SECONDS (default 1200, twenty
# minutes), runs at the same time
#	- fio verify jobs (crc32c; buffered psync and libaio O_DIRECT), restarted
#	  whenever they finish,
#	- tests/fsx on two files, restarted with a new seed whenever it finishes,
#	- a loop that copies /usr/include into the mount with tar, compares it
#	  and removes it again,
#	- a switcher that cycles through every listed scheduler every 50 ms,
# and every 30 s appends one line to RESULTS_DIR/samples.txt:
#	seconds  VmRSS-kB  open-fds  switches  read-requests  write-requests
# At the end it prints start, maximum and end of RSS and fds and fails
# (status 1) on any fio verify error, fsx mismatch, tar difference, failed
# switch, or when the daemon dies.  Run by hand as root; not part of CI.
#
# Options:
#	-d DIR   where the backing directory and mountpoint are made (default
#	         /var/tmp)
#	-o OPTS  more mount options for the daemon, comma-separated as for
#	         mount(8), e.g. -o writeback_cache; may be given more than once
# Two soaks may run at the same time: each makes its own directory under
# DIR.
# Environment: FUSE_IOSCHED (default ../daemon/fuse-iosched next to this
# script), MODULE_DIR (default ../schedulers/.libs), FSX (default
# ../tests/fsx; make check builds it; without it that load is left out).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
: "${FUSE_IOSCHED:=$top/daemon/fuse-iosched}"
: "${MODULE_DIR:=$top/schedulers/.libs}"
: "${FSX:=$top/tests/fsx}"
base=/var/tmp
opts=
while getopts d:o: opt; do
	case $opt in
	d) base=$OPTARG ;;
	o) opts=$opts,$OPTARG ;;
	*) echo "usage: $0 [-d DIR] [-o OPTS] [SECONDS] [RESULTS_DIR]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
DURATION=${1:-1200}
case $DURATION in
''|*[!0-9]*) echo "$0: SECONDS must be a number" >&2; exit 2 ;;
esac
T=$(mktemp -d "$base/fuse-iosched-soak.XXXXXX")
OUT=${2:-$T/results}
mkdir -p "$T/backing" "$T/mnt" "$OUT"
MNT=$T/mnt
C=$MNT/.control
STOP=$T/stop
pids=

cleanup() {
	touch "$STOP"
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	if mountpoint -q "$MNT"; then
		fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT"
	fi
	[ -n "${dpid:-}" ] && kill -9 "$dpid" 2>/dev/null
	# Keep the results when they are inside T.
	case $OUT in
	"$T"/*) rm -rf "$T/backing" ;;
	*) rm -rf "$T" ;;
	esac
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$FUSE_IOSCHED" -f -o "module_dir=$MODULE_DIR$opts" "$T/backing" "$MNT" \
	>"$OUT/daemon.log" 2>&1 &
dpid=$!
for _ in $(seq 200); do
	mountpoint -q "$MNT" && break
	sleep 0.05
done
mountpoint -q "$MNT" || { cat "$OUT/daemon.log"; echo "soak: mount failed"; exit 1; }
names=$(tr -d '[]' <"$C/scheduler")
echo "soak: pid $dpid, $DURATION s, options: ${opts#,}, schedulers: $names, results in $OUT"

# Each load runs in a loop until STOP exists and notes failures in
# OUT/errors.txt.
mkdir -p "$MNT/fio" "$MNT/fsx"
cat >"$T/verify.fio" <<JOB
[global]
directory=$MNT/fio
size=16m
verify=crc32c
verify_fatal=1
verify_state_save=0
do_verify=1
runtime=60
[seq-psync]
ioengine=psync
rw=write
bs=64k
[rand-psync]
ioengine=psync
rw=randrw
bsrange=4k-32k
[rand-libaio-direct]
ioengine=libaio
direct=1
iodepth=32
rw=randwrite
bs=16k
JOB
# soak_error MSG: a line in OUT/errors.txt, unless the soak is stopping (a
# load cut short then is no error).
soak_error() { [ -e "$STOP" ] || echo "$1" >>"$OUT/errors.txt"; }
fio_loop() {
	n=0
	while [ ! -e "$STOP" ]; do
		n=$((n + 1))
		if ! fio --output="$T/fio.out" "$T/verify.fio" ||
		    grep -Eqi 'verify.*(fail|bad)|crc32c.*(wanted|got)' "$T/fio.out"; then
			[ -e "$STOP" ] && break
			cp "$T/fio.out" "$OUT/fio-fail-$n.out"
			echo "fio round $n failed" >>"$OUT/errors.txt"
		fi
	done
	echo "fio rounds: $n" >>"$OUT/counts.txt"
}
fsx_loop() { # FILE
	n=0
	while [ ! -e "$STOP" ]; do
		n=$((n + 1))
		seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
		if ! "$FSX" -q -d -N 20000 -S "$seed" "$1" >"$T/fsx-$$.out" 2>&1; then
			[ -e "$STOP" ] && break
			cp "$T/fsx-$$.out" "$OUT/fsx-fail-$seed.out"
			echo "fsx on $1 failed, seed $seed" >>"$OUT/errors.txt"
		fi
		rm -f "$1"
	done
	echo "fsx rounds on $1: $n" >>"$OUT/counts.txt"
}
tar_loop() {
	n=0
	while [ ! -e "$STOP" ]; do
		n=$((n + 1))
		mkdir -p "$MNT/tree"
		tar -C /usr -cf - include 2>/dev/null | tar -C "$MNT/tree" -xf - ||
			soak_error "tar round $n: extract failed"
		[ -e "$STOP" ] && break
		diff -r -q --no-dereference /usr/include "$MNT/tree/include" >/dev/null 2>&1 ||
			soak_error "tar round $n: trees differ"
		rm -rf "$MNT/tree"
	done
	echo "tar rounds: $n" >>"$OUT/counts.txt"
}
switch_loop() {
	n=0
	while [ ! -e "$STOP" ]; do
		for s in $names; do
			echo "$s" >"$C/scheduler" 2>/dev/null ||
				soak_error "switch to $s failed"
			n=$((n + 1))
			sleep 0.05
		done
	done
	echo "switch writes: $n" >>"$OUT/counts.txt"
}

fio_loop & pids="$pids $!"
if [ -x "$FSX" ]; then
	fsx_loop "$MNT/fsx/a" & pids="$pids $!"
	fsx_loop "$MNT/fsx/b" & pids="$pids $!"
else
	echo "soak: $FSX not built, no fsx load"
fi
tar_loop & pids="$pids $!"
switch_loop & pids="$pids $!"

stat_of() {
	awk -v d="$1" -v f="$2" '$1 == d { for (i = 2; i < NF; i += 2)
		if ($i == f) print $(i + 1) }' "$C/stats" 2>/dev/null
}
sample() { # seconds
	rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$dpid/status")
	fds=$(ls "/proc/$dpid/fd" | wc -l)
	sw=$(awk '$1 == "switches" { print $2 }' "$C/stats" 2>/dev/null)
	printf '%d %s %s %s %s %s\n' "$1" "$rss" "$fds" "${sw:-?}" \
		"$(stat_of read requests)" "$(stat_of write requests)" |
		tee -a "$OUT/samples.txt"
}
echo "# seconds VmRSS-kB fds switches read-requests write-requests" >"$OUT/samples.txt"
start=$(date +%s)
sample 0
died=
while :; do
	now=$(( $(date +%s) - start ))
	[ "$now" -ge "$DURATION" ] && break
	sleep $(( DURATION - now < 30 ? DURATION - now : 30 ))
	kill -0 "$dpid" 2>/dev/null || { died=1; break; }
	sample $(( $(date +%s) - start ))
done

touch "$STOP"
for p in $pids; do
	wait "$p" 2>/dev/null
done
pids=
status=0
if [ -n "$died" ] || ! kill -0 "$dpid" 2>/dev/null; then
	echo "soak: the daemon died"; tail -n 40 "$OUT/daemon.log"; status=1
else
	# The last sample with the loads' files gone: what stays is what
	# the daemon keeps.
	rm -rf "$MNT/fio" "$MNT/fsx" "$MNT/tree"
	sample $(( $(date +%s) - start ))
	fusermount3 -u "$MNT"
	wait "$dpid"; st=$?
	dpid=
	[ "$st" -eq 0 ] || { echo "soak: daemon exited with $st"; status=1; }
fi
cat "$OUT/counts.txt" 2>/dev/null
awk '!/^#/ { if (n == 0) { r0 = $2; f0 = $3; rm = $2; fm = $3 }
	n++; if ($2 > rm) rm = $2; if ($3 > fm) fm = $3; r1 = $2; f1 = $3 }
	END { printf "RSS kB: start %d max %d end %d\nfds:    start %d max %d end %d\n",
		r0, rm, r1, f0, fm, f1 }' "$OUT/samples.txt" | tee "$OUT/summary.txt"
if [ -s "$OUT/errors.txt" ]; then
	echo "soak: errors:"; sort "$OUT/errors.txt" | uniq -c; status=1
fi
if grep -Ei 'error|assert|sanitizer|leak' "$OUT/daemon.log" >&2; then
	echo "soak: errors in the daemon log"; status=1
fi
[ $status -eq 0 ] && echo "soak: passed"
exit $status
