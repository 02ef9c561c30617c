# SPDX-License-Identifier: GPL-2.0-or-later
# Fresh writes (ext4's delayed allocation: nothing placed before
# writeback) get an estimated sector within the backing device, not one
# far above it, and once placed most land near their estimate: a copied
# tree of many small files, and one large file written in one go.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require mkfs.ext4 losetup python3

SRC=${FRESH_SRC:-/usr/include/linux}
[ -d "$SRC" ] || skip_env "needs $SRC"
truncate -s 1G "$T/img"
mkfs.ext4 -q -F "$T/img" || skip_env "mkfs.ext4 failed"
mount -o loop "$T/img" "$BACKING" || skip_env "cannot mount a loop device"
cleanup_push 'mountpoint -q "$MNT" && { fusermount3 -u "$MNT" || umount -l "$MNT"; sleep 0.2; }; umount "$BACKING" 2>/dev/null || umount -l "$BACKING"'
dev_sectors=$(($(blockdev --getsize64 "$(findmnt -n -o SOURCE "$BACKING")") / 512))

mount_fs -o log=debug
timeout 120 cat "$MNT/.control/trace" >"$T/trace" & TR=$!
cleanup_push "kill $TR 2>/dev/null"
wait_for "the trace's header" grep -q '^# fuse-iosched trace' "$T/trace"
lines_before=$(wc -l <"$LOG")

cp -a "$SRC" "$MNT/tree" || fail "cp -a failed"
dd if=/dev/urandom of="$MNT/big" bs=1M count=32 status=none
# The marker read: once the trace has it, it has every write before it.
head -c 4096 "$MNT/big" >/dev/null
python3 -c 'import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
os.preadv(fd, [mmap.mmap(-1, 4096)], 0)' "$MNT/big" || fail "marker read"
wait_for "the marker in the trace" grep -Eq ' C +RS? .*\[python3\]' "$T/trace"
kill $TR 2>/dev/null || true
tail -n +"$((lines_before + 1))" "$LOG" | grep 'dispatch W ' >"$T/writes" ||
	fail "no 'dispatch W' debug lines in the log"
# Only now is anything placed.
sync

python3 - "$T/trace" "$T/writes" "$BACKING" "$dev_sectors" <<'PY' ||
import fcntl, os, re, struct, sys
trace, writes, backing, dev = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

# Every request the trace shows lies within the device.
n = 0
for line in open(trace):
    f = line.split()
    if len(f) > 9 and f[5] in ("Q", "D", "C") and f[8] == "+":
        sector, nr = int(f[7]), int(f[9])
        assert sector + nr <= dev, f"beyond the device ({dev}): {line}"
        n += 1
assert n > 1000, f"only {n} trace lines checked"

# Where ext4 put each write: FIEMAP of the backing files, by inode.
FIEMAP = 0xC020660B
def extents(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        count = 512
        buf = bytearray(32 + 56 * count)
        struct.pack_into("=QQIIII", buf, 0, 0, 2**64 - 1, 0, 0, count, 0)
        fcntl.ioctl(fd, FIEMAP, buf)
        mapped = struct.unpack_from("=I", buf, 20)[0]
        out = []
        for i in range(mapped):
            lo, ph, ln = struct.unpack_from("=QQQ", buf, 32 + 56 * i)
            out.append((lo, ph, ln))
        return out
    finally:
        os.close(fd)
files = {}
for root, _, names in os.walk(backing):
    for name in names:
        p = os.path.join(root, name)
        if os.path.isfile(p) and not os.path.islink(p):
            files[os.stat(p).st_ino] = p

errors = []
for line in open(writes):
    m = re.search(r"off=(\d+) bytes=\d+ sector=(\d+) ino=(\d+)", line)
    if not m or int(m.group(3)) not in files:
        continue
    off, est, ino = map(int, m.groups())
    real = None
    for lo, ph, ln in extents(files[ino]):
        if lo <= off < lo + ln:
            real = (ph + off - lo) // 512
    if real is not None:
        errors.append(abs(real - est) * 512)
assert len(errors) > 100, f"only {len(errors)} writes compared"
errors.sort()
MiB = 1 << 20
within = lambda d: 100 * sum(e <= d for e in errors) // len(errors)
print(f"{len(errors)} fresh writes: {within(4 * MiB)} % placed within 4 MiB "
      f"of their estimate, {within(16 * MiB)} % within 16 MiB; median "
      f"error {errors[len(errors) // 2] / MiB:.1f} MiB, on a "
      f"{dev * 512 // MiB} MiB device")
assert within(16 * MiB) >= 50, "most writes land far from their estimate"
PY
	fail "fresh-write sectors are off"
unmount_fs
check_log
