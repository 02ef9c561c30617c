# SPDX-License-Identifier: GPL-2.0-or-later
# Where a mount may go.  MOUNTPOINT inside BACKING (the mount would
# contain itself) is always refused; MOUNTPOINT equal to BACKING or above
# it (it would hide BACKING) and MOUNTPOINT already a mount point (a
# second daemon stacked on the first) are refused unless -o overmount:
# one line, exit status 1, nothing mounted; --print-config says the same.
# With -o overmount both mount, and the hidden backing is still served.
. "$top_srcdir/tests/lib.sh"
require_root

echo data >"$BACKING/f"
mkdir "$BACKING/sub" "$MNT/sub"
# refused WHAT PATTERN BACKING MOUNTPOINT [OPTIONS...]
refused() {
	what=$1 pat=$2 b=$3 m=$4
	shift 4
	for mode in -f --print-config; do
		st=0
		timeout 10 "$FUSE_IOSCHED" $mode -o "module_dir=$MODULE_DIR" \
			"$@" "$b" "$m" >"$T/out" 2>"$T/err" </dev/null || st=$?
		assert_eq 1 "$st" "$mode exit status for $what"
		assert_eq 1 "$(wc -l <"$T/err")" "$mode: lines on stderr for $what"
		grep -q "^fuse-iosched: .*$pat" "$T/err" ||
			fail "$mode, $what: $(cat "$T/err")"
	done
	[ "$(grep -c " $m fuse" /proc/mounts)" -eq "${expect_mounts:-0}" ] ||
		fail "mounted despite $what"
}

refused "BACKING as MOUNTPOINT" "would hide the backing directory" \
	"$BACKING" "$BACKING"
refused "MOUNTPOINT inside BACKING" "inside the backing directory" \
	"$BACKING" "$BACKING/sub"
refused "MOUNTPOINT inside BACKING, with overmount" \
	"inside the backing directory" "$BACKING" "$BACKING/sub" -o overmount
refused "BACKING inside MOUNTPOINT" "would hide the backing directory" \
	"$MNT/sub" "$MNT"
# The same directory through another name.
ln -s "$BACKING" "$T/link"
refused "BACKING as MOUNTPOINT through a link" \
	"would hide the backing directory" "$T/link" "$BACKING"

# A second daemon on a mount point: refused, the first one unharmed.
mount_fs
mkdir "$T/b2"
expect_mounts=1 refused "a mount point" "is already a mount point" \
	"$T/b2" "$MNT"
assert_eq data "$(cat "$MNT/f")" "the first mount after the refusal"

# -o overmount: on top of the mount, and over its own backing directory.
first=$DAEMON_PID
echo two >"$T/b2/g"
timeout 10 "$FUSE_IOSCHED" -o "module_dir=$MODULE_DIR,overmount" \
	"$T/b2" "$MNT" >>"$LOG" 2>&1 </dev/null ||
	fail "-o overmount did not mount over a mount point"
cleanup_push "fusermount3 -u '$MNT' 2>/dev/null"
assert_eq two "$(cat "$MNT/g")" "the mount on top"
fusermount3 -u "$MNT" || fail "cannot unmount the mount on top"
assert_eq data "$(cat "$MNT/f")" "the first mount, uncovered"
DAEMON_PID=$first
unmount_fs

mkdir "$T/self"
echo self >"$T/self/h"
timeout 10 "$FUSE_IOSCHED" -o "module_dir=$MODULE_DIR,overmount" \
	"$T/self" "$T/self" >>"$LOG" 2>&1 </dev/null ||
	fail "-o overmount did not mount over the backing directory"
cleanup_push "fusermount3 -u '$T/self' 2>/dev/null"
mountpoint -q "$T/self" || fail "not mounted over the backing directory"
assert_eq self "$(cat "$T/self/h")" "the hidden backing, through the mount"
echo new >"$T/self/k"
fusermount3 -u "$T/self" || fail "cannot unmount the mount over its backing"
assert_eq new "$(cat "$T/self/k")" "a file written over its own backing"
check_log
exit 0
