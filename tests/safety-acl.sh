#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# POSIX ACLs hold on the mount as on BACKING, for another user of an
# allow_other mount: an ACL that refuses what the mode bits allow refuses
# reads and writes, one that grants more grants it, a directory's default
# ACL is inherited (the umask then does not apply), getfacl shows the
# same, chmod moves the ACL mask, and an owner outside the file's group
# who sets an ACL loses the setgid bit.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require setpriv setfacl getfacl
chmod 755 "$T"		# let nobody reach BACKING and the mountpoint
: >"$BACKING/probe"
setfacl -m u:65534:r "$BACKING/probe" 2>/dev/null ||
	skip "the backing filesystem has no POSIX ACLs"
rm "$BACKING/probe"
mount_fs -o allow_other

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}
# same_acl PATH: getfacl says the same of MNT/PATH and BACKING/PATH.
same_acl() {
	assert_eq "$(getfacl -p --omit-header "$BACKING/$1")" \
		"$(getfacl -p --omit-header "$MNT/$1")" "getfacl of $1"
}

# Mode bits allow, the ACL refuses: reads, then writes.
echo secret >"$MNT/r"
chmod 644 "$MNT/r"
setfacl -m u:65534:--- "$MNT/r"
as_nobody cat "$BACKING/r" >/dev/null 2>&1 && fail "BACKING let nobody read"
as_nobody cat "$MNT/r" >/dev/null 2>&1 && fail "the mount let nobody read"
same_acl r
echo data >"$MNT/w"
chmod 666 "$MNT/w"
setfacl -m u:65534:r-- "$MNT/w"
as_nobody sh -c "echo x >>'$MNT/w'" 2>/dev/null &&
	fail "the mount let nobody write"
as_nobody sh -c ": >'$MNT/w'" 2>/dev/null && fail "the mount let nobody truncate"
assert_eq data "$(as_nobody cat "$MNT/w")" "content of w"
same_acl w

# The ACL grants what the mode bits do not.
echo granted >"$MNT/g"
chmod 600 "$MNT/g"
setfacl -m u:65534:r "$MNT/g"
assert_eq granted "$(as_nobody cat "$MNT/g")" "read granted by the ACL"
same_acl g

# A directory's default ACL is inherited by what nobody creates through
# the mount, as by what it creates in BACKING, whatever its umask.
mkdir "$MNT/d"
chmod 777 "$MNT/d"
setfacl -d -m u::rwx,u:65534:rwx,g::rx,o::- "$MNT/d"
same_acl d
as_nobody sh -c "umask 077; echo a >'$MNT/d/m'; echo b >'$BACKING/d/b'
	mkdir '$MNT/d/md' '$BACKING/d/bd'" || fail "nobody could not create in d"
assert_eq "$(getfacl -p --omit-header "$BACKING/d/b")" \
	"$(getfacl -p --omit-header "$MNT/d/m")" "inherited by a file"
assert_eq "$(getfacl -p --omit-header "$BACKING/d/bd")" \
	"$(getfacl -p --omit-header "$MNT/d/md")" "inherited by a directory"
getfacl -p --omit-header "$MNT/d/m" | grep -q '^user:nobody:rw' ||
	fail "no inherited entry: $(getfacl -p --omit-header "$MNT/d/m")"
assert_eq 660 "$(stat -c %a "$MNT/d/m")" "mode of an inherited file"
same_acl d/m
same_acl d/md

# chmod through the mount moves the mask, as on BACKING.
chmod g-w "$MNT/d/m"
chmod g-w "$BACKING/d/b"
assert_eq "$(getfacl -p --omit-header "$BACKING/d/b")" \
	"$(getfacl -p --omit-header "$MNT/d/m")" "mask after chmod"
same_acl d/m

# An owner outside the file's group sets an ACL: setgid goes, as in
# BACKING.
for p in "$MNT/sg" "$BACKING/sgb"; do
	: >"$p"
	chown 65534:4242 "$p"
	chmod 2775 "$p"
	as_nobody setfacl -m u:0:r "$p" || fail "nobody could not set an ACL"
done
assert_eq "$(stat -c %a "$BACKING/sgb")" "$(stat -c %a "$MNT/sg")" \
	"mode after an ACL set by an owner outside the group"
assert_eq 775 "$(stat -c %a "$BACKING/sg")" "setgid of sg in BACKING"
# Not the owner: refused.
as_nobody setfacl -m u:65534:rw "$MNT/r" 2>/dev/null &&
	fail "nobody set an ACL on root's file"
same_acl r

unmount_fs
check_log
