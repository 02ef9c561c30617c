# SPDX-License-Identifier: GPL-2.0-or-later
# fio with crc32c verification over mixed random reads and writes (psync,
# and libaio with O_DIRECT at queue depth 16), then four concurrent dd
# writers to different files, checked byte for byte.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require fio sha256sum

# TEST_QUICK=1 (slow builds, e.g. under TSan): smaller fio files.
FIO_SIZE=16m
[ -z "${TEST_QUICK:-}" ] || FIO_SIZE=4m
run_fio() { # NAME ARGS...
	name=$1
	shift
	timeout 120 fio --name="$name" --directory="$MNT" --numjobs=3 \
		--size=$FIO_SIZE --rw=randrw --rwmixread=50 --bsrange=4k-64k \
		--verify=crc32c --verify_fatal=1 --do_verify=1 \
		--verify_state_save=0 \
		--group_reporting --output="$T/$name.out" "$@" ||
		{ cat "$T/$name.out"; fail "fio $name failed or did not verify"; }
	grep -q 'err= 0' "$T/$name.out" ||
		{ cat "$T/$name.out"; fail "fio $name reported errors"; }
	rm -f "$MNT/$name".*
}

# A counter of .control/stats: stat_field read requests
stat_field() {
	awk -v d="$1" -v f="$2" '$1 == d { for (i = 2; i < NF; i += 2)
		if ($i == f) print $(i + 1) }' "$MNT/.control/stats"
}

# The I/O went through the elevator, in both directions.
check_stats() { # WHAT
	for d in read write; do
		n=$(stat_field $d requests)
		[ -n "$n" ] && [ "$n" -gt 0 ] ||
			fail "$1: no $d requests in .control/stats: $(cat "$MNT/.control/stats")"
		e=$(stat_field $d errors)
		assert_eq 0 "$e" "$1: $d errors in .control/stats"
	done
}

# noop, and every scheduler module that was built.
SCHEDULERS=noop
for so in "$MODULE_DIR"/*.so; do
	[ ! -e "$so" ] || SCHEDULERS="$SCHEDULERS $(basename "$so" .so)"
done

for sched in $SCHEDULERS; do
	mount_fs -o scheduler=$sched
	run_fio psync-$sched --ioengine=psync
	if fio --enghelp 2>/dev/null | grep -qw libaio; then
		run_fio libaio-$sched --ioengine=libaio --direct=1 --iodepth=16
	fi
	check_stats "$sched: fio"

	# Four writers at once, different block sizes, one of them O_DIRECT.
	for i in 1 2 3 4; do
		head -c $((8 * 1024 * 1024 + i * 4096)) /dev/urandom >"$T/src$i"
	done
	# Waiting on each pid, not on any job: the daemon is a job too.
	dd if="$T/src1" of="$MNT/f1" bs=4k status=none & pids=$!
	dd if="$T/src2" of="$MNT/f2" bs=64k conv=fsync status=none & pids="$pids $!"
	dd if="$T/src3" of="$MNT/f3" bs=1M iflag=fullblock oflag=direct status=none &
	pids="$pids $!"
	dd if="$T/src4" of="$MNT/f4" bs=12345 status=none & pids="$pids $!"
	st=0
	for p in $pids; do wait "$p" || st=$?; done
	assert_eq 0 "$st" "$sched: a dd writer failed"
	(cd "$T" && sha256sum src1 src2 src3 src4 | sed 's/src/f/') >"$T/sums"
	(cd "$MNT" && sha256sum -c --quiet "$T/sums") || fail "$sched: mount differs from sources"
	(cd "$BACKING" && sha256sum -c --quiet "$T/sums") || fail "$sched: backing differs from sources"
	unmount_fs

	# Read back in parallel through a fresh mount (nothing cached).
	mount_fs -o scheduler=$sched
	pids=
	for i in 1 2 3 4; do
		cmp "$T/src$i" "$MNT/f$i" >"$T/cmp$i" 2>&1 &
		pids="$pids $!"
	done
	st=0
	for p in $pids; do wait "$p" || st=$?; done
	[ "$st" -eq 0 ] || { cat "$T"/cmp?; fail "$sched: parallel read-back differs"; }
	rm -f "$MNT"/f?
	unmount_fs
done
check_log
exit 0
