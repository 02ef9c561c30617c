# SPDX-License-Identifier: GPL-2.0-or-later
# -o ro: reads work, every change fails with EROFS, the backing directory
# is left as it was.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

echo hello >"$BACKING/f"
mkdir "$BACKING/d"
mount_fs -o ro
grep " $MNT " /proc/mounts | grep -q '[ ,]ro[ ,]' ||
	fail "not read-only in /proc/mounts: $(grep " $MNT " /proc/mounts)"
assert_eq hello "$(cat "$MNT/f")" "read on a read-only mount"
for what in 'echo x >>"$MNT/f"' 'echo x >"$MNT/new"' 'mkdir "$MNT/d2"' \
	'rm "$MNT/f"' 'mv "$MNT/f" "$MNT/g"' 'chmod 600 "$MNT/f"' \
	'truncate -s 0 "$MNT/f"' 'ln -s f "$MNT/l"'; do
	(eval "$what") 2>"$T/err" && fail "allowed on a read-only mount: $what"
	grep -q 'Read-only file system' "$T/err" || fail "$what: $(cat "$T/err")"
done
assert_eq hello "$(cat "$BACKING/f")" "backing file after the attempts"
assert_eq "d f" "$(ls "$BACKING" | tr '\n' ' ' | sed 's/ $//')" "backing names"
unmount_fs
check_log
