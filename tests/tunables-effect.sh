# SPDX-License-Identifier: GPL-2.0-or-later
# Tunable changes take effect on the running instance, without a switch:
# deadline with fifo_batch 1, front_merges 0 and immediate expiry still
# moves data intact, also while the tunables change under load, and no
# switch is counted.  (What each tunable does is unit-tested.)
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

C=$MNT/.control
I=$C/iosched

for i in 1 2 3 4; do
	dd if=/dev/urandom of="$T/src$i" bs=64k count=64 status=none
done

mount_fs -o scheduler=deadline
s0=$(switches)
echo 1 >"$I/fifo_batch"
echo 0 >"$I/front_merges"
echo 0 >"$I/read_expire"
echo 0 >"$I/write_expire"
echo 0 >"$I/writes_starved"
assert_eq "1 0 0" "$(cat "$I/fifo_batch" "$I/front_merges" "$I/read_expire" |
	tr '\n' ' ' | sed 's/ $//')" "tunables as written"
assert_eq "[deadline]" "$(tr ' ' '\n' <"$C/scheduler" | grep '\[')" \
	"active scheduler"

# dd_each WHAT FROM TO DD-ARGS...: dd of FROM1 to TO1 ... FROM4 to TO4 at
# once; each must succeed.
dd_each() {
	_what=$1 _from=$2 _to=$3
	shift 3
	pids=
	for i in 1 2 3 4; do
		dd if="$_from$i" of="$_to$i" status=none "$@" & pids="$pids $!"
	done
	for p in $pids; do wait "$p" || fail "$_what failed"; done
}

# Parallel writers in small blocks, then readers, with O_DIRECT so that
# every request reaches the queue.
dd_each "a writer" "$T/src" "$MNT/f" bs=4k oflag=direct conv=fsync
dd_each "a reader" "$MNT/f" "$T/back" bs=4k iflag=direct
for i in 1 2 3 4; do
	cmp "$T/src$i" "$T/back$i" || fail "f$i read back differs"
	cmp "$T/src$i" "$BACKING/f$i" || fail "backing f$i differs"
done

# Now change the tunables over and over while the I/O runs.
(
	n=0
	while [ ! -e "$T/stop" ] && [ $n -lt 100000 ]; do
		echo $((n % 4 + 1)) >"$I/fifo_batch"
		echo $((n % 2)) >"$I/front_merges"
		echo $((n % 3)) >"$I/read_expire"
		n=$((n + 1))
	done
	echo $n >"$T/changes"
) &
tuner=$!
cleanup_push "touch '$T/stop'; wait $tuner 2>/dev/null"
dd_each "a writer under tunable changes" "$T/src" "$MNT/g" bs=8k \
	oflag=direct conv=fsync
for i in 1 2 3 4; do
	cmp "$T/src$i" "$MNT/g$i" || fail "g$i differs after the tunable changes"
done
touch "$T/stop"
wait $tuner || fail "a tunable write failed under load"
[ "$(cat "$T/changes")" -gt 0 ] || fail "no tunable change happened under load"
echo "$(cat "$T/changes") rounds of tunable changes under load"

assert_eq "$s0" "$(switches)" "switches (none may happen)"
for d in read write; do
	assert_eq "$(stat_of $d requests)" "$(stat_of $d completed)" \
		"$d completed == requests"
	assert_eq 0 "$(stat_of $d errors)" "$d errors"
done
unmount_fs
check_log
