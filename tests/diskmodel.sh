# SPDX-License-Identifier: GPL-2.0-or-later
# The hdd disk model (-o disk_model=hdd): bad values fail the mount with
# one line, the settings show in --print-config and work from the file; a
# sequential read takes at least its transfer time, random 4 KiB reads
# cost seeks and rotation (several ms each) where sequential ones cost
# almost nothing, under every scheduler; seek_ms and rpm each set those
# costs; disk_model=none mounts as before.
# Timing checks are lower bounds or generous ratios only: the machine is
# noisy, and a slower machine only makes the model's costs look larger.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require fio
require_module "$MODULE_DIR" deadline anticipatory cfq bfq kyber

ST=$MNT/.control/stats
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# service_buckets: the counts of best-effort reads per service-time
# bucket so far (buckets_us in .control/stats gives their upper bounds).
service_buckets() {
	awk '$1 == "service" && $2 == "read" && $3 == "be" {
		for (i = 1; i <= NF; i++) if ($i == "buckets") break
		for (i++; i <= NF; i++) printf "%s ", $i }' "$ST"
}
# fio_read RW N: N synchronous O_DIRECT 4 KiB reads of $MNT/f, printing
# the lower bound in microseconds of the bucket that holds their median
# service time (dispatch to completion, as the daemon measured it).  The
# median, not the mean: on a loaded machine a worker's wake-up after the
# model's sleep now and then comes milliseconds late, and a few of those
# in a thousand reads of 41 us would outweigh the model's costs in a mean.
fio_read() {
	d0=$(stat_of read dispatched) b0=$(service_buckets)
	(cd "$T" && fio --name="$1" --filename="$MNT/f" --rw="$1" --bs=4k \
		--direct=1 --ioengine=psync --size=16M --number_ios="$2" \
		--verify_state_save=0 --output="$T/fio-$1.out") ||
		fail "fio $1 failed: $(cat "$T/fio-$1.out")"
	d1=$(stat_of read dispatched) b1=$(service_buckets)
	[ $((d1 - d0)) -ge "$2" ] || fail "fio $1: $((d1 - d0)) reads, want $2"
	awk -v b0="$b0" -v b1="$b1" '$1 == "buckets_us" {
		n = split(b0, x); split(b1, y)
		for (i = 1; i <= n; i++) total += y[i] - x[i]
		for (i = 1; i <= n; i++) {
			seen += y[i] - x[i]
			if (2 * seen >= total) { print (i > 1 ? $i : 0); exit }
		} }' "$ST"
}

base="module_dir=$MODULE_DIR,config=$EMPTY_CONF"

# Bad values: exit status 1, one line naming the option, no mount.
for opt in disk_model=tape seek_ms=-1 rpm=0 mb_per_s=abc seek_ms=1001 \
	disk_model=; do
	st=0
	timeout 10 "$FUSE_IOSCHED" -o "$base" -o "$opt" "$BACKING" "$MNT" \
		>"$T/out" 2>"$T/err" </dev/null || st=$?
	assert_eq 1 "$st" "exit status for -o $opt"
	assert_eq 1 "$(wc -l <"$T/err")" "lines on stderr for -o $opt"
	grep -qF -- "${opt%%=*}=" "$T/err" || fail "-o $opt: $(cat "$T/err")"
	! mountpoint -q "$MNT" || fail "mounted despite -o $opt"
done
printf 'threads = 2\nrpm = 0\n' >"$T/bad.conf"
st=0
timeout 10 "$FUSE_IOSCHED" -o "module_dir=$MODULE_DIR,config=$T/bad.conf" \
	"$BACKING" "$MNT" >"$T/out" 2>"$T/err" </dev/null || st=$?
assert_eq 1 "$st" "exit status for rpm = 0 in the file"
assert_eq 1 "$(wc -l <"$T/err")" "lines on stderr for rpm = 0 in the file"
grep -qF "$T/bad.conf:2: rpm=0" "$T/err" || fail "rpm = 0: $(cat "$T/err")"

# --print-config: the defaults, -o values, and the file's.
"$FUSE_IOSCHED" --print-config -o "$base" >"$T/out" || fail "--print-config"
for kv in 'disk_model = "none"' 'seek_ms = 8' 'rpm = 7200' 'mb_per_s = 150'; do
	grep -qxF "$kv" "$T/out" || fail "defaults lack '$kv': $(cat "$T/out")"
