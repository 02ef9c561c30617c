# SPDX-License-Identifier: GPL-2.0-or-later
# .control/trace streams every request's life: Q, D and C lines with the
# sectors and sizes of the I/O done (the sectors where the file's blocks
# are, the same for its writes and its reads), S on O_DIRECT writes and
# not on buffered ones, back merges
# (M) of sequential asynchronous writes, and the same events for two
# readers at once.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require fio timeout filefrag

TR=$MNT/.control/trace
# The lines of action $2 and direction $3 ("W", "R") in trace $1.
lines() { awk -v a="$2" -v d="$3" '$6 == a && substr($7, 1, 1) == d' "$1"; }

# The dd file exists, allocated, before the trace: a write into blocks
# not yet allocated has no device address yet (sectormap.c gives it the
# fallback sector), while a read of them more than 100 ms later, once
# writeback allocated them, gets FIEMAP's: the same blocks would show
# two sectors, depending on the machine's speed.
dd if=/dev/zero of="$BACKING/f" bs=64k count=8 conv=fsync status=none
# The hdd model keeps requests queued long enough to merge.
mount_fs -o disk_model=hdd
timeout 30 cat "$TR" >"$T/t1" & R1=$!
timeout 30 cat "$TR" >"$T/t2" & R2=$!
cleanup_push "kill $R1 $R2 2>/dev/null"
wait_line "$T/t1" '^# fuse-iosched trace'
wait_line "$T/t2" '^# fuse-iosched trace'

# Synchronous 64 KiB writes, then reads of the same blocks.
dd if=/dev/zero of="$MNT/f" bs=64k count=8 oflag=direct conv=notrunc \
	status=none
dd if="$MNT/f" of=/dev/null bs=64k count=8 iflag=direct status=none
# A buffered write: its writer waits (no writeback_cache), but it is no
# sync write as the kernel's S means (O_SYNC, O_DSYNC, O_DIRECT).
head -c 65536 /dev/zero >"$MNT/h"
# Sequential 4 KiB writes, 16 in flight: most merge behind another.
fio --name=seq --filename="$MNT/g" --ioengine=libaio --direct=1 \
	--rw=write --bs=4k --iodepth=16 --size=512k --output=/dev/null ||
	fail "fio failed"
sync
# A last read, by a program of its own, marks the end: once both readers
# have its C line they have every event before it (a sleep here let a
# slow reader miss some of fio's).
python3 -c 'import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
os.preadv(fd, [mmap.mmap(-1, 4096)], 0)' "$MNT/f" || fail "the marker read failed"
wait_line "$T/t1" ' C +RS? .*\[python3\]'
wait_line "$T/t2" ' C +RS? .*\[python3\]'
kill $R1 $R2 2>/dev/null || true
wait $R1 $R2 2>/dev/null || true

# dd: 8 writes and 8 reads of 128 sectors, each queued, dispatched and
# completed, in order, at the same 8 sectors.
ddw=$(lines "$T/t1" Q W | grep '\[dd\]' | awk '{ print $8, $10 }')
ddr=$(lines "$T/t1" Q R | grep '\[dd\]' | awk '{ print $8, $10 }')
assert_eq 8 "$(echo "$ddw" | wc -l)" "dd write Q lines"
assert_eq "$ddw" "$ddr" "sectors and sizes of the reads against the writes"
# Where the file's blocks are, in sectors: FIEMAP's answer, as filefrag
# prints it; or, on a backing filesystem without FIEMAP, sectormap.c's
# fallback, contiguous: sectors there pass 2^53, awk compares their last
# 12 digits.
if filefrag -b512 -v "$BACKING/f" >"$T/frag" 2>&1; then
	# Extent lines: "N: LOGICAL.. LAST: PHYSICAL.. LAST: LENGTH: ...".
	want=$(seq 0 128 896 | awk 'BEGIN { n = 0 }
		NR == FNR {
		if ($0 ~ /^ *[0-9]+: +[0-9]+\.\. *[0-9]+: +[0-9]+\.\./) {
			split($0, f, /[:. ]+/)
			ls[n] = f[3] + 0; le[n] = f[4] + 0; ps[n] = f[5] + 0
			n++ }
		next }
		{ for (i = 0; i < n; i++) if (ls[i] <= $1 + 0 && $1 + 0 <= le[i])
			printf "%.0f 128\n", ps[i] + $1 - ls[i] }' "$T/frag" -)
	assert_eq "$want" "$ddw" "sectors of the dd writes against filefrag's"
else
	echo "$ddw" | awk '{ n = length($1); hi = substr($1, 1, n - 12)
		lo = substr($1, n - 11) + 0 }
		$2 != 128 || NR > 1 && (hi != phi || lo != plo + 128) { exit 1 }
		{ phi = hi; plo = lo }' ||
		fail "dd writes are not 8 contiguous runs of 128: $ddw"
fi
for a in D C; do
	assert_eq "$ddr" "$(lines "$T/t1" $a R | grep '\[dd\]' |
		awk '{ print $8, $10 }')" "$a lines of the dd reads"
done
assert_eq "WS" "$(lines "$T/t1" Q W | awk '/\[dd\]/ { print $7 }' | sort -u)" \
	"RWBS of the O_DIRECT writes"
assert_eq "W" "$(lines "$T/t1" Q W | awk '/\[head\]/ { print $7 }' | sort -u)" \
	"RWBS of the buffered write"
# C lines say how long the request waited and was served (then, as every
# line, the group charged).
lines "$T/t1" C R | grep -Eq 'wait [0-9]+\.[0-9]{9} service [0-9]+\.[0-9]{9} cgroup /' ||
	fail "C lines without wait and service: $(lines "$T/t1" C R | head -2)"
# Times grow and sequence numbers count events.
awk '!/^#/ { if ($4 < t || $3 != s + 1 && s) { print; exit 1 }; t = $4; s = $3 }' \
	"$T/t1" || fail "times or sequence numbers go backwards"

# fio: 128 requests of 8 sectors, merged: fewer dispatches than queued.
q=$(lines "$T/t1" Q W | grep -c '\[fio\]')
m=$(lines "$T/t1" M W | grep -c '\[fio\]')
d=$(lines "$T/t1" D W | grep -c '\[fio\]')
assert_eq 128 "$q" "fio Q lines"
[ "$m" -gt 0 ] || fail "no back merges of sequential writes"
assert_eq "$q" "$((d + m + $(lines "$T/t1" F W | grep -c '\[fio\]')))" \
	"fio requests = dispatches + merges"

# Both readers saw every event.
cmp "$T/t1" "$T/t2" || fail "the two readers saw different events"
grep -q '^lost' "$T/t1" && fail "events lost by a reader that kept up"
unmount_fs
check_log
