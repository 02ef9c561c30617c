# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for the shell tests.  Source it first thing:
#   . "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
# Each test gets its own temporary directory ($T) with a backing directory
# ($BACKING), a mountpoint ($MNT) and the daemon's log ($LOG).  Whatever
# happens, the EXIT trap unmounts and removes everything.
set -eu

# A test that sets SYSLOG_CAPTURE=yes before sourcing this file runs in a
# private mount namespace of its own (see syslog_start below); re-executed
# here, before anything is created.
if [ "${SYSLOG_CAPTURE:-}" = yes ] && [ -z "${_SYSLOG_NS:-}" ] &&
	[ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1; then
	_SYSLOG_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
# A new mount namespace starts as a copy of every mount of the machine,
# other tests' FUSE mounts included, and a copy keeps a mount's FUSE
# connection open: when its test unmounts it, its daemon goes on waiting
# in /dev/fuse until this namespace ends, and fails that test's check that
# it exits.  So let go of the copies (private: the originals stay).
if [ -n "${_SYSLOG_NS:-}" ]; then
	awk '$3 == "fuse" || $3 == "fuseblk" || $3 ~ /^fuse\./ { print $2 }' \
		/proc/self/mounts | while read -r _m; do
		umount -l "$(printf '%b' "$_m")" 2>/dev/null || true
	done
fi

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${FUSE_IOSCHED:=$top_builddir/daemon/fuse-iosched}"
: "${MODULE_DIR:=$top_builddir/schedulers/.libs}"
: "${TEST_MODULE_DIR:=$top_builddir/tests/modules/.libs}"

TEST_NAME=$(basename "$0" .sh)
T=$(mktemp -d "${TMPDIR:-/tmp}/fuse-iosched-$TEST_NAME.XXXXXX")
BACKING=$T/backing
MNT=$T/mnt
LOG=$T/daemon.log
DAEMON_PID=
mkdir -p "$BACKING" "$MNT"
# The Python helpers of tests/lib.py, for the tests' inline Python.
PYTHONPATH=$top_srcdir/tests${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPATH
# A configuration file with nothing in it: the built-in defaults only.
EMPTY_CONF=$T/empty.conf
: >"$EMPTY_CONF"

# A stack of cleanup commands, run last-in first-out at exit.
_cleanups=
cleanup_push() { _cleanups="$1
$_cleanups"; }

_on_exit() {
	status=$?
	set +e
	# A failed or timed-out test may leave processes waiting for answers
	# the daemon will never send: once it has read their request not even
	# SIGKILL frees them, only the daemon's end does, and the cleanups
	# below (a group's removal) wait for them.
	if [ "$status" -ne 0 ] && [ "$status" -ne 77 ] &&
	   [ -n "$DAEMON_PID" ]; then
		kill -9 "$DAEMON_PID" 2>/dev/null
	fi
	printf '%s\n' "$_cleanups" | while IFS= read -r c; do
		[ -n "$c" ] && eval "$c"
	done
	# Also a mount whose daemon is gone, which mountpoint(1) misses.
	if grep -q " $MNT fuse" /proc/mounts 2>/dev/null; then
		fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -9 "$DAEMON_PID" 2>/dev/null
	fi
	if [ "$status" -ne 0 ] && [ "$status" -ne 77 ] && [ -s "$LOG" ]; then
		echo "--- daemon log (last 40 lines) ---"
		tail -n 40 "$LOG"
	fi
	if [ "$status" -ne 0 ] && [ "$status" -ne 77 ] && [ -s "$SYSLOG" ]; then
		echo "--- daemon's syslog (last 40 lines) ---"
		tail -n 40 "$SYSLOG"
	fi
	rm -rf "$T"
	exit "$status"
}
trap _on_exit EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL: $TEST_NAME: $*" >&2; exit 1; }
# Messages a daemonized fuse-iosched sent to syslog (SYSLOG_CAPTURE=yes).
SYSLOG=$T/syslog
skip() { echo "SKIP: $TEST_NAME: $*" >&2; exit 77; }
# Skip for want of something the environment should provide (root,
# /dev/fuse, a loop device, a tool, a built module).  By hand that is a
# skip; in CI (CI=true), which installs and provides all of it, it is a
# failure, so that CI cannot pass by skipping.  Call it before the test
# starts its work: a skip after that is a failure everywhere (use fail).
skip_env() {
	[ "${CI:-}" != true ] || fail "CI=true, and the test cannot run: $*"
	skip "$*"
}
# When a tool the test needs is missing.
require() { for c; do command -v "$c" >/dev/null 2>&1 || skip_env "needs $c"; done; }
require_root() {
	[ "$(id -u)" -eq 0 ] || skip_env "needs root"
	[ -c /dev/fuse ] || skip_env "needs /dev/fuse"
}
# A module of the build (schedulers/ or tests/modules/) must exist.
require_module() { # DIR NAME...
	d=$1; shift
	for m; do [ -e "$d/$m.so" ] || skip_env "$d/$m.so is not built"; done
}

# A python3 that uid 65534 can run (root's may be a shim under /root),
# in $NOBODY_PY; else skip.
require_nobody_python() {
	for NOBODY_PY in python3 /usr/bin/python3 ""; do
		[ -n "$NOBODY_PY" ] || skip_env "no python3 that uid 65534 can run"
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$NOBODY_PY" -c '' 2>/dev/null && break
	done
}

assert_eq() { # expected actual [what]
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}

# Mount BACKING on MNT in the foreground, in the background of this shell.
# Extra arguments are passed to the daemon (e.g. -o scheduler=deadline).
# TEST_BACKING_IO=direct (or auto, buffered) runs every test in that mode,
# unless the test names its own; TEST_ENGINE=uring (or threads) likewise
# the dispatch engine (tests/engine-uring.sh), and TEST_FUSE_URING=N the
# FUSE transport (tests/fuse-uring.sh).
mount_fs() {
	require_root
	"$FUSE_IOSCHED" -f -o "module_dir=$MODULE_DIR" \
		${TEST_BACKING_IO:+-o "backing_io=$TEST_BACKING_IO"} \
		${TEST_ENGINE:+-o "engine=$TEST_ENGINE"} \
		${TEST_FUSE_URING:+-o "fuse_uring=$TEST_FUSE_URING"} \
		"$@" "$BACKING" "$MNT" \
		>>"$LOG" 2>&1 &
	DAEMON_PID=$!
	i=0
	while ! mountpoint -q "$MNT"; do
		kill -0 "$DAEMON_PID" 2>/dev/null || {
			cat "$LOG" >&2; DAEMON_PID=; fail "daemon died before mounting"; }
		i=$((i + 1))
		[ $i -lt 200 ] || fail "mount did not appear within 10 s"
		sleep 0.05
	done
	# mountpoint(1) reads mountinfo, where the mount shows before the
	# daemon has logged its start (the disk model, the "mounted" line):
	# a stat is answered once its session loop runs, after those.
	timeout 30 stat "$MNT" >/dev/null ||
		fail "the mount does not answer: $(tail -n 5 "$LOG")"
	[ -z "${TEST_FUSE_URING:-}" ] ||
		wait_line "$LOG" "fuse_uring: [0-9]+ queues of"
}

# Wait (10 s at most) until DAEMON_PID has exited, after WHAT.
# A daemon still there after 30 s is stuck, not slow (a loaded machine
# has taken over 10 s): its threads' stacks say where.
wait_daemon_exit() {
	i=0
	while kill -0 "$DAEMON_PID" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -ge 600 ]; then
			# Bounded: gdb can hang attaching (then the test's own
			# time limit would kill the EXIT trap's cleanup too).
			! command -v gdb >/dev/null 2>&1 ||
				timeout -k 5 20 gdb -batch -p "$DAEMON_PID" \
					-ex 'thread apply all bt' 2>&1 | tail -n 150
			# A mount namespace that copied the mount keeps its
			# connection open (see the top of this file).
			grep -l " $MNT " /proc/[0-9]*/mountinfo 2>/dev/null |
			while read -r _f; do
				_p=${_f#/proc/}; _p=${_p%/mountinfo}
				echo "still mounted for $_p: $(tr '\0' ' ' <"/proc/$_p/cmdline" 2>/dev/null)"
			done | head -n 5
			fail "daemon did not exit within 30 s of $1"
		fi
		sleep 0.05
	done
}

# Unmount and check that the daemon exits on its own, with status 0.
unmount_fs() {
	fusermount3 -u "$MNT" || fail "fusermount3 -u failed"
	wait_daemon_exit unmount
	st=0; wait "$DAEMON_PID" || st=$?
	DAEMON_PID=
	[ "$st" -eq 0 ] || fail "daemon exited with status $st"
}

# Capture syslog: in the test's private mount namespace, /dev is overlaid
# with a copy-on-write layer in $T where /dev/log is a datagram socket of
# the test's, whose messages go to $SYSLOG.  The machine's /dev (and its
# /dev/log, if any) is untouched; the overlay vanishes with the namespace.
# Submounts of /dev (pts, shm) are not visible in the namespace.
syslog_start() {
	require python3
	syslog_none
	: >"$SYSLOG"
	python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
out = open(sys.argv[1], "ab", buffering=0)
while True:
    out.write(s.recv(65536).rstrip(b"\0\n") + b"\n")
' "$SYSLOG" &
	_syslog_pid=$!
	cleanup_push "kill $_syslog_pid 2>/dev/null"
	wait_for "the syslog socket" test -S /dev/log
}

# No syslog at all, as in many containers: the same overlay of /dev,
# without /dev/log.
syslog_none() {
	[ -n "${_SYSLOG_NS:-}" ] ||
		skip_env "capturing syslog needs root and unshare (set SYSLOG_CAPTURE=yes)"
	mkdir "$T/dev-up" "$T/dev-work"
	mount -t overlay fuse-iosched-test -o "lowerdir=/dev,upperdir=$T/dev-up,workdir=$T/dev-work" /dev ||
		skip_env "cannot overlay /dev in a private mount namespace"
	cleanup_push "umount -l /dev"
	rm -f /dev/log
}

# syslog_wait PATTERN: wait until a line matching PATTERN (grep -E) has
# reached $SYSLOG.
syslog_wait() { wait_line "$SYSLOG" "$1"; }

# syslog_exited PID: the daemonized PID logged its mount, then its exit
# with status 0, and nothing at error severity or worse.
syslog_exited() {
	syslog_wait "fuse-iosched\[$1\]: unmounting .*, exit status"
	grep -q "fuse-iosched\[$1\]: mounted " "$SYSLOG" ||
		fail "daemon $1 logged no mount to syslog: $(cat "$SYSLOG")"
	grep -q "fuse-iosched\[$1\]: unmounting .*, exit status 0\$" "$SYSLOG" ||
		fail "daemon $1: $(grep "fuse-iosched\[$1\]: unmounting" "$SYSLOG")"
	# <PRI> is facility * 8 + severity; 0 to 3 are emerg to err.
	if awk -F'[<>]' '$2 % 8 <= 3' "$SYSLOG" | grep . >&2; then
		fail "errors in the daemon's syslog"
	fi
	check_log '' "$SYSLOG"
}

# The daemon's log must not contain errors the test did not provoke.
# check_log [IGNORE [FILE]]: FILE defaults to $LOG.
check_log() {
	if grep -Ei 'error|assert|sanitizer|leak' "${2:-$LOG}" | grep -Ev "${1:-^$}" >&2; then
		fail "unexpected errors in the daemon log"
	fi
	return 0
}

# stat_of DIR FIELD: the number after FIELD on the DIR (read, write) line
# of the mount's .control/stats.
stat_of() {
	awk -v d="$1" -v f="$2" '$1 == d { for (i = 2; i < NF; i += 2)
		if ($i == f) print $(i + 1) }' "$MNT/.control/stats"
}

# stats_settled WHEN: after WHEN, every read and write request was
# answered and accounted for: some counted, all completed, none queued or
# in flight, no errors.
stats_settled() {
	for _d in read write; do
		_req=$(stat_of $_d requests)
		[ "${_req:-0}" -gt 0 ] || fail "no $_d requests counted"
		assert_eq "$_req" "$(stat_of $_d completed)" \
			"$_d completed == requests"
		assert_eq 0 "$(stat_of $_d in_flight)" "$_d in_flight after $1"
		assert_eq 0 "$(stat_of $_d queued)" "$_d queued after $1"
		assert_eq 0 "$(stat_of $_d errors)" "$_d errors"
	done
}

# scheduler_listed NAME: whether .control/scheduler lists NAME.
scheduler_listed() {
	tr -d '[]' <"$MNT/.control/scheduler" | tr ' ' '\n' | grep -qx "$1"
}

# scheduler_active: the bracketed name in .control/scheduler.
scheduler_active() {
	sed -n 's/.*\[\([^]]*\)\].*/\1/p' "$MNT/.control/scheduler"
}

# write_ctl FILE DATA: one write(2) of DATA (printf %b escapes) to FILE;
# dd reports the errno by name.
write_ctl() {
	printf '%b' "$2" >"$T/in"
	dd if="$T/in" of="$1" bs=65536 status=none 2>&1
}

# write_errno FILE VALUE: one write(2) of "VALUE\n" to FILE; prints "ok",
# or the errno name it failed with.
write_errno() {
	python3 - "$1" "$2" <<'PY'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
try:
    os.write(fd, sys.argv[2].encode() + b"\n")
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
finally:
    os.close(fd)
PY
}

# io_works WHAT: 512 KiB written through the mount reach the backing
# file and read back the same with the page cache dropped.
io_works() {
	dd if=/dev/urandom of="$T/io.data" bs=64k count=8 status=none
	dd if="$T/io.data" of="$MNT/io" bs=16k conv=fsync status=none ||
		fail "$1: write failed"
	cmp "$T/io.data" "$BACKING/io" || fail "$1: backing file differs"
	echo 3 >/proc/sys/vm/drop_caches
	cmp "$T/io.data" "$MNT/io" || fail "$1: read back differs"
}

# switches: the mount's scheduler switches so far.
switches() { awk '$1 == "switches" { print $2 }' "$MNT/.control/stats"; }

# held DIR: FUSE requests of DIR (read, write) the daemon has received and
# not yet answered, queued, in flight or waiting for a slot.
held() {
	awk -v d="$1" '$1 == d { for (i = 2; i < NF; i += 2) v[$i] = $(i + 1)
		print v["requests"] - v["completed"] }' "$MNT/.control/stats"
}

# wait_for WHAT COMMAND...: poll (up to 30 s: the machine may be busy)
# until COMMAND succeeds.
wait_for() {
	what=$1; shift
	i=0
	until "$@"; do
		i=$((i + 1))
		[ $i -lt 600 ] || fail "timed out waiting for $what"
		sleep 0.05
	done
}

# fails_with ERRTEXT WHERE CMD: CMD (one string, split on blanks) fails
# within 10 s, with ERRTEXT (strerror's words) in what it says.
fails_with() {
	_st=0
	_out=$(timeout 10 $3 2>&1 >/dev/null) || _st=$?
	[ "$_st" -ne 124 ] || fail "'$3' hangs $2"
	[ "$_st" -ne 0 ] || fail "'$3' succeeded $2"
	case $_out in
	*"$1"*) ;;
	*) fail "'$3' $2: '$_out', not '$1'" ;;
	esac
}

