#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The daemon performs each request on the backing file with the request's
# I/O priority, as the kernel's loop driver does: while an idle-class
# reader reads through the mount, a daemon thread (the worker doing its
# reads, on the hdd model) has the idle class; before, none has.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require ionice dd truncate
mount_fs -o disk_model=hdd

# idle_threads: the daemon's threads whose I/O class is idle.
idle_threads() {
	for t in /proc/"$DAEMON_PID"/task/*; do
		ionice -p "${t##*/}" 2>/dev/null | grep -q '^idle' &&
			echo "${t##*/}"
	done
}
[ -z "$(idle_threads)" ] || fail "a daemon thread is idle before any request"

truncate -s 4G "$BACKING/f" || fail "cannot make f"
ionice -c3 dd if="$MNT/f" of=/dev/null bs=64k iflag=direct status=none &
pid=$!
cleanup_push "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
dd_wait_pos "$pid" 65536 >/dev/null
has_idle_thread() { [ -n "$(idle_threads)" ]; }
wait_for "a daemon thread in the idle class" has_idle_thread
kill "$pid"
wait "$pid" 2>/dev/null || :

unmount_fs
check_log
