#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The ssd disk model (-o disk_model=ssd): bad values fail the mount with
# one line, the settings show in --print-config; through the model, data
# is intact, random reads cost no seeks, writes beyond the write buffer
# wait for it to drain, and the copy to the backing file overlaps the
# modelled service time.  Timing checks are lower bounds or generous
# ratios only: the machine is noisy.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require fio

base="module_dir=$MODULE_DIR,config=$EMPTY_CONF"
now_ms() { echo $(($(date +%s%N) / 1000000)); }

for opt in ssd_channels=0 ssd_channels=65 ssd_read_us=x ssd_buffer_mib=0 \
	ssd_drain_mb_per_s=0 ssd_mb_per_s=100001; do
	st=0
	timeout 10 "$FUSE_IOSCHED" -o "$base,disk_model=ssd" -o "$opt" \
		"$BACKING" "$MNT" >"$T/out" 2>"$T/err" </dev/null || st=$?
	assert_eq 1 "$st" "exit status for -o $opt"
	assert_eq 1 "$(wc -l <"$T/err")" "lines on stderr for -o $opt"
	grep -qF -- "${opt%%=*}=" "$T/err" || fail "-o $opt: $(cat "$T/err")"
	! mountpoint -q "$MNT" || fail "mounted despite -o $opt"
done

"$FUSE_IOSCHED" --print-config -o "$base" >"$T/out" || fail "--print-config"
for kv in 'ssd_channels = 8' 'ssd_read_us = 80' 'ssd_mb_per_s = 500' \
	'ssd_buffer_mib = 32768' 'ssd_drain_mb_per_s = 1000'; do
	grep -qxF "$kv" "$T/out" || fail "defaults lack '$kv': $(cat "$T/out")"
done

head -c 16M /dev/urandom >"$BACKING/f"
sync "$BACKING/f"

# randread_us: median completion of 200 random 4 KiB O_DIRECT reads of
# f (the 50th percentile in fio's terse output).  Not the mean: on a
# loaded machine a few late wake-ups of many milliseconds carry it.
randread_us() {
	(cd "$T" && fio --name=rr --filename="$MNT/f" --rw=randread --bs=4k \
		--direct=1 --ioengine=psync --size=16M --number_ios=200 \
		--output-format=terse --output="$T/rr.out") || fail "fio randread"
	awk -F';' '{ split($24, p, "="); printf "%d", p[2] }' "$T/rr.out"
}
# The same reads without a model: what this machine's load costs them.
mount_fs -o "config=$EMPTY_CONF"
base_us=$(randread_us)
unmount_fs
# A 1 MiB buffer draining at 10 MB/s: 8 MiB of synchronous writes need
# at least 7 MiB drained first, 734 ms.
mount_fs -o "config=$EMPTY_CONF,disk_model=ssd,ssd_buffer_mib=1" \
	-o ssd_drain_mb_per_s=10
grep -qF 'disk model ssd: 8 channels, read 80 us' "$LOG" ||
	fail "no ssd disk model line in the log"
cmp "$BACKING/f" "$MNT/f" || fail "data read through the ssd model differs"

# Random 4 KiB reads: no seek, no rotation.  The model adds 88 us to
# each; the hdd model would add at least 4.6 ms (half a revolution and
# the shortest seek).  Compared with the same reads without a model, so
# that the machine's load cancels out.
med_us=$(randread_us)
echo "random 4 KiB reads: median completion $med_us us, $base_us us without a model"
[ "$med_us" -lt $((base_us + 3000)) ] ||
	fail "random reads take $med_us us (median), $base_us us without a model"

t0=$(now_ms)
dd if=/dev/urandom of="$T/w" bs=1M count=8 status=none
dd if="$T/w" of="$MNT/w" bs=1M oflag=direct,sync status=none ||
	fail "dd through the ssd model"
t1=$(now_ms)
echo "8 MiB of synchronous writes: $((t1 - t0)) ms"
[ $((t1 - t0)) -ge 700 ] ||
	fail "8 MiB written in $((t1 - t0)) ms: the buffer did not fill"
cmp "$T/w" "$BACKING/w" || fail "data written through the ssd model differs"
unmount_fs

# The syscall overlaps the modelled service: at 1 MB/s a 1 MiB write is
# served for 1049 ms, and its data reaches the backing file at dispatch,
# long before the write completes (not at the end, as when the worker
# slept first and copied after).
mount_fs -o "config=$EMPTY_CONF,disk_model=ssd,ssd_mb_per_s=1"
head -c 1M /dev/urandom >"$T/o"
t0=$(now_ms)
dd if="$T/o" of="$MNT/o" bs=1M oflag=direct status=none &
dd_pid=$!
until cmp -s "$T/o" "$BACKING/o"; do
	kill -0 "$dd_pid" 2>/dev/null || break
	sleep 0.01
done
t_data=$(now_ms)
wait "$dd_pid" || fail "dd through the ssd model at 1 MB/s"
t_done=$(now_ms)
cmp "$T/o" "$BACKING/o" || fail "data written at 1 MB/s differs"
echo "1 MiB at 1 MB/s: data in the backing file after $((t_data - t0)) ms," \
	"write completed after $((t_done - t0)) ms"
[ $((t_done - t0)) -ge 1000 ] ||
	fail "1 MiB at 1 MB/s completed in $((t_done - t0)) ms"
[ $((t_done - t_data)) -ge 500 ] ||
	fail "the data reached the backing file $((t_done - t_data)) ms" \
		"before the write completed: copied after the model's time"
unmount_fs
check_log
exit 0
