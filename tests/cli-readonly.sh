# SPDX-License-Identifier: GPL-2.0-or-later
# -o ro: reads work, every change to the mirrored tree fails with EROFS
# (the daemon refuses it: the kernel mount is read-write, as /proc/mounts
# shows), the backing directory is left exactly as it was, and .control
# stays writable: the scheduler, nr_requests and tunables can be changed.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3

echo hello >"$BACKING/f"
mkdir "$BACKING/d"
echo inside >"$BACKING/d/g"
mkfifo "$BACKING/fifo"
ln -s f "$BACKING/l"
python3 -c "import os, sys; os.setxattr(sys.argv[1], 'user.k', b'v')" "$BACKING/f" ||
	skip_env "the backing file system has no user xattrs"
# Everything about the backing tree a change could touch.
snapshot() {
	(cd "$BACKING" && find . -printf '%p %y %m %u %g %s %T@ %C@ %l\n' | sort
	 md5sum f d/g
	 python3 -c "import os; print(sorted(os.listxattr('f')))")
}
before=$(snapshot)

mount_fs -o ro -o scheduler=deadline
grep " $MNT " /proc/mounts | grep -q '[ ,]rw[ ,]' ||
	fail "not read-write for the kernel: $(grep " $MNT " /proc/mounts)"
assert_eq hello "$(cat "$MNT/f")" "read on a read-only mount"
assert_eq inside "$(cat "$MNT/d/g")" "read in a subdirectory"

for what in 'echo x >>"$MNT/f"' 'echo x >"$MNT/f"' 'echo x >"$MNT/new"' \
	'mkdir "$MNT/d2"' 'rmdir "$MNT/d"' 'rm "$MNT/f"' 'rm "$MNT/l"' \
	'mv "$MNT/f" "$MNT/g"' 'mv "$MNT/f" "$MNT/d/f"' 'chmod 600 "$MNT/f"' \
	'chown 65534 "$MNT/f"' 'touch "$MNT/f"' 'touch -d @0 "$MNT/d"' \
	'truncate -s 0 "$MNT/f"' 'ln -s f "$MNT/l2"' 'ln "$MNT/f" "$MNT/h"' \
	'mkfifo "$MNT/p"' 'cp "$MNT/f" "$MNT/d/g"' \
	'python3 -c "import os, sys; os.setxattr(sys.argv[1], \"user.k\", b\"w\")" "$MNT/f"' \
	'python3 -c "import os, sys; os.removexattr(sys.argv[1], \"user.k\")" "$MNT/f"' \
	'python3 -c "import os, sys; os.open(sys.argv[1], os.O_RDWR)" "$MNT/f"' \
	'python3 -c "import os, sys; os.open(sys.argv[1], os.O_WRONLY)" "$MNT/f"' \
	'python3 -c "import os, sys; os.open(sys.argv[1], os.O_RDONLY | os.O_TRUNC)" "$MNT/f"' \
	'python3 -c "import os, sys; os.rename(sys.argv[1], sys.argv[2])" "$MNT/d" "$MNT/e"'; do
	(eval "$what") 2>"$T/err" && fail "allowed on a read-only mount: $what"
	grep -q 'Read-only file system' "$T/err" || fail "$what: $(cat "$T/err")"
done
# Opening for reading, with O_CREAT of an existing file, works.
python3 -c "import os, sys; os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_CREAT))" \
	"$MNT/f" || fail "O_RDONLY|O_CREAT of an existing file"

# .control is writable: a read-only experiment can switch schedulers.
C=$MNT/.control
echo noop >"$C/scheduler" || fail "switch to noop on a read-only mount"
grep -q '\[noop\]' "$C/scheduler" || fail "not switched: $(cat "$C/scheduler")"
echo deadline >"$C/scheduler" || fail "switch back to deadline"
echo 64 >"$C/nr_requests" || fail "nr_requests on a read-only mount"
assert_eq 64 "$(cat "$C/nr_requests")" "nr_requests"
echo 250 >"$C/iosched/read_expire" || fail "a tunable on a read-only mount"
assert_eq 250 "$(cat "$C/iosched/read_expire")" "read_expire"

assert_eq "$before" "$(snapshot)" "the backing tree after the attempts"
unmount_fs
check_log

# -o rw after -o ro: the last one counts, as for mount(8).
mount_fs -o ro -o rw
echo x >"$MNT/new" || fail "-o ro -o rw is not read-write"
unmount_fs
check_log
