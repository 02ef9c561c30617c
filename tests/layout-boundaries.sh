#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# libcore is a library of its own: no file of lib/ (or of the scheduler ABI
# it includes) includes a FUSE or libevent header or a daemon or replay
# one, and neither fuse-iosched-replay nor the unit tests of the core have
# libfuse or libevent among their NEEDED libraries.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require readelf

bad=$(grep -EHn '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](fuse3?/|fuse[_.]|cuse_|event2/|event\.h|evhttp\.h|evutil\.h|daemon\.h|replay\.h)' \
	"$top_srcdir"/lib/*.[ch] "$top_srcdir"/include/fuse-iosched/*.h \
	"$top_srcdir"/schedulers/noop.c || true)
[ -z "$bad" ] || fail "a core file includes a FUSE, libevent or daemon header:
$bad"

# The programs that link libcore alone (test_log and test_fs_inode test
# daemon files, which need libfuse).
progs="replay/fuse-iosched-replay tests/unit/replay"
for t in "$top_builddir"/tests/unit/test_*; do
	case $t in
	*.c | *.h | *.o | *.log | *.trs | */test_log | */test_fs_inode) ;;
	*) [ -x "$t" ] && progs="$progs tests/unit/${t##*/}" ;;
	esac
done
checked=0
for p in $progs; do
	f=$top_builddir/$p
	# A libtool wrapper script keeps the real program in .libs/.
	[ -f "${f%/*}/.libs/${f##*/}" ] && f=${f%/*}/.libs/${f##*/}
	[ -f "$f" ] || fail "$p is not built"
	needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
	case $needed in
	*libfuse* | *libevent*)
		fail "$p links $(echo "$needed" | grep -E 'libfuse|libevent' | tr '\n' ' ')" ;;
	esac
	checked=$((checked + 1))
done
[ "$checked" -ge 10 ] || fail "only $checked programs checked"
exit 0
