# SPDX-License-Identifier: GPL-2.0-or-later
# The proof, loosely: three sequential readers with think time, recorded
# on a mount with the hdd model under deadline and under anticipatory,
# run faster under anticipatory on the mount, and the closed-loop replay
# of either recording orders the two schedulers the same way.  (How close
# the figures come is measured by bench/replay.sh.)  A long antic_expire,
# on the mount and in the replay, keeps anticipation working on a loaded
# machine, where a reader may wait for a CPU longer than the default 6 ms.
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

for s in deadline anticipatory; do
	mount_fs -o disk_model=hdd,scheduler=$s
	[ $s = anticipatory ] && echo 30 >"$MNT/.control/iosched/antic_expire"
	timeout 60 cat "$MNT/.control/trace" >"$T/$s.trace" & R=$!
	sleep 0.2
	timeout 60 fio --directory="$MNT" --name=seq --rw=read --bs=64k \
		--direct=1 --ioengine=psync --thinktime=1000 --numjobs=3 \
		--size=32m --runtime=$secs --time_based --output=/dev/null ||
		fail "fio under $s failed"
	sleep 0.3
	kill $R; wait $R 2>/dev/null || true
	unmount_fs
	check_log
	grep -q ' C  RS .*\[fio\]' "$T/$s.trace" || fail "no fio reads traced under $s"
done

mount_dl=$(trace_mib "$T/deadline.trace")
mount_as=$(trace_mib "$T/anticipatory.trace")
echo "mount: deadline $mount_dl MiB/s, anticipatory $mount_as MiB/s"
awk -v a="$mount_as" -v d="$mount_dl" 'BEGIN { exit !(a > d) }' ||
	fail "mount: anticipatory ($mount_as) not faster than deadline ($mount_dl)"
for s in deadline anticipatory; do
	"$FUSE_IOSCHED_REPLAY" -o "module_dir=$MODULE_DIR" \
		-s deadline,anticipatory -o antic_expire=30 --closed-loop \
		"$T/$s.trace" >"$T/$s.out" ||
		fail "replay of the $s trace failed"
	cat "$T/$s.out"
	dl=$(mib_of deadline "$T/$s.out")
	as=$(mib_of anticipatory "$T/$s.out")
	awk -v a="$as" -v d="$dl" 'BEGIN { exit !(a > d) }' ||
		fail "replay of the $s trace: anticipatory ($as) not faster than deadline ($dl)"
done
