# SPDX-License-Identifier: GPL-2.0-or-later
# SIGHUP never stalls I/O.  The configuration file is read off the timer
# thread that serves cfq's idle timers: with the file on a file system
# whose daemon is stopped, the read blocks and I/O under cfq still
# completes; a FIFO (which would block a reader until it gets a writer) and
# a file over 1 MiB are refused with one clear line; a good file then
# applies.
. "$top_srcdir/tests/lib.sh"
require_root
require_module "$MODULE_DIR" cfq

# At start-up too: a FIFO is refused at once, in one line.
mkfifo "$T/fifo.conf"
st=0
timeout 10 "$FUSE_IOSCHED" --print-config -o "config=$T/fifo.conf" \
	>/dev/null 2>"$T/err" </dev/null || st=$?
assert_eq 1 "$st" "--print-config exit status with a FIFO"
assert_eq "fuse-iosched: $T/fifo.conf: not a regular file" "$(cat "$T/err")" \
	"--print-config with a FIFO"

mount_conf 'nr_requests = 128\n' scheduler=cfq
grep -q '\[cfq\]' "$MNT/.control/scheduler" || fail "cfq is not active"

# io WHAT: two O_DIRECT readers at once.  cfq idles for the process of
# the request that completed, and only its idle timer ends the wait when
# that process is done: the other reader's last requests need the timer
# thread.  A hang is a failure, not a slow run.
for f in a b; do head -c 4194304 /dev/urandom >"$BACKING/$f"; done
io() {
	for f in a b; do
		timeout 30 dd if="$MNT/$f" of=/dev/null bs=64k iflag=direct \
			status=none &
		eval "pid_$f=\$!"
	done
	# Bounded: a reader stuck in the kernel does not die of timeout.
	for f in a b; do
		eval "p=\$pid_$f"
		wait_for "I/O under cfq to complete $1" \
			sh -c "! kill -0 $p 2>/dev/null"
		wait "$p" || fail "I/O under cfq failed $1"
	done
}
io "before any reload"

# A FIFO in place of the file: refused at once, nothing waits for a writer.
rm "$C"
mkfifo "$C"
# Under a daemon that opens it blocking, a writer releases it at exit.
cleanup_push "[ -p '$C' ] && timeout 5 sh -c ': >\"$C\"'"
reload_fs
grep -q "reload failed.*$C: not a regular file" "$LOG" ||
	fail "no refusal of the FIFO: $(tail -n 3 "$LOG")"
io "after a SIGHUP with a FIFO"
rm "$C"

# Over the documented limit (1 MiB): refused.
{ printf 'nr_requests = 32\n'; head -c 1100000 /dev/zero | tr '\0' '#'; } >"$C"
reload_fs
grep -q "reload failed.*$C: larger than 1 MiB" "$LOG" ||
	fail "no refusal of a file over 1 MiB: $(tail -n 3 "$LOG")"
grep -q 'nr_requests 128 -> 32' "$LOG" && fail "a file over 1 MiB applied"

# A file on a file system that does not answer: a second mount whose
# daemon is stopped, reached through a symbolic link.
B2=$T/backing2 M2=$T/mnt2
mkdir "$B2" "$M2"
printf 'nr_requests = 64\n' >"$B2/conf"
"$FUSE_IOSCHED" -f -o "module_dir=$MODULE_DIR,scheduler=noop" "$B2" "$M2" \
	>>"$T/daemon2.log" 2>&1 &
PID2=$!
cleanup_push "fusermount3 -u '$M2' 2>/dev/null || umount -l '$M2'; timeout 30 tail --pid=$PID2 -f /dev/null"
# First of all: what waits for it can then end.
cleanup_push "kill -CONT $PID2"
wait_for "the second mount" mountpoint -q "$M2"
timeout 30 stat "$M2" >/dev/null || fail "the second mount does not answer"
ln -sf "$M2/conf" "$C"
kill -STOP "$PID2"
# stopped: every thread of the second daemon is (kill returns before).
stopped() {
	! awk '{ print $3 }' "/proc/$PID2/task/"*/stat | grep -qv T
}
wait_for "the second daemon to stop" stopped
kill -HUP "$DAEMON_PID"
# blocked: a thread of the daemon waits for the stopped one's answer.
blocked() {
	cat "/proc/$DAEMON_PID/task/"*/wchan 2>/dev/null |
		grep -q request_wait_answer
}
wait_for "the reload to block on the stopped file system" blocked
io "while the configuration file does not answer"
grep -q 'nr_requests 128 -> 64' "$LOG" && fail "applied before it was read"
kill -CONT "$PID2"
wait_for "the reload once the file answers" \
	grep -q 'configuration reload: nr_requests 128 -> 64' "$LOG"
assert_eq "64" "$(cat "$MNT/.control/nr_requests")" "nr_requests"

# And a regular file again.
rm "$C"
printf 'nr_requests = 96\n' >"$C"
reload_fs
grep -q 'configuration reload: nr_requests 64 -> 96' "$LOG" ||
	fail "a good file did not apply: $(tail -n 3 "$LOG")"
io "after the reloads"
unmount_fs
check_log 'reload failed'
exit 0