# wait_line FILE ERE: wait_for a line of FILE that matches ERE.
wait_line() { wait_for "/$2/ in $1" grep -Eqs -- "$2" "$1"; }

# gone PID: whether process PID has exited (for wait_for).
gone() { ! kill -0 "$1" 2>/dev/null; }

# fstab_start: what mounting by mount(8) needs (root, mount(8) and
# mount.fuse3), and the daemons' syslog captured (SYSLOG_CAPTURE=yes).
fstab_start() {
	require_root
	require mount umount pgrep
	syslog_start
	[ -x /sbin/mount.fuse3 ] || skip_env "needs /sbin/mount.fuse3"
}

# check_mounted HOW SCHEDULER: MNT, mounted by mount(8) (HOW, for the
# messages), is fuse-iosched's with nosuid and nodev, runs SCHEDULER and
# reads BACKING/f ("hello"); then umount, and the daemon exits cleanly
# (syslog_exited: the test captures syslog).
check_mounted() {
	mountpoint -q "$MNT" || fail "$1: not mounted"
	DAEMON_PID=$(pgrep -f -- "fuse-iosched.* $MNT" | head -n 1 || true)
	[ -n "$DAEMON_PID" ] || fail "$1: no daemon for $MNT"
	entry=$(grep " $MNT " /proc/mounts)
	case $entry in
	*" fuse.fuse-iosched "*nosuid*nodev*) ;;
	*) fail "$1: /proc/mounts says: $entry" ;;
	esac
	grep -q "\[$2\]" "$MNT/.control/scheduler" ||
		fail "$1: not $2: $(cat "$MNT/.control/scheduler")"
	assert_eq hello "$(cat "$MNT/f")" "$1: read through the mount"
	umount "$MNT" || fail "$1: umount failed"
	wait_daemon_exit "$1: umount"
	syslog_exited "$DAEMON_PID"
	DAEMON_PID=
}

