#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fio with direct=1 and crc32c verification under every scheduler and
# every backing_io mode; the IOV_MAX case (512-byte reads at depth 2048
# merge into more parts than one preadv takes); and scheduler switches
# during direct I/O under each mode, which must lose nothing.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require fio
fio --enghelp 2>/dev/null | grep -qw libaio || skip "fio lacks libaio"
dio_backing 256

SIZE=4m
[ -z "${TEST_QUICK:-}" ] || SIZE=1m
SCHEDULERS=noop
for so in "$MODULE_DIR"/*.so; do
	[ ! -e "$so" ] || SCHEDULERS="$SCHEDULERS $(basename "$so" .so)"
done

run_fio() { # NAME ARGS...
	name=$1
	shift
	timeout 50 fio --name="$name" --directory="$MNT" --ioengine=libaio \
		--direct=1 --verify=crc32c --verify_fatal=1 --do_verify=1 \
		--verify_state_save=0 --output="$T/$name.out" "$@" ||
		{ cat "$T/$name.out"; fail "fio $name failed or did not verify"; }
	grep -q 'err= 0' "$T/$name.out" ||
		{ cat "$T/$name.out"; fail "fio $name reported errors"; }
	rm -f "$MNT/$name".*
}
errors() { awk '{ for (i = 2; i < NF; i += 2) if ($i == "errors") n += $(i + 1) }
	END { print n + 0 }' "$MNT/.control/stats"; }

for mode in auto direct buffered; do
	mount_fs -o "backing_io=$mode"
	for sched in $SCHEDULERS; do
		echo "$sched" >"$MNT/.control/scheduler"
		# Odd sizes too: 512 bytes to 64 KiB, not all 4 KiB aligned.
		run_fio "$mode-$sched" --size=$SIZE --rw=randrw \
			--bsrange=512-64k --iodepth=16
	done
	assert_eq 0 "$(errors)" "$mode: errors in .control/stats"

	# Switching all the while: a writer, then its verification.
	( while [ ! -e "$T/stop" ]; do
		for s in $SCHEDULERS; do
			echo "$s" >"$MNT/.control/scheduler" || touch "$T/switch-failed"
			sleep 0.01
		done
	done ) & sw=$!
	cleanup_push "touch '$T/stop'; wait $sw 2>/dev/null"
	run_fio "$mode-switch" --size=$SIZE --rw=randwrite --bsrange=512-128k \
		--iodepth=32 --numjobs=2
	touch "$T/stop"
	wait $sw
	rm -f "$T/stop"
	[ ! -e "$T/switch-failed" ] || fail "$mode: a switch failed"
	assert_eq 0 "$(errors)" "$mode: errors after switching"
	unmount_fs
done

# IOV_MAX: 512-byte sequential reads 2048 deep merge into ios of more
# than 1024 parts unless the queue caps them.
head -c 8388608 /dev/urandom >"$BACKING/iov"
mount_fs -o disk_model=hdd,max_background=4096,nr_requests=4096
timeout 50 fio --name=iov --filename="$MNT/iov" --rw=read --bs=512 \
	--iodepth=2048 --ioengine=libaio --direct=1 --size=8m \
	--output="$T/iov.out" || { cat "$T/iov.out"; fail "fio IOV_MAX case"; }
grep -q 'err= 0' "$T/iov.out" || { cat "$T/iov.out"; fail "fio IOV_MAX case: errors"; }
assert_eq 0 "$(errors)" "IOV_MAX case: errors in .control/stats"
unmount_fs
check_log
