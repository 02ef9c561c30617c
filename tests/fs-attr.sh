#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# chmod, chown, touch -d, utimes with UTIME_NOW/OMIT, statfs.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
mount_fs

echo x >"$MNT/f"
chmod 4751 "$MNT/f"
assert_eq 4751 "$(stat -c %a "$BACKING/f")" "chmod"
chown 1234:5678 "$MNT/f"
assert_eq 1234:5678 "$(stat -c %u:%g "$BACKING/f")" "chown"
chown :42 "$MNT/f"
assert_eq 1234:42 "$(stat -c %u:%g "$BACKING/f")" "chgrp only"
touch -d '2001-02-03 04:05:06' "$MNT/f"
assert_eq 981173106 "$(stat -c %Y "$BACKING/f")" "touch -d mtime"
assert_eq 981173106 "$(stat -c %X "$BACKING/f")" "touch -d atime"
touch -m -d '2002-01-01 00:00:00' "$MNT/f"
assert_eq 981173106 "$(stat -c %X "$BACKING/f")" "atime omitted"
assert_eq 1009843200 "$(stat -c %Y "$BACKING/f")" "mtime only"
before=$(date +%s)
touch "$MNT/f"
[ "$(stat -c %Y "$BACKING/f")" -ge "$before" ] || fail "touch (UTIME_NOW)"

# Symlinks: times and owner of the link itself, never of its target.
ln -s f "$MNT/l"
touch -h -d '2003-01-01 00:00:00' "$MNT/l"
assert_eq 1041379200 "$(stat -c %Y "$BACKING/l")" "touch -h"
[ "$(stat -c %Y "$BACKING/f")" -ge "$before" ] || fail "touch -h changed the target"
chown -h 99:99 "$MNT/l"
assert_eq 99:99 "$(stat -c %u:%g "$BACKING/l")" "chown -h"
assert_eq 1234:42 "$(stat -c %u:%g "$BACKING/f")" "chown -h changed the target"

# Attributes seen on the mount match the backing ones.
for p in f l; do
	assert_eq "$(stat -c '%a %u %g %s %Y %h %F' "$BACKING/$p")" \
		"$(stat -c '%a %u %g %s %Y %h %F' "$MNT/$p")" "stat of $p"
done

# Changes made to the backing file show through.
chmod 600 "$BACKING/f"
sleep 1.1	# past the attribute cache timeout
assert_eq 600 "$(stat -c %a "$MNT/f")" "chmod in backing"

# statfs reports the backing filesystem.
assert_eq "$(stat -f -c '%b %S %c' "$BACKING")" "$(stat -f -c '%b %S %c' "$MNT")" \
	"statfs"
df "$MNT" >/dev/null || fail "df"

unmount_fs
check_log
