#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# With allow_other, what a user creates belongs to that user, setgid
# directories pass their group on, the caller's umask applies once, and
# default_permissions refuses what the user may not do.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require setpriv
chmod 755 "$T"		# let nobody reach the mountpoint
mount_fs -o allow_other

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

mkdir -m 1777 "$MNT/pub"
as_nobody sh -c "umask 022; echo hi >$MNT/pub/f; mkdir $MNT/pub/d; mkfifo $MNT/pub/p; ln -s f $MNT/pub/l" ||
	fail "nobody could not create files"
for p in f d p l; do
	assert_eq 65534:65534 "$(stat -c %u:%g "$BACKING/pub/$p")" "owner of $p"
done
assert_eq 644 "$(stat -c %a "$BACKING/pub/f")" "umask 022 applied once"
as_nobody sh -c "umask 002; : >$MNT/pub/g" || fail "nobody umask 002"
assert_eq 664 "$(stat -c %a "$BACKING/pub/g")" "umask 002 applied once"

# A setgid directory hands its group to new entries.
mkdir -m 2777 "$MNT/sg"
chgrp 4242 "$MNT/sg"
as_nobody sh -c ": >$MNT/sg/f; mkdir $MNT/sg/d" || fail "create in setgid dir"
assert_eq 65534:4242 "$(stat -c %u:%g "$BACKING/sg/f")" "setgid file group"
assert_eq 65534:4242 "$(stat -c %u:%g "$BACKING/sg/d")" "setgid dir group"

# Supplementary groups come along: the backing fs checks them too.
mkdir -m 0770 "$MNT/grp"
chgrp 4242 "$MNT/grp"
setpriv --reuid=65534 --regid=65534 --groups=4242 sh -c ": >$MNT/grp/f" ||
	fail "supplementary group did not grant access"
assert_eq 65534:65534 "$(stat -c %u:%g "$BACKING/grp/f")" "owner in group dir"
as_nobody sh -c ": >$MNT/grp/g" 2>/dev/null && fail "created without the group"

# Permissions are enforced.
echo root >"$MNT/rootfile"
as_nobody sh -c "echo x >>$MNT/rootfile" 2>/dev/null && fail "nobody wrote a 644 root file"
as_nobody sh -c ": >$MNT/new" 2>/dev/null && fail "nobody created in a 755 root dir"
as_nobody sh -c "rm $MNT/pub/f" || fail "owner could not remove in a sticky dir"
echo r >"$MNT/pub/rootowned"
as_nobody sh -c "rm -f $MNT/pub/rootowned" 2>/dev/null || true
[ -e "$BACKING/pub/rootowned" ] || fail "sticky bit not enforced"
assert_eq root "$(cat "$BACKING/rootfile")" "root file unchanged"

# Root's own creations stay root's; root in another group creates in it.
assert_eq 0:0 "$(stat -c %u:%g "$BACKING/rootfile")" "root owner"
setpriv --regid=4243 --clear-groups sh -c ": >$MNT/pub/rootgrp" ||
	fail "root in group 4243 could not create"
assert_eq 0:4243 "$(stat -c %u:%g "$BACKING/pub/rootgrp")" \
	"group of root's file in group 4243"

unmount_fs
check_log