# Compare the mount with the backing directory: same names, same contents.
compare_trees() {
	diff -r --no-dereference "$BACKING" "$MNT" || fail "mount and backing differ"
}

# Make sure BACKING supports O_DIRECT, the way the direct I/O tests need it
# to reach a device: where $TMPDIR does not (tmpfs before Linux 6.6,
# ramfs), put an ext4 image of $1 MiB (default 128) on a loop device there.
# Call before mount_fs.
dio_backing() {
	if dd if=/dev/zero of="$BACKING/.dio-probe" bs=4096 count=1 \
	    oflag=direct status=none 2>/dev/null; then
		rm -f "$BACKING/.dio-probe"
		return 0
	fi
	rm -f "$BACKING/.dio-probe"
	require mkfs.ext4 losetup
	truncate -s "${1:-128}M" "$T/dio.img"
	mkfs.ext4 -q -F "$T/dio.img" || skip "mkfs.ext4 failed"
	mount -o loop "$T/dio.img" "$BACKING" || skip "cannot mount a loop device"
	# Runs before the EXIT trap's own unmount: the daemon lets go first.
	cleanup_push 'mountpoint -q "$MNT" && { fusermount3 -u "$MNT" || umount -l "$MNT"; sleep 0.2; }; umount "$BACKING" 2>/dev/null || umount -l "$BACKING"'
}

