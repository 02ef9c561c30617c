# SPDX-License-Identifier: GPL-2.0-or-later
# A trace records the mount it was taken on (its second header line:
# disk model and parameters, workers, nr_requests, backing_io), and
# fuse-iosched-replay takes those for its defaults and prints the
# settings it used: a trace of an ssd mount with 2 workers and
# nr_requests 16 replays on that, unless -m or -o says otherwise.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
: "${FUSE_IOSCHED_REPLAY:=$top_builddir/replay/fuse-iosched-replay}"
require_root
require dd timeout

mount_fs -o disk_model=ssd,ssd_channels=3,threads=2,backing_io=buffered
echo 16 >"$MNT/.control/nr_requests"
timeout 30 cat "$MNT/.control/trace" >"$T/t" & TR=$!
cleanup_push "kill $TR 2>/dev/null"
wait_for "the trace header" grep -q '^# fuse-iosched mount:' "$T/t"
dd if=/dev/zero of="$MNT/f" bs=64k count=8 conv=fsync status=none
dd if="$MNT/f" of=/dev/null bs=64k iflag=direct status=none
has_c() { grep -q ' C ' "$T/t"; }
wait_for "completions in the trace" has_c
kill "$TR" 2>/dev/null || true
wait "$TR" 2>/dev/null || true
grep '^# fuse-iosched mount:' "$T/t"
grep -q '^# fuse-iosched mount: disk_model ssd .*ssd_channels 3 .*threads 2 nr_requests 16 backing_io buffered$' "$T/t" ||
	fail "the header does not record the mount: $(sed -n 2p "$T/t")"

replay() { "$FUSE_IOSCHED_REPLAY" -o "module_dir=$MODULE_DIR" -s noop "$@" "$T/t"; }
out=$(replay) || fail "the replay failed"
echo "$out" | head -n 1
echo "$out" | head -n 1 | grep -q '; settings (the trace.s mount.*): disk_model ssd ssd_channels 3 .* threads 2 nr_requests 16 (recorded with backing_io buffered)$' ||
	fail "the replay did not take the trace's settings: $(echo "$out" | head -n 1)"
out=$(replay -m hdd -o threads=3) || fail "the replay with options failed"
echo "$out" | head -n 1 | grep -q '; settings .*: disk_model hdd seek_ms [0-9]* rpm [0-9]* mb_per_s [0-9]* threads 3 nr_requests 16 ' ||
	fail "options do not win over the trace: $(echo "$out" | head -n 1)"
check_log
