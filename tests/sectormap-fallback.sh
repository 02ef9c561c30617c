# SPDX-License-Identifier: GPL-2.0-or-later
# On a filesystem without FIEMAP (tmpfs), every file gets its own
# contiguous run of sectors, far above any real device: consecutive reads
# of one file are consecutive in sectors, and two files do not overlap.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3

mount -t tmpfs -o size=64m fuse-iosched-test "$BACKING" || skip_env "cannot mount tmpfs"
cleanup_push 'mountpoint -q "$MNT" && { fusermount3 -u "$MNT" || umount -l "$MNT"; sleep 0.2; }; umount "$BACKING" 2>/dev/null || umount -l "$BACKING"'

mount_fs -o log=debug
head -c $((4 * 1024 * 1024)) /dev/urandom >"$BACKING/a"
head -c $((4 * 1024 * 1024)) /dev/urandom >"$BACKING/b"

read_file() { # NAME: the dispatch lines of a direct read of it
	n=$(wc -l <"$LOG")
	dd if="$MNT/$1" of=/dev/null bs=64k iflag=direct status=none
	sleep 0.2
	tail -n +"$((n + 1))" "$LOG" | grep 'dispatch R ' >"$T/$1.dispatch" || true
	[ -s "$T/$1.dispatch" ] || fail "no 'dispatch R' lines for $1"
}
read_file a
read_file b
# Again: the mapping is stable.
cp "$T/a.dispatch" "$T/a.first"
read_file a

python3 - "$T/a.first" "$T/b.dispatch" "$T/a.dispatch" <<'PY' || fail "fallback sectors"
import re, sys
def load(path):
    out = {}
    for line in open(path):
        m = re.search(r"dispatch R off=(\d+) bytes=(\d+) sector=(\d+)", line)
        if m:
            off, n, sector = map(int, m.groups())
            out[off] = (n, sector)
    return out
a, b, a2 = (load(p) for p in sys.argv[1:4])
for name, d in (("a", a), ("b", b)):
    assert len(d) >= 16, f"{name}: only {len(d)} reads"
    offs = sorted(d)
    base = d[offs[0]][1] - offs[0] // 512
    assert base >= 1 << 62, f"{name}: base {base} is not far away"
    for off in offs:
        assert d[off][1] == base + off // 512, f"{name}: off {off} not contiguous"
    d["base"] = base
# Two files: distinct runs that do not overlap over their 4 MiB.
span = 4 * 1024 * 1024 // 512
assert abs(a["base"] - b["base"]) >= span, "files a and b overlap"
for off, (n, sector) in a2.items():
    if off in a:
        assert a[off][1] == sector, f"a, off {off}: {a[off][1]} then {sector}"
print("a base", a["base"], "b base", b["base"])
PY

unmount_fs
check_log
