# SPDX-License-Identifier: GPL-2.0-or-later
# Cycling through all six schedulers (noop, deadline, anticipatory, cfq,
# bfq, kyber) at least 300 times while several fio jobs read and write
# with verification: no error, no hang, no lost or duplicated request.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require fio

# TEST_QUICK=1 (slow builds, e.g. under TSan): smaller files, fewer
# switches.
FIO_SIZE=32m MIN_SWITCHES=300
[ -z "${TEST_QUICK:-}" ] || { FIO_SIZE=8m; MIN_SWITCHES=100; }
cat >"$T/load.fio" <<JOB
[global]
directory=$MNT
size=$FIO_SIZE
verify=crc32c
verify_fatal=1
# fio would leave its verify state files in the current directory.
verify_state_save=0
do_verify=1
group_reporting=0

[seq-write-psync]
ioengine=psync
rw=write
bs=64k

[rand-write-psync]
ioengine=psync
rw=randwrite
bsrange=4k-32k

[rand-rw-psync]
ioengine=psync
rw=randrw
rwmixread=50
bs=8k

[seq-rw-psync]
ioengine=psync
rw=rw
rwmixread=70
bs=16k

[rand-write-libaio]
ioengine=libaio
direct=1
iodepth=16
rw=randwrite
bs=16k
JOB
if ! fio --enghelp 2>/dev/null | grep -qw libaio; then
	sed -i 's/^ioengine=libaio/ioengine=psync/; /^iodepth=/d' "$T/load.fio"
fi
JOBS="seq-write-psync rand-write-psync rand-rw-psync seq-rw-psync rand-write-libaio"

mount_fs -o scheduler=deadline
C=$MNT/.control
SCHEDS="noop deadline anticipatory cfq bfq kyber"
for s in $SCHEDS; do
	grep -qw "$s" "$C/scheduler" || fail "$s is not available: $(cat "$C/scheduler")"
done
s0=$(switches)

timeout 240 fio --output="$T/fio.out" "$T/load.fio" & fio_pid=$!

# Switch to the next scheduler of the cycle until fio is done, and at
# least 300 times; each write is a real switch (never the active one).
n=0
set -- $SCHEDS
while kill -0 $fio_pid 2>/dev/null || [ $n -lt $MIN_SWITCHES ]; do
	s=$1
	shift
	set -- "$@" "$s"
	echo "$s" >"$C/scheduler" || fail "switch $n to $s failed"
	# The tunables directory follows, also under load.
	ls "$C/iosched" >/dev/null || fail "ls iosched failed under $s"
	n=$((n + 1))
	[ $n -lt 100000 ] || break
done
st=0
wait $fio_pid || st=$?
[ "$st" -eq 0 ] || { cat "$T/fio.out"; fail "fio exited with $st (124: timeout)"; }
grep -Ei 'verify.*(fail|bad)|crc32c.*(wanted|got)' "$T/fio.out" &&
	fail "fio reported verification errors"
for job in $JOBS; do
	grep -q "$job: (groupid=.*err= 0" "$T/fio.out" ||
		{ cat "$T/fio.out"; fail "fio job $job reported an error"; }
done

s1=$(switches)
echo "$n switch writes, $((s1 - s0)) switches counted"
[ "$((s1 - s0))" -ge $MIN_SWITCHES ] || fail "only $((s1 - s0)) switches under load"
assert_eq "$n" "$((s1 - s0))" "switches counted vs cycling writes"

cat "$C/stats"
stats_settled "the load"
rm -f "$MNT"/*.0
unmount_fs
grep -i refused "$LOG" && fail "a scheduler module was refused"
check_log
