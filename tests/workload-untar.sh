# SPDX-License-Identifier: GPL-2.0-or-later
# Unpack a tree of a few thousand files onto the mount, compare it with
# the source and with the backing directory, copy it with cp -a, remove it.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require tar diff find
# tar | tar: a failure of the first tar must fail the test too.
set -o pipefail

# The tree: up to 3000 entries of /usr/include, plus files made to cover
# the awkward cases (empty, odd sizes, sparse, hard links, symlinks, modes).
src=$T/src
mkdir -p "$src/gen/deep/er/still" "$src/gen/empty-dir"
# TEST_QUICK=1 (slow builds, e.g. under TSan): a smaller tree.
nmax=3000
[ -z "${TEST_QUICK:-}" ] || nmax=600
if [ -d /usr/include ]; then
	(cd /usr && find include \( -type f -o -type l \) | sort | sed -n "1,${nmax}p") \
		>"$T/list"
	tar -C /usr -cf - --no-recursion -T "$T/list" | tar -C "$src" -xf - ||
		fail "cannot copy /usr/include"
fi
i=0
while [ $i -lt 400 ]; do
	# Sizes around page and sector boundaries.
	case $((i % 8)) in
	0) n=0 ;; 1) n=1 ;; 2) n=511 ;; 3) n=4097 ;; 4) n=65535 ;;
	5) n=131073 ;; 6) n=$((i * 37)) ;; 7) n=1048577 ;;
	esac
	d=$src/gen/d$((i % 20))
	mkdir -p "$d"
	head -c "$n" /dev/urandom >"$d/f$i"
	i=$((i + 1))
done
dd if=/dev/urandom of="$src/gen/deep/er/still/big" bs=1M count=24 status=none
truncate -s 64M "$src/gen/sparse"
printf 'middle' | dd of="$src/gen/sparse" bs=1 seek=33554432 conv=notrunc status=none
ln "$src/gen/d1/f1" "$src/gen/hardlink"
ln -s d2/f2 "$src/gen/symlink"
ln -s /nonexistent/target "$src/gen/dangling"
chmod 0600 "$src/gen/d3/f3"
chmod 4755 "$src/gen/d4/f4"
chmod 0444 "$src/gen/d5/f5"
mkfifo "$src/gen/fifo"
touch -d '2001-02-03 04:05:06' "$src/gen/d6/f6"
nfiles=$(find "$src" | wc -l)
[ "$nfiles" -ge 400 ] || fail "source tree too small: $nfiles entries"
# POSIX format: nanosecond mtimes.
tar -C "$src" --format=posix -Scf "$T/tree.tar" .

# Names, types, modes, sizes (not of directories: that depends on the
# filesystem), link targets and mtimes of a tree.
meta() {
	(cd "$1" && find . -path ./.control -prune -o \
		-printf '%p %y %m %s %l %T@\n' |
		awk '$2 == "d" { $4 = "-" } { print }' | sort)
}

mount_fs -o scheduler=deadline
mkdir "$MNT/tree"
tar -C "$MNT/tree" -xpf "$T/tree.tar" || fail "tar -x onto the mount failed"
meta "$src" >"$T/meta.src"
meta "$MNT/tree" >"$T/meta.mnt"
diff "$T/meta.src" "$T/meta.mnt" || fail "metadata differs from the source"
# diff -r cannot compare FIFOs; meta did.  (This changes the mtime of
# both gen/ directories, to slightly different times.)
rm "$src/gen/fifo" "$MNT/tree/gen/fifo"
diff -r --no-dereference "$src" "$MNT/tree" || fail "unpacked tree differs from the source"
compare_trees
# Hard links stay hard links.
[ "$MNT/tree/gen/hardlink" -ef "$MNT/tree/gen/d1/f1" ] ||
	fail "hard link not preserved"
assert_eq 2 "$(stat -c %h "$MNT/tree/gen/hardlink")" "link count"

cp -a "$MNT/tree" "$MNT/copy" || fail "cp -a on the mount failed"
diff -r --no-dereference "$src" "$MNT/copy" || fail "cp -a copy differs"
meta "$MNT/tree" >"$T/meta.tree"
meta "$MNT/copy" >"$T/meta.copy"
diff "$T/meta.tree" "$T/meta.copy" || fail "cp -a did not keep metadata"
compare_trees

# Read everything back through a fresh mount (no page cache).
unmount_fs
mount_fs
diff -r --no-dereference "$src" "$MNT/copy" || fail "copy differs after remount"
tar -C "$MNT/tree" -cf - . | tar -tvf - >/dev/null || fail "tar -c from the mount failed"

rm -rf "$MNT/tree" "$MNT/copy" || fail "rm -rf on the mount failed"
assert_eq "" "$(ls -A "$MNT")" "mount after rm -rf"
assert_eq "" "$(ls -A "$BACKING")" "backing after rm -rf"
unmount_fs
check_log
exit 0
