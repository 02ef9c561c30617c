#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# FUSE_HANDLE_KILLPRIV_V2 (daemon/killpriv.c).  The kernel no longer asks
# for security.capability before every write (a GETXATTR round trip each):
# 64 small writes, as root and as another user, cost a few at most.  And
# the daemon now clears what the kernel left to it as BACKING's own file
# system does: another user's write, O_TRUNC, truncate, fallocate,
# copy_file_range and chgrp drop setuid, and setgid when the group may
# execute or the user is outside the file's group (2767 too); root's
# writes keep them, root's chown drops them as BACKING's does.
# security.capability goes too, also when the kernel no longer asks
# whether there is one.  With and without writeback_cache.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require setpriv python3 setcap getcap fallocate truncate dd
require_nobody_python
chmod 755 "$T"		# let nobody reach BACKING and the mountpoint

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# getxattrs AS: GETXATTR requests while AS makes 64 writes of 512 bytes.
getxattrs() {
	n=$(wc -l <"$LOG")
	if [ "$1" = root ]; then
		dd if=/dev/zero of="$MNT/dd" bs=512 count=64 conv=notrunc \
			status=none || fail "root's dd failed"
	else
		as_nobody dd if=/dev/zero of="$MNT/dd" bs=512 count=64 \
			conv=notrunc status=none || fail "nobody's dd failed"
	fi
	tail -n "+$((n + 1))" "$LOG" | grep -c 'opcode: GETXATTR' || true
}

# change OP FILE: OP, as nobody, on FILE (root's, writable by others).
change() {
	case $1 in
	write)	as_nobody sh -c 'echo x >>"$1"' sh "$2" ;;
	otrunc)	as_nobody sh -c ': >"$1"' sh "$2" ;;
	truncate) as_nobody truncate -s 2 "$2" ;;
	fallocate) as_nobody fallocate -l 8192 "$2" ;;
	copy)	as_nobody "$NOBODY_PY" -c 'import os, sys
src = os.open(sys.argv[1], os.O_RDONLY)
dst = os.open(sys.argv[2], os.O_WRONLY)
assert os.copy_file_range(src, dst, 4, 0, 0) == 4' "${2%/*}/src" "$2" ;;
	esac || fail "nobody's $1 of $2 failed"
}

for opt in "" writeback_cache; do
	: >"$LOG"
	mount_fs -d -o "config=$EMPTY_CONF,allow_other${opt:+,$opt}"
	echo data >"$BACKING/src"	# to copy from, on each side
	chmod 644 "$BACKING/src"
	: >"$MNT/dd"
	chmod 666 "$MNT/dd"
	for who in root nobody; do
		g=$(getxattrs $who)
		echo "${opt:-writethrough}: $g GETXATTR for $who's 64 writes"
		[ "$g" -le 16 ] ||
			fail "${opt:-writethrough}: $g GETXATTR for 64 writes by $who"
	done

	for op in write otrunc truncate fallocate copy; do
		for mode in 6777 4777 2777 6767 2767; do
			for p in "$MNT/m$op$mode" "$BACKING/b$op$mode"; do
				echo data >"$p"
				chmod "$mode" "$p"
				change "$op" "$p"
			done
			assert_eq "$(stat -c %a "$BACKING/b$op$mode")" \
				"$(stat -c %a "$MNT/m$op$mode")" \
				"${opt:-writethrough}: $mode after nobody's $op"
		done
		assert_eq 767 "$(stat -c %a "$MNT/m${op}2767")" \
			"${opt:-writethrough}: 2767 after nobody's $op"
		assert_eq 777 "$(stat -c %a "$MNT/m${op}6777")" \
			"${opt:-writethrough}: 6777 after nobody's $op"
	done
	echo data >"$MNT/r"
	chmod 6777 "$MNT/r"
	echo more >>"$MNT/r"
	assert_eq 6777 "$(stat -c %a "$MNT/r")" "root's write"
	# chgrp by the owner, out of a group it is not in; root's chown.
	for mode in 6775 2767; do
		for p in "$MNT/g$mode" "$BACKING/h$mode"; do
			echo data >"$p"
			chown 65534:0 "$p"
			chmod "$mode" "$p"
			as_nobody chgrp 65534 "$p" || fail "nobody's chgrp of $p"
		done
		assert_eq "$(stat -c %a "$BACKING/h$mode")" \
			"$(stat -c %a "$MNT/g$mode")" "$mode after nobody's chgrp"
		for p in "$MNT/g$mode" "$BACKING/h$mode"; do
			chmod "$mode" "$p"
			chown 1:1 "$p"
		done
		assert_eq "$(stat -c %a "$BACKING/h$mode")" \
			"$(stat -c %a "$MNT/g$mode")" "$mode after root's chown"
	done

	# A capability goes with a write, whoever writes; also one set on
	# BACKING behind the kernel's back, once it has stopped asking.
	for who in root nobody; do
		echo data >"$MNT/c$who"
		chmod 777 "$MNT/c$who"
		setcap cap_net_raw+ep "$MNT/c$who"
		[ -n "$(getcap "$BACKING/c$who")" ] || fail "setcap did not stick"
		if [ $who = root ]; then
			echo x >>"$MNT/c$who"
		else
			change write "$MNT/c$who"
		fi
		assert_eq "" "$(getcap "$MNT/c$who")" "capability after $who's write"
		setcap cap_net_raw+ep "$BACKING/c$who"
		if [ $who = root ]; then
			echo x >>"$MNT/c$who"
		else
			change write "$MNT/c$who"
		fi
		assert_eq "" "$(getcap "$BACKING/c$who")" \
			"capability set on BACKING, after $who's write"
	done
	unmount_fs
	check_log 'unique: [0-9]+, error: '
	rm -f "$BACKING"/*
done
