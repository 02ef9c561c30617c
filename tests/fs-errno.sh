#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Failing calls give the same errno on the mount as on the backing
# directory itself.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
mount_fs

# The same small tree twice: one reached directly, one through the mount.
for top in "$BACKING/direct" "$MNT/viamount"; do
	mkdir -p "$top/dir/sub" "$top/empty"
	echo x >"$top/file"
	echo y >"$top/other"
	ln -s file "$top/link"
done

cat >"$T/ops.py" <<'PY'
import errno, os, sys
r = sys.argv[1]
j = lambda *p: os.path.join(r, *p)
ops = [
    ("open missing", lambda: os.open(j("missing"), os.O_RDONLY)),
    ("mkdir existing", lambda: os.mkdir(j("dir"))),
    ("rmdir nonempty", lambda: os.rmdir(j("dir"))),
    ("open dir for write", lambda: os.open(j("dir"), os.O_WRONLY)),
    ("file as dir", lambda: os.open(j("file", "x"), os.O_RDONLY)),
    ("mkdir under file", lambda: os.mkdir(j("file", "x"))),
    ("unlink dir", lambda: os.unlink(j("dir"))),
    ("rmdir file", lambda: os.rmdir(j("file"))),
    ("rename into itself", lambda: os.rename(j("dir"), j("dir", "sub", "x"))),
    ("rename file over dir", lambda: os.rename(j("file"), j("empty"))),
    ("rename dir over file", lambda: os.rename(j("empty"), j("file"))),
    ("rename dir over nonempty", lambda: os.rename(j("empty"), j("dir"))),
    ("link dir", lambda: os.link(j("dir"), j("dirlink"))),
    ("link existing", lambda: os.link(j("file"), j("other"))),
    ("create excl", lambda: os.open(j("file"), os.O_CREAT | os.O_EXCL | os.O_RDWR)),
    ("readlink file", lambda: os.readlink(j("file"))),
    ("symlink existing", lambda: os.symlink("t", j("file"))),
    ("truncate dir", lambda: os.truncate(j("dir"), 0)),
    ("rmdir missing", lambda: os.rmdir(j("missing"))),
    ("unlink missing", lambda: os.unlink(j("missing"))),
    ("long name", lambda: os.mkdir(j("n" * 300))),
    ("nofollow link", lambda: os.open(j("link"), os.O_RDONLY | os.O_NOFOLLOW)),
    ("directory flag on file", lambda: os.open(j("file"), os.O_RDONLY | os.O_DIRECTORY)),
    ("getxattr missing", lambda: os.getxattr(j("file"), "user.missing")),
    ("listdir file", lambda: os.listdir(j("file"))),
]
for name, op in ops:
    try:
        op()
        res = "ok"
    except OSError as e:
        res = errno.errorcode.get(e.errno, str(e.errno))
    print(f"{name}: {res}")
PY
python3 "$T/ops.py" "$BACKING/direct" >"$T/want"
python3 "$T/ops.py" "$MNT/viamount" >"$T/got"
diff "$T/want" "$T/got" || fail "errno differs between backing and mount"
grep -q '^open missing: ENOENT$' "$T/got" || fail "ENOENT expected"
grep -q '^rmdir nonempty: ENOTEMPTY$' "$T/got" || fail "ENOTEMPTY expected"

# Renaming out of the mount is a cross-device rename.
python3 - "$MNT/viamount/file" "$T/outside" <<'PY' || fail "EXDEV"
import errno, os, sys
try:
    os.rename(sys.argv[1], sys.argv[2])
    raise SystemExit("rename out of the mount succeeded")
except OSError as e:
    assert e.errno == errno.EXDEV, e
PY

unmount_fs
check_log
