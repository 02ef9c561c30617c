#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# make install (into a DESTDIR): the pages and the sample configuration
# name the paths this build installs to (the configuration file, the
# module directory, as the program's --help states it), not /usr/local's;
# the configuration file is installed where there is none, an edited one
# survives a second make install and make uninstall, and the sample is
# always installed beside the documentation.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require make cmp
D=$T/dest
# Not a sub-make of make check's: no jobserver, no inherited flags.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$top_builddir" "$@" DESTDIR="$D"; }

mk install >"$T/install1" 2>&1 || fail "make install: $(tail -n 5 "$T/install1")"
page8=$(find "$D" -name fuse-iosched.8 -path '*/man8/*')
page5=$(find "$D" -name fuse-iosched.conf.5 -path '*/man5/*')
sample=$(find "$D" -name fuse-iosched.conf.sample)
[ -n "$page8" ] && [ -n "$page5" ] || fail "no pages installed: $(cd "$D" && find . | head)"
[ -n "$sample" ] || fail "no fuse-iosched.conf.sample installed"
case $sample in */doc/*) ;; *) fail "the sample is not under doc/: $sample" ;; esac

# The paths the pages name, formatted.
mandoc -Tascii "$page8" | col -b >"$T/p8"
mandoc -Tascii "$page5" | col -b >"$T/p5"
conf=$(sed -n '/^FILES/,/^[A-Z]/p' "$T/p8" | grep -oE '/[^ ]*/fuse-iosched\.conf$' | head -n 1)
moddir=$(sed -n '/^FILES/,/^[A-Z]/p' "$T/p8" | grep -oE '/[^ ]*/schedulers/?$' | head -n 1)
moddir=${moddir%/}
[ -n "$conf" ] && [ -n "$moddir" ] || fail "no paths under FILES: $(sed -n '/^FILES/,/^[A-Z]/p' "$T/p8")"
case $conf in
/usr/local/*) ;;
*) grep -l '/usr/local' "$T/p8" "$T/p5" "$D$conf" &&
	fail "/usr/local named by a build for $conf" ;;
esac
[ -f "$D$conf" ] || fail "the page names $conf; installed: $(cd "$D" && find . -name '*.conf*')"
[ -f "$D$moddir/deadline.so" ] || fail "the page names $moddir, which has no deadline.so"
# --help wraps a long default onto a line of its own.
"$FUSE_IOSCHED" --help | tr -s ' \n' '  ' | grep -qF "(default: $moddir)" ||
	fail "--help names another module directory than $moddir"
grep -q "^#module_dir = \"$moddir\"$" "$D$conf" ||
	fail "the configuration names another module directory: $(grep module_dir "$D$conf")"
grep -qE "^ +$conf$" "$T/p5" || fail "fuse-iosched.conf(5) does not name $conf"
grep -qF "$moddir" "$T/p5" || fail "fuse-iosched.conf(5) does not name $moddir"
grep -A2 -F -e '-o config=' "$T/p8" | grep -qF "$conf" ||
	fail "-o config= names another default file"
cmp -s "$sample" "$D$conf" || fail "the sample differs from the installed file"

# An edited configuration survives make install and make uninstall.
echo "scheduler = noop # edited" >>"$D$conf"
cp "$D$conf" "$T/edited"
mk install >"$T/install2" 2>&1 || fail "second make install: $(tail -n 5 "$T/install2")"
cmp -s "$T/edited" "$D$conf" || fail "make install replaced the edited $conf"
grep -q "keeping $D$conf" "$T/install2" || fail "make install did not say it kept it: $(cat "$T/install2")"
[ -f "$sample" ] || fail "no sample after the second install"
mk uninstall >"$T/uninstall" 2>&1 || fail "make uninstall: $(tail -n 5 "$T/uninstall")"
cmp -s "$T/edited" "$D$conf" || fail "make uninstall removed the edited $conf"
[ ! -e "$sample" ] || fail "make uninstall left the sample"
# Unedited, it goes with the rest.
mk install >/dev/null 2>&1 || fail "third make install"
cp "$sample" "$D$conf"
mk uninstall >/dev/null 2>&1 || fail "second make uninstall"
[ ! -e "$D$conf" ] || fail "make uninstall left the unedited $conf"
left=$(find "$D" -type f | head -n 5)
[ -z "$left" ] || fail "make uninstall left files: $left"
exit 0
