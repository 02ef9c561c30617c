# SPDX-License-Identifier: GPL-2.0-or-later
# The .control directory and its files cannot be created in, removed,
# renamed, linked, chmod'ed, chown'ed or touched: EPERM, nothing changes.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

mount_fs
C=$MNT/.control
listing() { ls -la --time-style=+ "$C" | sed 1d; }
before=$(listing)
sched=$(cat "$C/scheduler")

# expect_eperm DESCRIPTION COMMAND...: the command fails with EPERM.
expect_eperm() {
	what=$1
	shift
	if "$@" >"$T/out" 2>&1; then
		fail "$what succeeded"
	fi
	grep -q 'Operation not permitted' "$T/out" ||
		fail "$what: expected EPERM, got: $(cat "$T/out")"
}
# expect_failure DESCRIPTION COMMAND...: the command fails (any errno).
expect_failure() {
	what=$1
	shift
	if "$@" >"$T/out" 2>&1; then
		fail "$what succeeded"
	fi
	echo "$what: $(cat "$T/out")"
}

expect_eperm "mkdir in .control" mkdir "$C/d"
expect_eperm "touch a new file in .control" touch "$C/new"
expect_eperm "mknod in .control" mknod "$C/fifo" p
expect_eperm "symlink in .control" ln -s x "$C/sl"
expect_eperm "rm a control file" rm -f "$C/scheduler"
expect_eperm "rm -f stats" rm -f "$C/stats"
expect_eperm "rmdir .control" rmdir "$C"
expect_eperm "rename a control file out" mv "$C/scheduler" "$MNT/sched"
expect_eperm "rename within .control" mv "$C/nr_requests" "$C/nr"
expect_eperm "rename .control" mv "$C" "$MNT/ctl"
echo x >"$MNT/x"
expect_eperm "rename a file onto .control/scheduler" mv "$MNT/x" "$C/scheduler"
expect_eperm "rename a file into .control" mv "$MNT/x" "$C/x"
expect_eperm "hard link of a control file" ln "$C/scheduler" "$MNT/hl"
expect_eperm "hard link into .control" ln "$MNT/x" "$C/hl"
expect_eperm "chmod a control file" chmod 600 "$C/scheduler"
expect_eperm "chmod .control" chmod 700 "$C"
expect_eperm "chown a control file" chown 65534 "$C/scheduler"
expect_eperm "touch a control file" touch "$C/scheduler"
expect_eperm "touch -d .control" touch -d @0 "$C"
expect_eperm "setfattr on a control file" \
	python3 -c "import os; os.setxattr('$C/scheduler', 'user.x', b'1')"
# A directory named .control cannot be made in the root either.
expect_failure "mkdir .control" mkdir "$MNT/.control"
expect_failure "create .control" sh -c ": >'$MNT/.control'"

assert_eq "$before" "$(listing)" ".control listing after the attempts"
assert_eq "$sched" "$(cat "$C/scheduler")" "scheduler after the attempts"
[ -e "$MNT/sched" ] || [ -e "$MNT/ctl" ] || [ -e "$MNT/hl" ] &&
	fail "something appeared in the root"
[ -e "$BACKING/.control" ] && fail "something reached the backing directory"
[ -e "$MNT/x" ] || fail "x vanished"
unmount_fs
check_log
