# SPDX-License-Identifier: GPL-2.0-or-later
# -o log=LEVEL filters the daemon's log: warning hides the info lines,
# info (the default) shows them and hides the per-request debug lines,
# debug shows those; -d adds libfuse's own debug output to ours.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

io() { echo data >"$MNT/f"; cat "$MNT/f" >/dev/null; }
for level in warning info debug -d; do
	: >"$LOG"
	case $level in
	-d) mount_fs -d -o "config=$EMPTY_CONF" ;;
	*) mount_fs -o "config=$EMPTY_CONF,log=$level" ;;
	esac
	io
	unmount_fs
	info=$(grep -c ': info: ' "$LOG" || true)
	debug=$(grep -c ': debug: dispatch ' "$LOG" || true)
	fuse=$(grep -c 'opcode: WRITE' "$LOG" || true)
	echo "$level: $info info, $debug dispatch lines, $fuse FUSE lines"
	case $level in
	warning) [ "$info" -eq 0 ] && [ "$debug" -eq 0 ] ;;
	info) [ "$info" -gt 0 ] && [ "$debug" -eq 0 ] && [ "$fuse" -eq 0 ] ;;
	debug) [ "$info" -gt 0 ] && [ "$debug" -gt 0 ] && [ "$fuse" -eq 0 ] ;;
	-d) [ "$info" -gt 0 ] && [ "$debug" -gt 0 ] && [ "$fuse" -gt 0 ] ;;
	esac || fail "log $level: wrong lines: $(cat "$LOG")"
	# libfuse's debug output shows the errno of every failed request.
	check_log 'unique: [0-9]+, error: '
done
