#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# bfq divides the device among control groups by their weights: two real
# groups of weights 300 and 100 (their group sections: this kernel has no
# bfq weight files), one sequential O_DIRECT reader each through a mount
# with the hdd model, share what the mount dispatched 3:1 (± 20 %), as its
# .control/stats cgroup lines count it while both read.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
cg_setup a b
cg_no_weight_files a b
for g in a b; do
	dd if=/dev/urandom of="$BACKING/$g" bs=1M count=16 status=none
done
printf 'group "%s" {\n\tweight = 300\n}\ngroup "%s" {\n\tweight = 100\n}\n' \
	"$CG/a" "$CG/b" >"$T/conf"
mount_fs -o "config=$T/conf" -o scheduler=bfq -o disk_model=hdd \
	-o mb_per_s=20

# bytes GROUP: the bytes read the mount dispatched for GROUP.
bytes() {
	awk -v g="$1" '$1 == "cgroup" && $2 == g && $3 == "read" { print $7 }' \
		"$MNT/.control/stats"
}
pids=
for g in a b; do
	cg_start "$CG/$g" sh -c 'while [ ! -e "$0.stop" ]; do
		dd if="$0" of=/dev/null bs=64k iflag=direct status=none
	done' "$MNT/$g"
	pids="$pids $CG_PID"
done
cleanup_push "touch '$MNT/a.stop' '$MNT/b.stop'"
wait_for "both groups reading" sh -c \
	"[ \"\$(awk '\$1 == \"cgroup\" && \$3 == \"read\" && \$5 > 50' \
	'$MNT/.control/stats' | grep -c '$CG/')\" -ge 2 ]"
a0=$(bytes "$CG/a"); b0=$(bytes "$CG/b")
sleep 4
a1=$(bytes "$CG/a"); b1=$(bytes "$CG/b")
touch "$MNT/a.stop" "$MNT/b.stop"
ratio=$(awk -v a=$((a1 - a0)) -v b=$((b1 - b0)) \
	'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "weights 300:100, bytes $((a1 - a0)):$((b1 - b0)), ratio $ratio"
awk -v r="$ratio" 'BEGIN { exit !(r >= 2.4 && r <= 3.6) }' ||
	fail "groups of weights 300 and 100 shared $ratio, want 3 (± 20 %)"
for p in $pids; do
	wait "$p"
done
unmount_fs
check_log
