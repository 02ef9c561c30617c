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
cg_no_weight_files a b
mkdir "$T/mods"
cp "$TEST_MODULE_DIR/cgweight.so" "$T/mods/"
dd if=/dev/urandom of="$BACKING/f" bs=64k count=4 status=none
printf 'group "%s" {\n\tweight = 300\n}\n' "$CG/a" >"$T/conf"

mount_fs -o "config=$T/conf" -o "module_dir=$T/mods" -o scheduler=cgweight
cat "$MNT/f" >/dev/null
cg_run "$CG/a" dd if="$MNT/f" of=/dev/null bs=64k iflag=direct status=none
cg_run "$CG/b" dd if="$MNT/f" of=/dev/null bs=64k iflag=direct status=none
dd if="$MNT/f" of=/dev/null bs=64k iflag=direct status=none
wait_for "group a in the log" grep -q "cgweight: cgroup $CG/a weight 300\$" "$LOG"
wait_for "group b in the log" grep -q "cgweight: cgroup $CG/b weight 100\$" "$LOG"
wait_for "the root in the log" grep -q "cgweight: cgroup / weight 100\$" "$LOG"
unmount_fs
check_log
