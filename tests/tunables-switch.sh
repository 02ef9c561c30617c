# SPDX-License-Identifier: GPL-2.0-or-later
# .control/iosched/ follows the active scheduler: empty under noop, a new
# instance with default values after switching back (or the configuration
# file's values when it sets them), and a descriptor open on one
# scheduler's tunable stops working after a switch instead of touching the
# next scheduler's fields.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

C=$MNT/.control
I=$C/iosched
listing() { ls -A "$I" | tr '\n' ' ' | sed 's/ $//'; }
DL="fifo_batch front_merges prio_aging_expire read_expire write_expire writes_starved"

mount_fs -o scheduler=deadline
assert_eq "$DL" "$(listing)" "iosched under deadline"
echo 1 >"$I/fifo_batch"
echo 0 >"$I/front_merges"
echo 100 >"$I/read_expire"

# noop has no tunables: an empty directory, and the names are gone.
echo noop >"$C/scheduler"
assert_eq "" "$(listing)" "iosched under noop"
assert_eq 2 "$(ls -la "$I" | grep -c '^d')" "ls -la iosched under noop"
[ -e "$I/fifo_batch" ] && fail "fifo_batch still exists under noop"
cat "$I/fifo_batch" 2>"$T/err" && fail "fifo_batch readable under noop"
grep -q 'No such file' "$T/err" || fail "fifo_batch under noop: $(cat "$T/err")"
(echo 3 >"$I/fifo_batch") 2>"$T/err" && fail "fifo_batch writable under noop"
# The shell's O_CREAT meets a directory where nothing can be created.
grep -q 'Operation not permitted' "$T/err" || fail "write under noop: $(cat "$T/err")"

# Back to deadline: a new instance, with the defaults.
echo deadline >"$C/scheduler"
assert_eq "$DL" "$(listing)" "iosched under deadline again"
assert_eq 16 "$(cat "$I/fifo_batch")" "fifo_batch default after switching back"
assert_eq 1 "$(cat "$I/front_merges")" "front_merges default after switching back"
assert_eq 500 "$(cat "$I/read_expire")" "read_expire default after switching back"

# Descriptors open on deadline's read_expire (4: O_APPEND, so that its
# writes are at a valid offset)...
exec 3<"$I/read_expire" 4>>"$I/read_expire"
assert_eq 500 "$(cat <&3)" "read_expire through the descriptor"
echo 600 >&4 || fail "write through the O_APPEND descriptor"
assert_eq 600 "$(cat "$I/read_expire")" "read_expire after the O_APPEND write"
# ... after a switch to anticipatory, which has a read_expire of its own,
# fails both ways and anticipatory's value stays as it was.
echo anticipatory >"$C/scheduler" || fail "anticipatory cannot be loaded"
as_read=$(cat "$I/read_expire")
cat <&3 2>"$T/err" && fail "read through a descriptor of the old scheduler"
grep -q 'No such file' "$T/err" || fail "stale read: $(cat "$T/err")"
printf '7\n' >"$T/in"
dd if="$T/in" bs=64 status=none >&4 2>"$T/err" &&
	fail "write through a descriptor of the old scheduler"
grep -q 'No such file' "$T/err" || fail "stale write: $(cat "$T/err")"
assert_eq "$as_read" "$(cat "$I/read_expire")" "anticipatory's read_expire"
# Its inode, however, can still be fstat'ed.
[ "$(stat -L -c %s /dev/fd/3)" = 4096 ] || fail "fstat of the stale descriptor"
exec 3<&- 4>&-

# Tunables read and written while the scheduler changes underneath: each
# access succeeds or fails because the name is gone (ENOENT; or EPERM when
# the shell's O_CREAT then tries to create it), and the daemon survives.
echo deadline >"$C/scheduler"
for k in 1 2; do
	(
		i=0
		while [ ! -e "$T/stop" ] && [ $i -lt 100000 ]; do
			for t in read_expire fifo_batch antic_expire; do
				if v=$(cat "$I/$t" 2>"$T/rerr$k"); then
					case $v in
					''|*[!0-9]*) echo "$t read '$v'"; exit 1 ;;
					esac
					echo $((v % 2 + 1)) 2>"$T/werr$k" >"$I/$t" ||
						grep -Eq 'No such file|not permitted' \
							"$T/werr$k" ||
						{ cat "$T/werr$k"; exit 1; }
				else
					grep -q 'No such file' "$T/rerr$k" ||
						{ cat "$T/rerr$k"; exit 1; }
				fi
			done
			i=$((i + 1))
		done
		echo "racer $k: $i rounds"
	) >"$T/racer$k.out" 2>&1 &
	eval "racer$k=\$!"
done
cleanup_push "touch '$T/stop'; wait 2>/dev/null"
for n in $(seq 1 150); do
	for s in noop deadline anticipatory; do
		echo $s >"$C/scheduler" || fail "switch to $s under tunable access"
	done
done
touch "$T/stop"
# shellcheck disable=SC2154 # set by eval above
{ wait "$racer1" && wait "$racer2"; } ||
	fail "a tunable access failed oddly: $(cat "$T"/racer*.out)"
cat "$T"/racer*.out
grep -q 'rounds' "$T/racer1.out" || fail "racer 1 did not finish"
echo deadline >"$C/scheduler"
assert_eq 16 "$(cat "$I/fifo_batch")" "fifo_batch default after the race"
unmount_fs
check_log

# With a configuration file, new instances take the file's values.
cat >"$T/conf" <<CONF
scheduler = deadline
deadline {
	fifo_batch = 4
	read_expire = 250
}
CONF
mount_fs -o "config=$T/conf"
assert_eq 4 "$(cat "$I/fifo_batch")" "fifo_batch from the file"
assert_eq 250 "$(cat "$I/read_expire")" "read_expire from the file"
assert_eq 5000 "$(cat "$I/write_expire")" "write_expire, not in the file"
echo 8 >"$I/fifo_batch"
echo 5 >"$I/writes_starved"
echo noop >"$C/scheduler"
echo deadline >"$C/scheduler"
assert_eq 4 "$(cat "$I/fifo_batch")" "fifo_batch from the file after a switch"
assert_eq 250 "$(cat "$I/read_expire")" "read_expire from the file after a switch"
assert_eq 2 "$(cat "$I/writes_starved")" "writes_starved default after a switch"
unmount_fs
check_log
