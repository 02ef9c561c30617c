# SPDX-License-Identifier: GPL-2.0-or-later
# On a filesystem with FIEMAP (ext4 on a loop device), the sector the
# daemon dispatches an I/O at is where the data lives on the device, as
# filefrag -v reports it; a hole gets where the extent before it would
# continue (the allocator's goal).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require mkfs.ext4 filefrag losetup python3

truncate -s 256M "$T/img"
mkfs.ext4 -q -F "$T/img" || skip_env "mkfs.ext4 failed"
mount -o loop "$T/img" "$BACKING" || skip_env "cannot mount a loop device"
# Runs before lib.sh's own unmount: the daemon must let go first.
cleanup_push 'mountpoint -q "$MNT" && { fusermount3 -u "$MNT" || umount -l "$MNT"; sleep 0.2; }; umount "$BACKING" 2>/dev/null || umount -l "$BACKING"'

mount_fs -o log=debug
# 8 MiB of data, then a 4 MiB hole, then 1 MiB more, all on disk.
dd if=/dev/urandom of="$MNT/f" bs=1M count=8 conv=fsync status=none
dd if=/dev/urandom of="$MNT/f" bs=1M count=1 seek=12 conv=fsync,notrunc status=none
sync
filefrag -v -b512 "$BACKING/f" >"$T/frag" || fail "filefrag failed"
cat "$T/frag"

# Direct reads reach the daemon whatever the page cache holds.
lines_before=$(wc -l <"$LOG")
dd if="$MNT/f" of=/dev/null bs=64k iflag=direct status=none
sleep 0.2
tail -n +"$((lines_before + 1))" "$LOG" | grep 'dispatch R ' >"$T/dispatch" || true
[ -s "$T/dispatch" ] || fail "no 'dispatch R' debug lines in the log"
wc -l <"$T/dispatch"

python3 - "$T/frag" "$T/dispatch" <<'PY' || fail "sectors differ from filefrag"
import re, sys
# filefrag -v -b512, in sectors (exact whatever the block size):
#   "   0:        0..   16383:      32768..     49151:  16384: ..."
ext = []
for line in open(sys.argv[1]):
    m = re.match(r"\s*\d+:\s*(\d+)\.\.\s*(\d+):\s*(\d+)\.\.\s*(\d+):", line)
    if m:
        l0, l1, p0, _ = map(int, m.groups())
        ext.append((l0 * 512, (l1 + 1) * 512, p0 * 512))
assert ext, "no extents parsed from filefrag"
mapped = hole = 0
for line in open(sys.argv[2]):
    m = re.search(r"dispatch R off=(\d+) bytes=(\d+) sector=(\d+)", line)
    if not m:
        continue
    off, n, sector = map(int, m.groups())
    want = None
    for lo, hi, phys in ext:
        if lo <= off < hi:
            want = (phys + off - lo) >> 9
    if want is None:
        # A hole: the extent before it, continued.
        lo, hi, phys = max(e for e in ext if e[0] <= off)
        goal = (phys + off - lo) >> 9
        assert sector == goal, f"hole at {off}: sector {sector}, goal {goal}"
        hole += 1
    else:
        assert sector == want, f"off {off}: daemon used {sector}, filefrag says {want}"
        mapped += 1
print(f"{mapped} mapped and {hole} hole reads checked")
assert mapped >= 100, f"only {mapped} mapped reads checked"
assert hole >= 1, "no read of the hole was checked"
PY

unmount_fs
check_log
