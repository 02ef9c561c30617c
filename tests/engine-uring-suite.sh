#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The core tests again under -o engine=uring (TEST_ENGINE, read by
# mount_fs), in their quick form: data through the mount, O_DIRECT
# aligned and not, fsync and close after queued writes, switches of
# scheduler under load, fio's verified jobs, the ssd model's service
# times, SIGTERM and SIGINT with writes in flight, and large writes kept
# in the session thread's receive buffer.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
out=$("$FUSE_IOSCHED" --print-config -o "module_dir=$MODULE_DIR,engine=uring" \
	2>&1) || {
	case $out in
	*"without liburing"*) skip "built without liburing" ;;
	*) skip_env "io_uring refused here: $out" ;;
	esac
}
for t in fs-data fs-odirect fs-fsync-order switch-all-under-load \
	workload-fio diskmodel-ssd cli-sigterm fs-write-adopt; do
	st=0
	TEST_ENGINE=uring TEST_QUICK=1 timeout -k 10 120 bash "$top_srcdir/tests/$t.sh" \
		>"$T/$t.log" 2>&1 || st=$?
	case $st in
	0) echo "engine=uring: $t passed" ;;
	77) echo "engine=uring: $t skipped: $(grep SKIP "$T/$t.log")" ;;
	*) tail -n 30 "$T/$t.log" >&2; fail "$t failed under engine=uring" ;;
	esac
done
