# SPDX-License-Identifier: GPL-2.0-or-later
# FUSE over io_uring (-o fuse_uring=N).  With the kernel's enable_uring
# off, the mount says so and serves through /dev/fuse.  On, requests come
# through the ring (the daemon counts them at unmount) with the data
# intact: cp, O_DIRECT dd and tar by root, and by another user of an
# allow_other mount, who is still refused what the modes refuse; more
# readers at once than a queue has entries; a switch of scheduler under
# load.  Then core tests again through the ring, with more entries than
# their asynchronous I/O holds at once.  enable_uring is the
# machine's: it is put back as it was, and no other test uses the ring.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require setpriv tar timeout
P=/sys/module/fuse/parameters/enable_uring
[ -w "$P" ] || skip_env "the kernel has no FUSE over io_uring ($P)"
out=$("$FUSE_IOSCHED" --print-config -o "module_dir=$MODULE_DIR,fuse_uring=4" \
	2>&1) || {
	case $out in
	*"without liburing"*) skip "built without liburing" ;;
	*) fail "fuse_uring=4 refused: $out" ;;
	esac
}
old=$(cat "$P")
cleanup_push "echo $old > $P"
# served: what the daemon's last unmount said came through the ring.
served() {
	sed -n 's/.*fuse_uring: \([0-9]*\) requests came through the ring.*/\1/p' \
		"$LOG" | tail -n 1
}

echo N >"$P"
mount_fs -o fuse_uring=4
echo off >"$MNT/off"
assert_eq off "$(cat "$MNT/off")" "a file written through /dev/fuse"
unmount_fs
grep -q "fuse_uring: the kernel does not offer FUSE over io_uring" "$LOG" ||
	fail "no word that the ring is off: $(tail -n 3 "$LOG")"
[ -z "$(served)" ] || fail "a ring counted with enable_uring off"

echo Y >"$P"
chmod 755 "$T"		# let nobody reach the mountpoint
mount_fs -o fuse_uring=4 -o allow_other -o scheduler=deadline
wait_line "$LOG" "fuse_uring: [0-9]+ queues of 4 entries"
dd if=/dev/urandom of="$T/src" bs=1M count=8 status=none
cp "$T/src" "$MNT/a"
cmp "$T/src" "$MNT/a" || fail "cp through the ring"
cmp "$T/src" "$BACKING/a" || fail "cp through the ring: the backing file"
dd if="$T/src" of="$MNT/d" bs=1M oflag=direct status=none
dd if="$MNT/d" of="$T/d" bs=64k iflag=direct status=none
cmp "$T/src" "$T/d" || fail "O_DIRECT through the ring"
mkdir "$MNT/t"
tar -C "$top_srcdir/daemon" -cf - . | tar -C "$MNT/t" -xf - ||
	fail "tar through the ring"
diff -r "$top_srcdir/daemon" "$BACKING/t" >/dev/null ||
	fail "the tree tar wrote differs"

# Another user: its own files, and not root's private one.
mkdir -m 1777 "$MNT/u"
echo secret >"$MNT/s"
chmod 600 "$MNT/s"
as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
as_user cp "$MNT/a" "$MNT/u/x" || fail "another user's copy through the ring"
cmp "$T/src" "$BACKING/u/x" || fail "another user's copy: the backing file"
if as_user cat "$MNT/s" >/dev/null 2>&1; then
	fail "another user read a 0600 file of root's"
fi

# Sixteen readers on two queues of four entries: the rest wait in the
# kernel for an entry, and every one gets its data.
i=0 readers=
while [ $i -lt 16 ]; do
	timeout 60 cmp "$T/src" "$MNT/a" >"$T/r$i" 2>&1 &
	readers="$readers $!"
	i=$((i + 1))
done
bad=0
for p in $readers; do wait "$p" || bad=$((bad + 1)); done
assert_eq 0 "$bad" "readers that failed or did not finish"

# Switches under load lose nothing.
timeout 60 dd if="$T/src" of="$MNT/w" bs=4k oflag=direct status=none &
W=$!
for s in cfq noop kyber deadline; do
	echo $s >"$MNT/.control/scheduler" || fail "switch to $s"
done
wait $W || fail "writes under switches"
cmp "$T/src" "$MNT/w" || fail "data written under switches"
unmount_fs
n=$(served)
[ "${n:-0}" -gt 1000 ] || fail "requests through the ring: '${n:-none}'"
check_log

# The core tests through the ring, as tests/engine-uring-suite.sh runs
# them under the other engine.
for t in fs-data fs-odirect fs-fsync-order switch-all-under-load \
	cli-sigterm fs-xattr safety-killpriv trace-lost; do
	st=0
	TEST_FUSE_URING=32 TEST_QUICK=1 timeout -k 10 120 \
		bash "$top_srcdir/tests/$t.sh" >"$T/$t.log" 2>&1 || st=$?
	case $st in
	0) echo "fuse_uring: $t passed" ;;
	77) echo "fuse_uring: $t skipped: $(grep SKIP "$T/$t.log")" ;;
	*) tail -n 30 "$T/$t.log" >&2; fail "$t failed through the ring" ;;
	esac
done
