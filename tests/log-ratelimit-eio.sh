# SPDX-License-Identifier: GPL-2.0-or-later
# Under the writeback cache, with a backing file system that fails writes
# with EIO and cannot extend the file either (faultfs, tests/faultfs.c),
# every failed write used to log "cannot keep size": now a flood of them
# gives ten lines in 5 s and, with the next one after that, a line counting
# the rest.  The I/O errors still reach the writers (fsync fails).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3

cat >"$T/rules" <<'RULES'
write eio eio-*
truncate eio eio-*
RULES
faultfs_backing "$T/rules"
mount_fs -o writeback_cache=yes

errors() { awk '/^write/ { for (i = 1; i < NF; i++) if ($i == "errors") print $(i + 1) }' "$MNT/.control/stats"; }
lines() { grep -c 'cannot keep size' "$LOG" || true; }
# Files of 64 KiB in 4 KiB writes, each synced: their writeback fails.
fail_files() { # FIRST COUNT
	python3 - "$MNT" "$1" "$2" <<'PY' || fail "a failing write succeeded"
import os, sys
mnt, first, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for n in range(first, first + count):
    fd = os.open("%s/eio-%d" % (mnt, n), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for i in range(16):
            os.pwrite(fd, b"y" * 4096, i * 4096)
        os.fsync(fd)
        sys.exit("eio-%d: fsync succeeded" % n)
    except OSError:
        pass
    finally:
        try:
            os.close(fd)
        except OSError:
            pass
PY
}
start=$(date +%s)
fail_files 0 100
bound=$((10 * (($(date +%s) - start) / 5 + 2)))
echo "$(errors) failed writes, $(lines) 'cannot keep size' lines (at most $bound)"
[ "$(errors)" -ge 100 ] || fail "only $(errors) failed writes"
[ "$(lines)" -ge 1 ] && [ "$(lines)" -le "$bound" ] ||
	fail "$(lines) lines for $(errors) failed writes"
# The count comes with the first message after the interval.
n=100
i=0
until grep -q 'fs_inode_write_failed: [0-9]* similar messages suppressed$' "$LOG"; do
	i=$((i + 1))
	[ $i -lt 60 ] || fail "no count of the lines left out"
	sleep 0.5
	fail_files $n 1
	n=$((n + 1))
done
unmount_fs
check_log 'cannot keep size|writeback to inode|suppressed|error: -5'
