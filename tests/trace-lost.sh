# SPDX-License-Identifier: GPL-2.0-or-later
# A reader that falls behind loses events, never slows the I/O, and is
# told how many it lost, in place in its stream: the ring the readers
# share keeps the newest 4096 events, and the loss comes before them.  A
# signal ends its blocked read (a FUSE interrupt answers the parked read).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require timeout

mount_fs
# Open, and do not read while 2000 writes make 6000 events: more than the
# ring holds.
exec 3<"$MNT/.control/trace"
cleanup_push "exec 3<&-"
n=2000
[ -n "${TEST_QUICK:-}" ] && n=1500
timeout 60 dd if=/dev/zero of="$MNT/f" bs=4k count=$n oflag=direct \
	status=none || fail "dd with a stalled reader did not finish"
# Reads now return the loss, then what the ring kept, then block until
# the signal from timeout(1) interrupts the read.
st=0
timeout 2 cat <&3 >"$T/t" || st=$?
assert_eq 124 "$st" "status of a reader ended by timeout"
exec 3<&-

head -1 "$T/t" | grep -q '^# fuse-iosched trace' || fail "no header: $(head -1 "$T/t")"
lost=$(awk '/^lost [0-9]+ events$/ { print $2 }' "$T/t")
[ -n "$lost" ] || fail "no 'lost N events' line"
kept=$(grep -c ' [QDC]  *WS ' "$T/t" || true)
# Every event is either kept or counted lost.
assert_eq $((3 * n)) $((kept + lost)) "events kept + lost"
assert_eq 4096 "$kept" "events the ring kept"
# The loss is reported where it happened: the first events are gone, and
# the kept ones follow them, up to the last.
assert_eq "lost $lost events" "$(grep -v '^# ' "$T/t" | head -n 1)" \
	"the line after the header"
assert_eq "$((lost + 1)) $((3 * n))" \
	"$(awk '$6 ~ /^[QDC]$/ { if (!f) f = $3; l = $3 } END { print f, l }' "$T/t")" \
	"sequence numbers of the first and last events kept"

# The mount still works, and a new reader starts afresh.  Its life is
# longer than the waits below may take on a loaded machine; they end it.
timeout 120 cat "$MNT/.control/trace" >"$T/t2" & R=$!
cleanup_push "kill $R 2>/dev/null"
# The header comes once the reader's open registered it: events after
# that are its own (a sleep here let a slow start miss the writes).
wait_for "the new reader's header" grep -q '^# fuse-iosched trace' "$T/t2"
dd if=/dev/zero of="$MNT/f" bs=4k count=4 oflag=direct status=none
# All 12 events exist once dd returned; wait for the reader to copy them.
# Counted at each try: a $(grep) among wait_for's arguments is counted
# once, before the wait, and a reader still behind dd then never passed.
new_events() { grep -c ' [QDC]  *WS ' "$T/t2"; }
has_new_events() { [ "$(new_events)" -ge "$1" ]; }
wait_for "12 events of the new reader" has_new_events 12
kill $R; wait $R 2>/dev/null || true
assert_eq 12 "$(new_events)" "events of a new reader"
grep -q '^lost' "$T/t2" && fail "a new reader reports old losses"
unmount_fs
check_log
