#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# .control/trace shows every user's offsets and process names.  On an
# allow_other mount another user cannot open it (EACCES), not even with
# CAP_DAC_OVERRIDE, which gets past its mode (0400) in the kernel but
# not past the daemon.  Readers are bounded: root opens 8 at once, the
# 9th gets EBUSY, and a closed one makes room again.  The 8 see the same
# events, every one of them.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require setpriv python3 timeout

# nobody must be able to walk to the mountpoint.
chmod 755 "$T"
mount_fs -o allow_other
TR=$MNT/.control/trace
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
# What opening the trace says (as COMMAND... runs it): ok, or the error.
try_open() {
	if "$@" sh -c ': <"$1"' sh "$TR" 2>"$T/err"; then
		echo ok
	else
		sed 's/.*: //' "$T/err"
	fi
}

assert_eq "Permission denied" "$(try_open as_nobody)" "nobody opening the trace"
assert_eq "Permission denied" "$(try_open as_nobody --inh-caps=+dac_override \
	--ambient-caps=+dac_override)" "nobody with CAP_DAC_OVERRIDE"
assert_eq ok "$(try_open)" "root opening the trace"

# reader I [FD]: cat the trace (or what FD has open of it) into $T/tI, in
# the background, until its header shows; its pid in R[I].
R=()
reader() {
	: >"$T/t$1"
	if [ $# -gt 1 ]; then
		timeout 60 cat <&"$2" >"$T/t$1" &
	else
		timeout 60 cat "$TR" >"$T/t$1" &
	fi
	R[$1]=$!
	cleanup_push "kill $! 2>/dev/null"
	wait_for "reader $1's header" grep -q '^# fuse-iosched trace' "$T/t$1"
}
for r in 1 2 3 4 5 6 7 8; do
	reader $r
done
assert_eq "Device or resource busy" "$(try_open)" "a 9th reader"
assert_eq "Permission denied" "$(try_open as_nobody)" "nobody, 8 readers open"
kill "${R[8]}"; wait "${R[8]}" 2>/dev/null || true
# The daemon makes room when it has the kernel's release of that reader,
# sent after its exit.  Open anew at each try (a $(try_open) among
# wait_for's arguments is taken once), and keep the open that found room
# as the new reader 8: a probe's own release would come late in turn.
open_fd4() { exec 4<"$TR"; } 2>/dev/null
wait_for "room for a reader again" open_fd4
reader 8 4
exec 4<&-

# Direct writes and reads, then a read by a program of its own that
# marks the end: once a reader has its C line it has every event.
dd if=/dev/zero of="$MNT/f" bs=4k count=64 oflag=direct status=none
dd if="$MNT/f" of=/dev/null bs=4k count=64 iflag=direct status=none
python3 -c 'import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
os.preadv(fd, [mmap.mmap(-1, 4096)], 0)' "$MNT/f" || fail "the marker read failed"
# (r, not i: wait_for sets i.)
for r in 1 2 3 4 5 6 7 8; do
	wait_for "the marker in reader $r" grep -Eq ' C +RS? .*\[python3\]' "$T/t$r"
	kill "${R[$r]}" 2>/dev/null || true
done
# 64 writes and 64 reads of dd, each queued, dispatched and completed.
assert_eq 384 "$(grep -Ec ' [QDC] +[RW]S? .*\[dd\]' "$T/t1")" "dd's events"
grep -q '^lost' "$T/t1" && fail "events lost by readers that kept up"
for r in 2 3 4 5 6 7 8; do
	cmp "$T/t1" "$T/t$r" || fail "readers 1 and $r saw different events"
done
unmount_fs
check_log
