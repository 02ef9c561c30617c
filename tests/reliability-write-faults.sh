#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Write errors from below reach the application, with and without the
# writeback cache: BACKING is a faultfs mount (tests/faultfs.c) that fails
# writes past 512 KiB of chosen files with ENOSPC, with EIO, or with a
# short count.  A 1 MiB write, fsync and close must report the error at
# one of the three; the write error count in .control/stats rises; and the
# size the mount shows is the backing file's.  A read error reaches read.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3

cat >"$T/rules" <<'RULES'
write enospc enospc-* after=524288
write eio eio-* after=524288
write short short-* after=524288
read eio readerr-* after=4096
RULES
faultfs_backing "$T/rules"
head -c 65536 /dev/urandom >"$T/src/readerr-1"

errors() { awk '/^write/ { for (i = 1; i < NF; i++) if ($i == "errors") print $(i + 1) }' "$MNT/.control/stats"; }

for wb in no yes; do
	mount_fs -o "writeback_cache=$wb"
	for kind in enospc eio short; do
		before=$(errors)
		f=$kind-$wb
		python3 - "$MNT/$f" "$kind" <<'PY' || fail "$kind, writeback_cache=$wb"
import errno, os, sys
path, kind = sys.argv[1], sys.argv[2]
want = errno.ENOSPC if kind == "enospc" else errno.EIO
fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
data, done, seen = b"y" * (1 << 20), 0, None
try:
    while done < len(data):
        done += os.write(fd, data[done:])
    os.fsync(fd)
except OSError as e:
    seen = e.errno
try:
    os.close(fd)
except OSError as e:
    seen = seen or e.errno
if seen != want:
    sys.exit("%s: expected %s at write, fsync or close, got %s" %
             (path, errno.errorcode[want], seen and errno.errorcode[seen]))
PY
		[ "$(errors)" -gt "$before" ] ||
			fail "$kind, writeback_cache=$wb: stats errors stayed at $before"
		assert_eq "$(stat -c %s "$T/src/$f")" "$(stat -c %s "$MNT/$f")" \
			"$kind, writeback_cache=$wb: size on the mount"
		cmp "$T/src/$f" "$MNT/$f" ||
			fail "$kind, writeback_cache=$wb: mount and backing differ"
	done
	python3 - "$MNT/readerr-1" <<'PY' || fail "read error, writeback_cache=$wb"
import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    os.pread(fd, 65536, 0)
    got = os.pread(fd, 4096, 8192)
    sys.exit("read past the fault returned %d bytes" % len(got))
except OSError as e:
    if e.errno != errno.EIO:
        sys.exit("read: %s, not EIO" % e)
finally:
    os.close(fd)
PY
	unmount_fs
	rm -f "$T/src/"*-$wb
done
check_log 'No space left on device|Input/output error'