# Make BACKING a faultfs mount (tests/faultfs.c) of $T/src that fails
# operations as the rules in file $1 say.  Call before mount_fs.
faultfs_backing() {
	local faultfs=$top_builddir/tests/faultfs
	[ -x "$faultfs" ] || fail "$faultfs not built"
	mkdir -p "$T/src"
	"$faultfs" -f -o "rules=$1" "$T/src" "$BACKING" 2>"$T/faultfs.log" &
	FAULT_PID=$!
	# After lib.sh's unmount of MNT would be too late: the daemon first.
	cleanup_push "fusermount3 -u '$MNT' 2>/dev/null; sleep 0.2; fusermount3 -u '$BACKING' 2>/dev/null || umount -l '$BACKING'; kill $FAULT_PID 2>/dev/null"
	wait_for "faultfs to mount" faultfs_up
}
faultfs_up() {
	kill -0 "$FAULT_PID" 2>/dev/null ||
		fail "faultfs died: $(cat "$T/faultfs.log")"
	mountpoint -q "$BACKING"
}

# mount_conf TEXT [OPTION,...]: mount_fs with the configuration file
# C=$T/reload.conf holding TEXT (with printf's backslash escapes), for
# tests that change it and reload.
mount_conf() {
	C=$T/reload.conf
	printf '%b' "$1" >"$C"
	mount_fs -o "config=$C${2:+,$2}"
}