done
"$FUSE_IOSCHED" --print-config -o "$base,disk_model=hdd,seek_ms=5" \
	-o rpm=15000,mb_per_s=100 >"$T/out" || fail "--print-config -o"
for kv in 'disk_model = "hdd"' 'seek_ms = 5' 'rpm = 15000' 'mb_per_s = 100'; do
	grep -qxF "$kv" "$T/out" || fail "-o: no '$kv': $(cat "$T/out")"
done
printf 'disk_model = hdd\nseek_ms = 12\nrpm = 5400\nmb_per_s = 80\n' \
	>"$T/hdd.conf"
"$FUSE_IOSCHED" --print-config -o "module_dir=$MODULE_DIR,config=$T/hdd.conf" \
	-o rpm=10000 >"$T/out" || fail "--print-config with a file"
for kv in 'disk_model = "hdd"' 'seek_ms = 12' 'rpm = 10000' 'mb_per_s = 80'; do
	grep -qxF "$kv" "$T/out" || fail "file: no '$kv': $(cat "$T/out")"
done

# The rest mounts; what is above does not need /dev/fuse.
require_root

# 16 MiB in the backing directory, on disk, not in the mount's cache.
head -c 16M /dev/urandom >"$BACKING/f"
sync "$BACKING/f"

mount_fs -o "config=$EMPTY_CONF,disk_model=hdd,seek_ms=5,rpm=7200" \
	-o mb_per_s=100
grep -qF 'disk model hdd: seek 5 ms, 7200 rpm, 100 MB/s' "$LOG" ||
	fail "no disk model line in the log"

# Sequential: 16 MiB at 100 MB/s is 168 ms of transfer at least.
t0=$(now_ms)
cmp "$BACKING/f" "$MNT/f" || fail "data read through the model differs"
t1=$(now_ms)
echo "sequential 16 MiB: $((t1 - t0)) ms"
[ $((t1 - t0)) -ge 160 ] || fail "16 MiB read in $((t1 - t0)) ms, under its transfer time"

# Per read: sequential ones are contiguous (41 us of transfer each),
# random ones pay a seek and 4.2 ms of rotation, under every scheduler.
# Only the model's floor is absolute: a loaded machine slows the
# sequential reads too, so their cost is judged against the random ones.
for sched in noop deadline anticipatory cfq bfq kyber; do
	echo "$sched" >"$MNT/.control/scheduler"
	grep -qF "[$sched]" "$MNT/.control/scheduler" || fail "no switch to $sched"
	seq_us=$(fio_read read 1024)
	rand_us=$(fio_read randread 64)
	echo "$sched: median read service over $seq_us us sequential, over $rand_us us random"
	[ "$rand_us" -gt 2000 ] || fail "$sched: random reads take $rand_us us each"
	[ "$rand_us" -gt $((seq_us * 4)) ] ||
		fail "$sched: random $rand_us us not well above sequential $seq_us us"
done
unmount_fs
check_log

# Each parameter reaches the model: a slow seek, then a slow spindle,
# each makes random reads cost at least half of what it alone implies
# (lower bounds: a loaded machine only adds to them).  Seeks within a
# 16 MiB file cover 1/256 of the model's stroke in square root: about
# 7 ms at seek_ms=1000, under 1 ms at the default 8.
for params in "seek_ms=1000,rpm=100000:4000" "seek_ms=0,rpm=200:75000"; do
	opts=${params%%:*} min_us=${params##*:}
	mount_fs -o "config=$EMPTY_CONF,disk_model=hdd,scheduler=noop,$opts"
	rand_us=$(fio_read randread 8)
	echo "$opts: median random read service over $rand_us us"
	[ "$rand_us" -ge "$min_us" ] ||
		fail "$opts: random reads take $rand_us us each, want $min_us at least"
	unmount_fs
done

# disk_model=none: no model, the same data.
: >"$LOG"
mount_fs -o "config=$EMPTY_CONF,disk_model=none"
cmp "$BACKING/f" "$MNT/f" || fail "data read without the model differs"
fio_read randread 64 >/dev/null
! grep -q 'disk model' "$LOG" || fail "disk_model=none logged a disk model"
unmount_fs
check_log
exit 0
