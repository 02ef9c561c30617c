#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# listxattr through the mount lists trusted.* names to exactly the callers
# BACKING's file system lists them to, those with CAP_SYS_ADMIN: root, not
# root without the capability, not another user, not another user who is
# root of a user namespace of its own.  Values stay refused.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require setpriv setfattr getfattr python3
chmod 755 "$T"		# let nobody reach BACKING and the mountpoint
: >"$BACKING/probe"
setfattr -n trusted.probe -v 1 "$BACKING/probe" 2>/dev/null ||
	skip "the backing filesystem has no trusted.* attributes"
rm "$BACKING/probe"
mount_fs -o allow_other

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

echo x >"$MNT/f"
mkdir "$MNT/d"
for p in "$MNT/f" "$MNT/d"; do
	setfattr -n trusted.secret -v s "$p"
	setfattr -n user.shown -v u "$p"
done
# Enough names that the list passes Python's first guess of 256 bytes
# (the size probe and ERANGE), with a trusted.* one in the middle.
i=0
while [ $i -lt 20 ]; do
	setfattr -n "user.name-long-enough-to-count-$i" -v v "$MNT/f"
	[ $i -eq 10 ] && setfattr -n trusted.middle -v m "$MNT/f"
	i=$((i + 1))
done
chmod 644 "$MNT/f"

# names COMMAND...: the attribute names of $p, as COMMAND (a caller)
# sees them (getfattr asks for the size first).
names() { "$@" getfattr --absolute-names -m - "$p" | sed 1d | sort | tr '\n' ' '; }

# check WHO SEES COMMAND...: the names COMMAND (a caller) sees through the
# mount are those it sees in BACKING, with trusted.* ones or not.
check() {
	who=$1 sees=$2; shift 2
	for f in f d; do
		p=$BACKING/$f; b=$(names "$@") || fail "$who: list of $p"
		p=$MNT/$f; m=$(names "$@") || fail "$who: list of $p"
		assert_eq "$b" "$m" "names of $f for $who"
		case " $m " in
		*" trusted.secret "*) [ "$sees" = yes ] ||
			fail "$who sees trusted.* names of $f: $m" ;;
		*) [ "$sees" = no ] || fail "$who does not see trusted.secret of $f" ;;
		esac
		case " $m " in
		*" user.shown "*) ;;
		*) fail "$who does not see user.shown of $f: $m" ;;
		esac
	done
}

check root yes env
# Python guesses a size and grows it on ERANGE.
assert_eq "$(python3 -c 'import os, sys; print(sorted(os.listxattr(sys.argv[1])))' "$BACKING/f")" \
	"$(python3 -c 'import os, sys; print(sorted(os.listxattr(sys.argv[1])))' "$MNT/f")" \
	"listxattr of f for root, from Python"
check "root without CAP_SYS_ADMIN" no setpriv --bounding-set=-sys_admin
check nobody no as_nobody
# getfattr's own size probe and list, too.
assert_eq "$(as_nobody getfattr --absolute-names -d "$BACKING/f" | tail -n +2)" \
	"$(as_nobody getfattr --absolute-names -d "$MNT/f" | tail -n +2)" \
	"getfattr -d for nobody"
as_nobody getfattr --absolute-names -n trusted.secret "$MNT/f" \
	>/dev/null 2>&1 && fail "nobody read a trusted.* value"
# Root of a user namespace of its own has every capability there, and
# none over the mount.  Where unprivileged user namespaces are off, there
# is nothing to try.
if as_nobody unshare -Ur true 2>/dev/null; then
	check "nobody as root of its user namespace" no as_nobody unshare -Ur
else
	echo "unprivileged user namespaces are off: not tried"
fi

unmount_fs
check_log
