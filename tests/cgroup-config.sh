#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# A group section of the configuration file limits a group whose kernel
# files set nothing: its reader gets 5 to 15 MiB/s of its rbps of 10 MiB/s
# (a sibling without a section is not throttled); --print-config shows
# the section; a bad value is refused with the file and the line.  With
# -o groups=off neither the section nor the kernel's limit applies, and
# the trace charges every request to the root group.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
dio_backing 160
cg_setup a b
dd if=/dev/urandom of="$BACKING/f" bs=1M count=40 status=none
cat >"$T/conf" <<CONF
group "$CG/a" {
	rbps = 10M
	weight = 300
}
CONF

"$FUSE_IOSCHED" -o "config=$T/conf" -o "module_dir=$MODULE_DIR" \
	--print-config >"$T/printed" || fail "--print-config failed"
grep -q "^group \"$CG/a\" {" "$T/printed" || fail "no group section printed"
grep -q "^	rbps = 10485760\$" "$T/printed" || fail "rbps not printed"
grep -q "^	weight = 300\$" "$T/printed" || fail "weight not printed"

mount_fs -o "config=$T/conf"
limited=$(mib_per_s 30 cg_run "$CG/a" dd if="$MNT/f" of=/dev/null bs=1M \
	count=30 iflag=direct status=none)
free=$(mib_per_s 40 cg_run "$CG/b" dd if="$MNT/f" of=/dev/null bs=1M \
	iflag=direct status=none)
echo "configured 10 MiB/s: $limited MiB/s; its sibling: $free MiB/s"
in_band "$limited" 5 15 || fail "the configured group read at $limited MiB/s"
in_band "$free" 40 1000000 || fail "the sibling read at $free MiB/s"
unmount_fs

# groups=off: the section and the kernel's own limit both ignored.
cg_limit "$CG/b" rbps $((10 * MIB))
mount_fs -o "config=$T/conf" -o groups=off
trace_start "$T/trace"
for g in a b; do
	r=$(mib_per_s 30 cg_run "$CG/$g" dd if="$MNT/f" of=/dev/null \
		bs=1M count=30 iflag=direct status=none)
	echo "groups=off, group $g: $r MiB/s"
	in_band "$r" 40 1000000 || fail "groups=off: group $g read at $r MiB/s"
done
wait_for "reads in the trace" grep -q " C  *RS .* cgroup /\$" "$T/trace"
! grep -q "cgroup $CG" "$T/trace" || fail "groups=off: a group in the trace"
trace_stop
unmount_fs

# A bad section: refused at start, naming the file and the line.
printf 'group "%s" {\n\trbps = 10X\n}\n' "$CG/a" >"$T/bad"
"$FUSE_IOSCHED" -o "config=$T/bad" -o "module_dir=$MODULE_DIR" \
	"$BACKING" "$MNT" 2>"$T/err" && fail "a bad rbps was taken"
grep -q "$T/bad:2: group $CG/a: rbps = 10X: not a number" "$T/err" ||
	fail "bad rbps: $(cat "$T/err")"
printf 'group "relative" {\n\tweight = 5\n}\n' >"$T/bad"
"$FUSE_IOSCHED" -o "config=$T/bad" -o "module_dir=$MODULE_DIR" \
	"$BACKING" "$MNT" 2>"$T/err" && fail "a relative group path was taken"
grep -q "not a control group path" "$T/err" || fail "relative: $(cat "$T/err")"
check_log
