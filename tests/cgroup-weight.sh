#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# What a scheduler is told of a request's group (the cgweight test module
# logs it): its path as /proc/PID/cgroup has it, and its weight, from its
# group section when it has no weight file (this machine's kernel has no
# bfq: its weight files are absent); 100 for a group without either, and
# for the root group.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require_module "$TEST_MODULE_DIR" cgweight
cg_setup a b
for g in a b; do
	for f in io.bfq.weight io.weight blkio.bfq.weight blkio.weight; do
		[ ! -e "$CG_ROOT$CG/$g/$f" ] ||
			skip "the kernel has $f: the section's weight is not used"
	done
done
mkdir "$T/mods"
cp "$TEST_MODULE_DIR/cgweight.so" "$T/mods/"
dd if=/dev/urandom of="$BACKING/f" bs=64k count=4 status=none
printf 'group "%s" {\n\tweight = 300\n}\n' "$CG/a" >"$T/conf"

"$FUSE_IOSCHED" -f -o "config=$T/conf" -o "module_dir=$T/mods" \
	-o scheduler=cgweight "$BACKING" "$MNT" >>"$LOG" 2>&1 &
DAEMON_PID=$!
wait_for "the mount" mountpoint -q "$MNT"
cat "$MNT/f" >/dev/null
cg_run "$CG/a" dd if="$MNT/f" of=/dev/null bs=64k iflag=direct status=none
cg_run "$CG/b" dd if="$MNT/f" of=/dev/null bs=64k iflag=direct status=none
dd if="$MNT/f" of=/dev/null bs=64k iflag=direct status=none
wait_for "group a in the log" grep -q "cgweight: cgroup $CG/a weight 300\$" "$LOG"
wait_for "group b in the log" grep -q "cgweight: cgroup $CG/b weight 100\$" "$LOG"
wait_for "the root in the log" grep -q "cgweight: cgroup / weight 100\$" "$LOG"
unmount_fs
check_log
