#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Schedulers built out of tree, the way a third party would: the header and
# fuse-iosched.pc installed into a DESTDIR, examples/ built with its own
# Makefile and that pkg-config and installed into the module directory, a
# C++ module (tests/modules/cxx.cpp) compiled beside it, and the header
# compiled after <linux/ioprio.h> and <linux/fs.h>, as C and as C++.  The
# daemon lists both modules, switches to each, and I/O through them reads
# back what was written.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require cc g++ make pkg-config cmp dd stat
require_root

# Install only what a module build needs: the header and the .pc file.
make -s -C "$top_builddir" install-fuseioschedincludeHEADERS \
	install-pkgconfigDATA DESTDIR="$T/dest" >"$T/install.log" 2>&1 ||
	fail "installing the header into a DESTDIR failed: $(cat "$T/install.log")"
pc=$(find "$T/dest" -name fuse-iosched.pc)
[ -n "$pc" ] || fail "no fuse-iosched.pc under the DESTDIR"
# pkg-config sees the DESTDIR as the root of the installed paths.
unset PKG_CONFIG_PATH
export PKG_CONFIG_LIBDIR=${pc%/*} PKG_CONFIG_SYSROOT_DIR=$T/dest
cflags=$(pkg-config --cflags fuse-iosched) || fail "pkg-config cannot read $pc"
case "$cflags" in
*"-I$T/dest/"*) ;;
*) fail "pkg-config --cflags gave '$cflags', not the DESTDIR's include" ;;
esac
moddir=$(pkg-config --variable=moduledir fuse-iosched)
case "$moddir" in
"$T/dest/"*) ;;
*) fail "moduledir '$moddir' is not under the DESTDIR" ;;
esac

# The example, with its own Makefile, in a copy (the source may be
# read-only under distcheck).
cp -R "$top_srcdir/examples" "$T/ex"
chmod -R u+w "$T/ex"
make -C "$T/ex" CFLAGS='-O2 -Wall -Wextra -Werror' >"$T/ex.log" 2>&1 ||
	fail "examples/ does not build: $(cat "$T/ex.log")"
make -C "$T/ex" install >>"$T/ex.log" 2>&1 ||
	fail "examples/ does not install: $(cat "$T/ex.log")"
[ -f "$moddir/sstf.so" ] || fail "make install did not put sstf.so in $moddir"

# A module in C++: found only if the header's extern "C" unmangles it.
g++ -std=c++11 -Wall -Wextra -Werror -pedantic -fPIC -shared $cflags \
	"$top_srcdir/tests/modules/cxx.cpp" -o "$moddir/cxx.so" 2>"$T/cxx.log" ||
	fail "the C++ module does not build: $(cat "$T/cxx.log")"

# The header after the kernel's, which define IOPRIO_CLASS_* themselves.
cat >"$T/hdr.c" <<'EOC'
#include <linux/ioprio.h>
#include <linux/fs.h>
#include <fuse-iosched/elevator.h>

int hdr_class(const struct elv_request *rq);
int hdr_class(const struct elv_request *rq)
{
	return IOSCHED_IOPRIO_CLASS(rq->ioprio) == ELV_IOPRIO_CLASS_BE &&
	       IOPRIO_CLASS_BE == 2;
}
EOC
cc -Wall -Wextra -Werror -c $cflags "$T/hdr.c" -o "$T/hdr.o" 2>"$T/hdr.log" ||
	fail "the header does not compile after <linux/*.h>: $(cat "$T/hdr.log")"
g++ -Wall -Wextra -Werror -x c++ -c $cflags "$T/hdr.c" -o "$T/hdr.o" \
	2>"$T/hdr.log" ||
	fail "the header does not compile as C++ after <linux/*.h>: $(cat "$T/hdr.log")"

# A file the mount has never seen: reading it must go through the queue.
dd if=/dev/urandom of="$BACKING/old" bs=64k count=16 status=none

mount_fs -o "module_dir=$moddir"
ctl=$MNT/.control/scheduler
list=$(tr -d '[]' <"$ctl") || fail "cannot read $ctl"
for m in sstf cxx; do
	case " $list " in
	*" $m "*) ;;
	*) fail "scheduler list '$list' does not name $m" ;;
	esac
done

for m in sstf cxx; do
	echo "$m" >"$ctl" || fail "cannot switch to $m"
	grep -q "\[$m\]" "$ctl" || fail "$m is not active: $(cat "$ctl")"
	io_works "$m"
	cmp "$BACKING/old" "$MNT/old" || fail "$m: reading an existing file differs"
	if [ "$m" = sstf ]; then
		# Its tunable, and its computed read-only value.
		assert_eq 500 "$(cat "$MNT/.control/iosched/expire_ms")" "sstf expire_ms"
		echo 20 >"$MNT/.control/iosched/expire_ms" || fail "cannot set expire_ms"
		assert_eq 444 "$(stat -c %a "$MNT/.control/iosched/queued")" "mode of queued"
		assert_eq 0 "$(cat "$MNT/.control/iosched/queued")" "sstf queued when idle"
	fi
done
compare_trees

unmount_fs
check_log
