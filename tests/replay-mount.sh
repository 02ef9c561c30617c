# SPDX-License-Identifier: GPL-2.0-or-later
# The proof, loosely: two workloads recorded on a mount with the hdd model
# under deadline and under anticipatory, and replayed closed loop for the
# recorded time (--time-based, as fio ran them) through both schedulers,
# order the two schedulers as the mount did: three sequential readers
# with think time run faster under anticipatory; a reader under a
# streaming writer moves more bytes under deadline (anticipatory holds the
# writer back for the reader).  How close the figures come is measured by
# bench/replay.sh and printed here.  A long antic_expire, on the mount and
# in the replay, keeps anticipation working on a loaded machine, where a
# reader may wait for a CPU longer than the default 6 ms.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
: "${FUSE_IOSCHED_REPLAY:=$top_builddir/src/fuse-iosched-replay}"
require_root
require fio timeout
secs=3
[ -n "${TEST_QUICK:-}" ] && secs=2

for j in 0 1 2; do
	dd if=/dev/zero of="$BACKING/seq.$j.0" bs=1M count=32 status=none
done
# mib_of SCHED FILE: the mib_s column of SCHED.
mib_of() { awk -v s="$1" '$1 == s { print $4 }' "$2"; }
# The MiB/s of a recorded trace: bytes queued over first Q to last C.
trace_mib() {
	awk '$6 == "Q" { b += $10 * 512; if (!f) f = $4 }
		$6 == "C" { l = $4 } END { printf "%.2f", b / 1048576 / (l - f) }' "$1"
}
# faster A B WHAT: fail unless A > B.
faster() {
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a > b) }' || fail "$3"
}

common="--directory=$MNT --direct=1 --ioengine=psync --runtime=$secs
	--time_based --output=/dev/null"
for wl in seq3 rw; do
	for s in deadline anticipatory; do
		mount_fs -o disk_model=hdd,scheduler=$s
		[ $s = anticipatory ] &&
			echo 30 >"$MNT/.control/iosched/antic_expire"
		timeout 60 cat "$MNT/.control/trace" >"$T/$wl-$s.trace" & R=$!
		sleep 0.2
		# shellcheck disable=SC2086
		case $wl in
		seq3)
			timeout 60 fio $common --name=seq --rw=read --bs=64k \
				--thinktime=1000 --numjobs=3 --size=32m ;;
		rw)
			timeout 60 fio $common --name=rd --rw=read --bs=64k \
				--thinktime=1000 --size=32m --name=wr \
				--rw=write --bs=1m --size=32m ;;
		esac || fail "fio $wl under $s failed"
		sleep 0.3
		kill $R; wait $R 2>/dev/null || true
		unmount_fs
		check_log
		grep -q ' C  RS .*\[fio\]' "$T/$wl-$s.trace" ||
			fail "no fio reads traced in $wl under $s"
	done
	rm -f "$BACKING"/wr.*
done

for wl in seq3 rw; do
	mount_dl=$(trace_mib "$T/$wl-deadline.trace")
	mount_as=$(trace_mib "$T/$wl-anticipatory.trace")
	echo "$wl mount: deadline $mount_dl MiB/s, anticipatory $mount_as MiB/s"
	for s in deadline anticipatory; do
		"$FUSE_IOSCHED_REPLAY" -o "module_dir=$MODULE_DIR" \
			-s deadline,anticipatory -o antic_expire=30 \
			--closed-loop --time-based "$T/$wl-$s.trace" \
			>"$T/$wl-$s.out" || fail "replay of the $wl $s trace failed"
		cat "$T/$wl-$s.out"
		dl=$(mib_of deadline "$T/$wl-$s.out")
		as=$(mib_of anticipatory "$T/$wl-$s.out")
		m=$(trace_mib "$T/$wl-$s.trace")
		r=$(mib_of $s "$T/$wl-$s.out")
		echo "$wl $s: mount $m MiB/s, replay $r MiB/s," \
			"$(awk -v m="$m" -v r="$r" 'BEGIN { printf "%+.1f%%", (r - m) / m * 100 }')"
		if [ $wl = seq3 ]; then
			faster "$as" "$dl" "replay of the $wl $s trace: anticipatory ($as) not faster than deadline ($dl)"
		else
			faster "$dl" "$as" "replay of the $wl $s trace: deadline ($dl) not faster than anticipatory ($as)"
		fi
	done
	if [ $wl = seq3 ]; then
		faster "$mount_as" "$mount_dl" "mount: anticipatory ($mount_as) not faster than deadline ($mount_dl) on $wl"
	else
		faster "$mount_dl" "$mount_as" "mount: deadline ($mount_dl) not faster than anticipatory ($mount_as) on $wl"
	fi
done
