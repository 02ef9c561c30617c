#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Which page cache serves: after the backing file is evicted
# (POSIX_FADV_DONTNEED), an O_DIRECT read through the mount leaves none of
# it resident under backing_io=auto and direct, and a buffered read none
# under direct; under buffered both leave it resident (fincore).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require python3 fincore
dio_backing

# Evict the backing file f and check that it is gone.
evict() {
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$BACKING/$1"
	assert_eq 0 "$(resident "$1")" "$1 resident after eviction"
}
resident() { fincore --bytes --noheadings --output RES "$BACKING/$1" | tr -d " "; }

# How many times anyone wrote to /proc/sys/vm/drop_caches (empty where
# the kernel does not count it).  Other tests do, and a parallel make
# check runs them beside this one: a drop between the read and fincore
# empties the page cache that "some" expects.
drops() { awk '$1 == "drop_pagecache" { print $2 }' /proc/vmstat; }

# expect: after a direct read and after a buffered read, "none" or "some".
for case in "auto none some" "direct none none" "buffered some some"; do
	set -- $case
	mode=$1 after_direct=$2 after_buffered=$3
	mount_fs -o "backing_io=$mode"
	tries=0
	while :; do
		before=$(drops)
		for f in d b; do
			head -c 4194304 /dev/urandom >"$BACKING/$f"
			evict $f
		done
		dd if="$MNT/d" of=/dev/null bs=64k iflag=direct status=none ||
			fail "$mode: O_DIRECT read"
		cat "$MNT/b" >/dev/null || fail "$mode: buffered read"
		got_d=$(resident d) got_b=$(resident b)
		[ "$(drops)" != "$before" ] || break
		# Measured across a drop: it says nothing, measure again.
		tries=$((tries + 1))
		[ $tries -lt 5 ] || fail "$mode: the page cache was dropped during 5 tries"
		echo "$mode: the page cache was dropped meanwhile; again"
	done
	for f in d b; do
		if [ $f = d ]; then want=$after_direct got=$got_d
		else want=$after_buffered got=$got_b; fi
		echo "$mode: $f: $got bytes resident in the backing page cache"
		case $want in
		none) assert_eq 0 "$got" "$mode: backing $f resident" ;;
		some) [ "$got" -gt 0 ] || fail "$mode: backing $f not resident" ;;
		esac
	done
	unmount_fs
	rm -f "$BACKING/d" "$BACKING/b"
done
check_log