# SIGHUP the daemon of mount_fs and wait (10 s at most) until it logged
# the end of that reload: "configuration reloaded" or "reload failed",
# or, with PATTERN, a new line matching PATTERN (for a reload that logs
# at a level the others are dropped at).
reload_fs() {
	_re=${1:-configuration reload(ed from| failed)}
	_n=$(grep -cE "$_re" "$LOG" || true)
	kill -HUP "$DAEMON_PID" || fail "SIGHUP: no daemon"
	i=0
	while [ "$(grep -cE "$_re" "$LOG" || true)" -le "$_n" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || fail "no '$_re' in the log within 10 s of SIGHUP"
		sleep 0.05
	done
}

# The idle-class tests (cfq-ionice.sh, deadline-ionice.sh): two dd
# readers of 64 KiB O_DIRECT reads on the mount, whose progress is read
# from their file positions (/proc/PID/fdinfo/0: dd reads if= as fd 0),
# so nothing interrupts them.  MIB is 1 MiB in bytes.
MIB=1048576

# dd_pos PID: bytes the dd of PID has read; empty (not an error) once it
# is gone.
dd_pos() {
	sed -n 's/^pos:[[:space:]]*//p' "/proc/$1/fdinfo/0" 2>/dev/null || :
}

# dd_wait_pos PID BYTES: wait (up to 10 s) until the dd of PID has read
# BYTES; its position, or empty if it is gone.
dd_wait_pos() {
	i=0
	while p=$(dd_pos "$1") && [ -n "$p" ] && [ "$p" -lt "$2" ] &&
	      [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	dd_pos "$1"
}

# idle_class_start: a best-effort (-c2 -n4) reader of MNT/be (BE_PID)
# and, once it owns the disk (1 MiB read, at BE0), an idle-class one of
# MNT/idle (IDLE_PID); both files of 4 GiB, which neither can finish
# (the hdd model charges for the size read, sparse or not).  Both are
# killed at exit.
idle_class_start() {
	for f in be idle; do
		truncate -s 4G "$BACKING/$f" || fail "cannot make $f"
	done
	ionice -c2 -n4 dd if="$MNT/be" of=/dev/null bs=64k iflag=direct \
		status=none &
	BE_PID=$!
	cleanup_push "kill $BE_PID 2>/dev/null; wait $BE_PID 2>/dev/null"
	BE0=$(dd_wait_pos "$BE_PID" "$MIB")
	[ -n "$BE0" ] || fail "the best-effort reader is gone"
	[ "$BE0" -ge "$MIB" ] || fail "the best-effort reader is stuck at $BE0"
	ionice -c3 dd if="$MNT/idle" of=/dev/null bs=64k iflag=direct \
		status=none &
	IDLE_PID=$!
	cleanup_push "kill $IDLE_PID 2>/dev/null; wait $IDLE_PID 2>/dev/null"
}

# idle_class_stop IDLE: stop the best-effort reader; the idle-class one,
# at IDLE bytes, must then read 4 MiB more within 10 s.
idle_class_stop() {
	kill "$BE_PID"
	# Killed: its status is not 0, and says nothing; the position does.
	wait "$BE_PID" 2>/dev/null || :
	[ -z "$(dd_pos "$BE_PID")" ] || fail "the best-effort reader did not stop"
	after=$(dd_wait_pos "$IDLE_PID" $(($1 + 4 * MIB)))
	echo "after best-effort stopped: idle at ${after:-?}"
	[ -n "$after" ] || fail "the idle-class reader is gone"
	[ "$after" -ge $(($1 + 4 * MIB)) ] ||
		fail "the idle-class reader read only $((after - $1)) bytes in 10 s after the best-effort one stopped"
	kill "$IDLE_PID"
	wait "$IDLE_PID" 2>/dev/null || :
}

# trace_start FILE: a reader of .control/trace copying into FILE
# (TRACE_PID, killed at exit), its header read; trace_stop ends it.
trace_start() {
	: >"$1"
	cat "$MNT/.control/trace" >"$1" &
	TRACE_PID=$!
	cleanup_push "kill $TRACE_PID 2>/dev/null"
	wait_for "the trace's header" grep -q '^# fuse-iosched trace' "$1"
}

trace_stop() {
	kill "$TRACE_PID"
	wait "$TRACE_PID" 2>/dev/null || :
}

# Control groups (the cgroup-*.sh tests): real groups of the I/O
# controller, the v1 blkio hierarchy or v2 with io, made under a group of
# the test's own (CG, a path in CG_ROOT) and removed at exit, their
# processes killed first.  CG_DEV is BACKING's disk, MAJ:MIN, where the
# kernel keeps limits.  Call cg_setup after dio_backing, if any; cg_setup
# NAME... also makes the groups $CG/NAME.
cg_setup() {
	require_root
	if [ -e /sys/fs/cgroup/blkio/blkio.throttle.read_bps_device ]; then
		CG_ROOT=/sys/fs/cgroup/blkio CG_V=1
	elif grep -qw io /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		CG_ROOT=/sys/fs/cgroup CG_V=2
		echo +io >"$CG_ROOT/cgroup.subtree_control" 2>/dev/null ||
			skip_env "cannot enable the io controller"
	else
		skip_env "no blkio (v1) or io (v2) controller mounted"
	fi
	CG_DEV=$(stat -c '%Hd:%Ld' "$BACKING")
	if [ -e "/sys/dev/block/$CG_DEV/partition" ]; then
		CG_DEV=$(cat "/sys/dev/block/$CG_DEV/../dev")
	fi
	[ -e "/sys/dev/block/$CG_DEV" ] || skip_env "BACKING is on no block device"
	CG=/fuse-iosched-$TEST_NAME-$$
	cg_mkdir "$CG"
	for _g; do
		cg_mkdir "$CG/$_g"
	done
}

# cg_no_weight_files NAME...: skip if the kernel has a weight file for a
# group $CG/NAME: the daemon takes a group section's weight only where
# the kernel has none.
cg_no_weight_files() {
	for _g; do
		for _f in io.bfq.weight io.weight blkio.bfq.weight blkio.weight; do
			[ ! -e "$CG_ROOT$CG/$_g/$_f" ] ||
				skip "the kernel has $_f: the section's weight is not used"
		done
	done
}

# cg_mkdir PATH: a group, removed at exit (children first: pushed later).
cg_mkdir() {
	mkdir "$CG_ROOT$1" || fail "cannot make group $1"
	[ "$CG_V" = 1 ] || echo +io >"$CG_ROOT$1/cgroup.subtree_control" 2>/dev/null || :
	cleanup_push "cg_remove '$1'"
}

cg_remove() {
	for _i in 1 2 3 4 5 6 7 8 9 10; do
		for _p in $(cat "$CG_ROOT$1/cgroup.procs" 2>/dev/null); do
			kill -9 "$_p" 2>/dev/null
		done
		rmdir "$CG_ROOT$1" 2>/dev/null && return 0
		[ -d "$CG_ROOT$1" ] || return 0
		sleep 0.2
	done
	echo "cannot remove group $1" >&2
}

# cg_limit PATH rbps|wbps|riops|wiops N: N per second on BACKING's disk
# (0: none), in the kernel's file.
cg_limit() {
	if [ "$CG_V" = 1 ]; then
		case $2 in
		rbps) _f=read_bps ;; wbps) _f=write_bps ;;
		riops) _f=read_iops ;; wiops) _f=write_iops ;;
		esac
		echo "$CG_DEV $3" >"$CG_ROOT$1/blkio.throttle.${_f}_device"
	else
		[ "$3" != 0 ] || set -- "$1" "$2" max
		echo "$CG_DEV $2=$3" >"$CG_ROOT$1/io.max"
	fi || fail "cannot set $2 of $1"
}

# cg_run PATH CMD...: run CMD in group PATH.
cg_run() {
	_g=$1; shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG_ROOT$_g" "$@"
}

# cg_start PATH CMD...: the same in the background; CG_PID is CMD's pid
# (for dd_pos), killed at exit.
cg_start() {
	_g=$1; shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG_ROOT$_g" "$@" &
	CG_PID=$!
	cleanup_push "kill $CG_PID 2>/dev/null"
}

# mib_per_s MIB CMD...: run CMD, which moves MIB MiB; print its rate in
# MiB/s (one decimal).
mib_per_s() {
	_mib=$1; shift
	_t0=$(date +%s%N)
	"$@" || fail "$* failed"
	_t1=$(date +%s%N)
	awk -v m="$_mib" -v t="$((_t1 - _t0))" \
		'BEGIN { printf "%.1f\n", m / (t / 1e9) }'
}

# in_band VALUE LOW HIGH: LOW <= VALUE <= HIGH (decimals).
in_band() {
	awk -v v="$1" -v l="$2" -v h="$3" 'BEGIN { exit !(v >= l && v <= h) }'
}
