#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# open(O_TRUNC) by another user who may write a root-owned setuid/setgid
# file clears the bits as a write does, and as BACKING's file system does:
# setuid always, setgid when group-execute is set or the caller is outside
# the file's group (the daemon's rule, daemon/killpriv.c, is the VFS's;
# the kernel's own rule for FUSE kept 6767 at 2767).  Root's own O_TRUNC
# keeps them.  With and without writeback_cache.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require setpriv
chmod 755 "$T"		# let nobody reach BACKING and the mountpoint

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# trunc AS MODE: the mode of a root file of MODE after AS's O_TRUNC,
# through the mount and in BACKING, must agree.
trunc() {
	for p in "$MNT/m$1$2" "$BACKING/b$1$2"; do
		echo data >"$p"
		chmod "$2" "$p"
		if [ "$1" = root ]; then
			sh -c ": >'$p'" || fail "root could not truncate $p"
		else
			as_nobody sh -c ": >'$p'" || fail "nobody could not truncate $p"
		fi
		assert_eq 0 "$(stat -c %s "$p")" "size of $p after O_TRUNC"
	done
	assert_eq "$(stat -c %a "$BACKING/b$1$2")" "$(stat -c %a "$MNT/m$1$2")" \
		"mode $2 after $1's O_TRUNC"
}

for opt in "" writeback_cache; do
	mount_fs -o allow_other${opt:+,$opt}
	trunc nobody 6777
	assert_eq 777 "$(stat -c %a "$MNT/mnobody6777")" "6777 after O_TRUNC"
	# What a write leaves of 6767, O_TRUNC leaves too.
	for p in "$MNT/t6767" "$MNT/w6767"; do
		echo data >"$p"
		chmod 6767 "$p"
	done
	as_nobody sh -c ": >'$MNT/t6767'; echo x >>'$MNT/w6767'" ||
		fail "nobody could not write 6767 files"
	assert_eq "$(stat -c %a "$MNT/w6767")" "$(stat -c %a "$MNT/t6767")" \
		"6767 after O_TRUNC, and after a write"
	assert_eq 767 "$(stat -c %a "$MNT/t6767")" "6767 after O_TRUNC"
	trunc nobody 4777
	trunc nobody 2777
	trunc root 6777
	assert_eq 6777 "$(stat -c %a "$MNT/mroot6777")" "root's O_TRUNC"
	# Writes already cleared them; they still do.
	echo data >"$MNT/w"
	chmod 6777 "$MNT/w"
	as_nobody sh -c "echo more >>'$MNT/w'" || fail "nobody could not append"
	assert_eq 777 "$(stat -c %a "$MNT/w")" "6777 after a write"
	unmount_fs
	rm -f "$BACKING"/*
done
check_log
