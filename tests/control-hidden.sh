# SPDX-License-Identifier: GPL-2.0-or-later
# .control is reachable by path but hidden from the root's readdir, shadows
# a backing entry of that name, and has sysfs-like attributes.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

mkdir "$BACKING/.control" "$BACKING/dir"
echo backing >"$BACKING/.control/scheduler"
echo secret >"$BACKING/.control/only-in-backing"
echo a >"$BACKING/a"
echo sub >"$BACKING/dir/.control"

mount_fs
C=$MNT/.control

# Hidden from the root's listing, from find and from du.
ls -a "$MNT" >"$T/ls"
grep -qx '\.control' "$T/ls" && fail ".control listed by ls -a: $(cat "$T/ls")"
grep -qx 'a' "$T/ls" || fail "a not listed by ls -a"
find "$MNT" | grep -q "^$MNT/\.control" && fail "find walked into .control"
# ... and readdirplus (ls -l) of the root too.
ls -la "$MNT" | grep -q '\.control' && fail ".control listed by ls -la"

# Reachable, with our files only: the backing directory is shadowed.
assert_eq "backing_device backing_io iosched log nr_requests pid scheduler stats trace" "$(ls "$C" | tr '\n' ' ' | sed 's/ $//')" \
	"ls .control"
assert_eq ". .. backing_device backing_io iosched log nr_requests pid scheduler stats trace" \
	"$(ls -a "$C" | tr '\n' ' ' | sed 's/ $//')" "ls -a .control"
[ -e "$C/only-in-backing" ] && fail "a backing file shows through .control"
grep -q '\[' "$C/scheduler" || fail "scheduler is the backing file"
assert_eq backing "$(cat "$BACKING/.control/scheduler")" "backing file untouched"
# ls -l uses readdirplus and stat: both work.
ls -la "$C" >"$T/lsl" || fail "ls -la .control failed"
[ "$(grep -c '^-' "$T/lsl")" -eq 8 ] || fail "ls -la .control: $(cat "$T/lsl")"
[ "$(grep -c '^d' "$T/lsl")" -eq 3 ] || fail "ls -la .control: $(cat "$T/lsl")"
# Only the root's .control is ours.
assert_eq sub "$(cat "$MNT/dir/.control")" "dir/.control, a backing file"

# Attributes.
uid=$(id -u)
gid=$(id -g)
# Three links: its own ".", its entry in the root and iosched/.."
assert_eq "755 d $uid $gid 3" "$(stat -c '%a %F %u %g %h' "$C" | sed 's/directory/d/')" \
	".control attributes"
assert_eq "755 d $uid $gid 2" \
	"$(stat -c '%a %F %u %g %h' "$C/iosched" | sed 's/directory/d/')" \
	"iosched attributes"
for f in scheduler nr_requests; do
	assert_eq "644 $uid $gid 1 4096" "$(stat -c '%a %u %g %h %s' "$C/$f")" "$f attributes"
done
for f in stats backing_io backing_device pid; do
	assert_eq "444 $uid $gid 1 4096" "$(stat -c '%a %u %g %h %s' "$C/$f")" "$f attributes"
done
# Others' file names and errors, and every user's I/O: the owner's only.
for f in log trace; do
	assert_eq "400 $uid $gid 1 4096" "$(stat -c '%a %u %g %h %s' "$C/$f")" "$f attributes"
done
# Stable inode numbers, distinct from one another.
i1=$(stat -c %i "$C/scheduler" "$C/nr_requests" "$C/stats" "$C/trace" "$C" "$C/iosched" \
	"$C/backing_io" "$C/backing_device" "$C/log" "$C/pid" "$C"/iosched/* |
	sort -u | wc -l)
assert_eq $((10 + $(ls "$C/iosched" | wc -l))) "$i1" "distinct inode numbers"
assert_eq "$(stat -c %i "$C/scheduler")" "$(stat -c %i "$C/scheduler")" "stable st_ino"
m1=$(stat -c %Y "$C/scheduler")
echo noop >"$C/scheduler"
assert_eq "$m1" "$(stat -c %Y "$C/scheduler")" "mtime after a write"
echo deadline >"$C/scheduler"

# A lookup of a name that does not exist.
[ -e "$C/nope" ] && fail "$C/nope exists"
cat "$C/nope" 2>"$T/err" && fail "cat of a missing control file worked"
grep -q 'No such file' "$T/err" || fail "missing control file: $(cat "$T/err")"
# The control files are not directories.
ls "$C/scheduler/x" 2>"$T/err" && fail "lookup inside a control file worked"
grep -q 'Not a directory' "$T/err" || fail "lookup inside scheduler: $(cat "$T/err")"

unmount_fs
check_log
