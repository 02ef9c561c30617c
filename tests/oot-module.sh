#!/bin/bash
# A scheduler built out of tree, against the installed header only, the way
# a third party would: compiled with the flags from fuse-iosched.pc, loaded
# by the daemon from -o module_dir, listed in .control/scheduler, switched
# to, and serving I/O.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require cc pkg-config cmp dd
require_root
[ -f "$top_builddir/fuse-iosched.pc" ] || skip_env "fuse-iosched.pc is not built"

# The built .pc points at the install prefix; aim it at the source tree
# instead, which holds the same header, so no install is needed.
mkdir "$T/pkgconfig" "$T/mod"
sed "s|^includedir=.*|includedir=$top_srcdir/include|" \
	"$top_builddir/fuse-iosched.pc" >"$T/pkgconfig/fuse-iosched.pc"
export PKG_CONFIG_PATH="$T/pkgconfig"
cflags=$(pkg-config --cflags fuse-iosched) || fail "pkg-config cannot read fuse-iosched.pc"
case "$cflags" in
*"-I$top_srcdir/include"*) ;;
*) fail "pkg-config --cflags gave '$cflags', without $top_srcdir/include" ;;
esac

cp "$top_srcdir/tests/modules/oot.c" "$T/mod/"
(cd "$T/mod" && cc -shared -fPIC $(pkg-config --cflags fuse-iosched) oot.c -o oot.so) ||
	fail "the out-of-tree module does not build"
rm "$T/mod/oot.c"

# A file the mount has never seen: reading it must go through the queue.
dd if=/dev/urandom of="$BACKING/old" bs=64k count=16 status=none

mount_fs -o "module_dir=$T/mod"
ctl=$MNT/.control/scheduler
list=$(cat "$ctl") || fail "cannot read $ctl"
case " $list " in
*" oot "*|*" [oot] "*) ;;
*) fail "scheduler list '$list' does not name oot" ;;
esac

echo oot >"$ctl" || fail "cannot switch to oot"
list=$(cat "$ctl")
case " $list " in
*" [oot] "*) ;;
*) fail "oot is not active after the switch: '$list'" ;;
esac

# I/O through the new scheduler: write, read back, compare with the backing.
dd if=/dev/urandom of="$T/data" bs=64k count=16 status=none
dd if="$T/data" of="$MNT/file" bs=16k conv=fsync status=none ||
	fail "write through oot failed"
cmp "$T/data" "$BACKING/file" || fail "backing file differs from what was written"
cmp "$T/data" "$MNT/file" || fail "read through oot differs"
cmp "$BACKING/old" "$MNT/old" || fail "reading an existing file through oot differs"
compare_trees

unmount_fs
check_log
