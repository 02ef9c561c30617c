# Shared helpers for the shell tests.  Source it first thing:
#   . "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
# Each test gets its own temporary directory ($T) with a backing directory
# ($BACKING), a mountpoint ($MNT) and the daemon's log ($LOG).  Whatever
# happens, the EXIT trap unmounts and removes everything.
set -eu

: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
: "${FUSE_IOSCHED:=$top_builddir/src/fuse-iosched}"
: "${MODULE_DIR:=$top_builddir/schedulers/.libs}"
: "${TEST_MODULE_DIR:=$top_builddir/tests/modules/.libs}"

TEST_NAME=$(basename "$0" .sh)
T=$(mktemp -d "${TMPDIR:-/tmp}/fuse-iosched-$TEST_NAME.XXXXXX")
BACKING=$T/backing
MNT=$T/mnt
LOG=$T/daemon.log
DAEMON_PID=
mkdir -p "$BACKING" "$MNT"

# A stack of cleanup commands, run last-in first-out at exit.
_cleanups=
cleanup_push() { _cleanups="$1
$_cleanups"; }

_on_exit() {
	status=$?
	set +e
	printf '%s\n' "$_cleanups" | while IFS= read -r c; do
		[ -n "$c" ] && eval "$c"
	done
	if mountpoint -q "$MNT" 2>/dev/null; then
		fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -9 "$DAEMON_PID" 2>/dev/null
	fi
	if [ "$status" -ne 0 ] && [ "$status" -ne 77 ] && [ -s "$LOG" ]; then
		echo "--- daemon log (last 40 lines) ---"
		tail -n 40 "$LOG"
	fi
	rm -rf "$T"
	exit "$status"
}
trap _on_exit EXIT
trap 'exit 130' INT TERM

fail() { echo "FAIL: $TEST_NAME: $*" >&2; exit 1; }
skip() { echo "SKIP: $TEST_NAME: $*" >&2; exit 77; }
# Skip (exit 77) when a tool the test needs is missing.
require() { for c; do command -v "$c" >/dev/null 2>&1 || skip "needs $c"; done; }
require_root() { [ "$(id -u)" -eq 0 ] || skip "needs root"; [ -c /dev/fuse ] || skip "needs /dev/fuse"; }

assert_eq() { # expected actual [what]
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}

# Mount BACKING on MNT in the foreground, in the background of this shell.
# Extra arguments are passed to the daemon (e.g. -o scheduler=deadline).
mount_fs() {
	require_root
	"$FUSE_IOSCHED" -f -o "module_dir=$MODULE_DIR" "$@" "$BACKING" "$MNT" \
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
}

# Wait (10 s at most) until DAEMON_PID has exited, after WHAT.
# A daemon still there after 30 s is stuck, not slow (a loaded machine
# has taken over 10 s): its threads' stacks say where.
wait_daemon_exit() {
	i=0
	while kill -0 "$DAEMON_PID" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -ge 600 ]; then
			! command -v gdb >/dev/null 2>&1 ||
				gdb -batch -p "$DAEMON_PID" \
					-ex 'thread apply all bt' 2>&1 | tail -n 150
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

# The daemon's log must not contain errors the test did not provoke.
check_log() {
	if grep -Ei 'error|assert|sanitizer|leak' "$LOG" | grep -Ev "${1:-^$}" >&2; then
		fail "unexpected errors in the daemon log"
	fi
	return 0
}

# Compare the mount with the backing directory: same names, same contents.
compare_trees() {
	diff -r --no-dereference "$BACKING" "$MNT" || fail "mount and backing differ"
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
