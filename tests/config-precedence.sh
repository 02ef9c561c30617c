# SPDX-License-Identifier: GPL-2.0-or-later
# Built-in defaults < configuration file < -o options: seen by
# --print-config without mounting, then on a real mount through .control.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99

md="module_dir=$MODULE_DIR"
cat >"$T/file.conf" <<CONF
scheduler = noop
nr_requests = 64
deadline {
	read_expire = 250
}
CONF

# setting CONFIG OPTIONS...: the value --print-config shows
setting() {
	name=$1 conf=$2
	shift 2
	"$FUSE_IOSCHED" --print-config -o "$md,config=$conf" "$@" >"$T/out" ||
		fail "--print-config failed: $(cat "$T/out")"
	sed -n "s/^[[:space:]]*$name = \"\{0,1\}\([^\"]*\)\"\{0,1\}.*/\1/p" "$T/out" | head -n 1
}

assert_eq deadline "$(setting scheduler "$EMPTY_CONF")" "built-in scheduler"
assert_eq 128 "$(setting nr_requests "$EMPTY_CONF")" "built-in nr_requests"
# tunable CONFIG NAME: deadline's NAME as --print-config shows it
tunable() {
	"$FUSE_IOSCHED" --print-config -o "$md,config=$1" |
		awk -v n="$2" '/^deadline \{/ { on = 1 } /^\}/ { on = 0 }
			on && $1 == n { print $3 }'
}
if [ -e "$MODULE_DIR/deadline.so" ]; then
	assert_eq 500 "$(tunable "$EMPTY_CONF" read_expire)" "built-in read_expire"
	assert_eq 250 "$(tunable "$T/file.conf" read_expire)" "file read_expire"
fi
assert_eq noop "$(setting scheduler "$T/file.conf")" "file scheduler"
assert_eq 64 "$(setting nr_requests "$T/file.conf")" "file nr_requests"
assert_eq 32 "$(setting nr_requests "$T/file.conf" -o nr_requests=32)" \
	"-o over the file"
# The order of -o and config= on the command line does not matter.
assert_eq 32 "$("$FUSE_IOSCHED" --print-config -o nr_requests=32 \
	-o "$md,config=$T/file.conf" | sed -n 's/^nr_requests = //p')" \
	"-o before config="

# The printed configuration reads back as the same configuration.
"$FUSE_IOSCHED" --print-config -o "$md,config=$T/file.conf" \
	-o threads=3 | grep -v '^#' >"$T/p1"
grep -v '^#' "$T/p1" >"$T/p1.conf"
"$FUSE_IOSCHED" --print-config -o "config=$T/p1.conf" | grep -v '^#' >"$T/p2"
diff "$T/p1" "$T/p2" || fail "--print-config output does not read back the same"

# On a real mount.
require_root
mount_fs -o "config=$T/file.conf,nr_requests=48"
grep -q '\[noop\]' "$MNT/.control/scheduler" ||
	fail "file's scheduler not active: $(cat "$MNT/.control/scheduler")"
assert_eq 48 "$(cat "$MNT/.control/nr_requests")" "mounted nr_requests"
unmount_fs
if [ -e "$MODULE_DIR/deadline.so" ]; then
	mount_fs -o "config=$T/file.conf,scheduler=deadline"
	grep -q '\[deadline\]' "$MNT/.control/scheduler" ||
		fail "-o scheduler not active: $(cat "$MNT/.control/scheduler")"
	assert_eq 64 "$(cat "$MNT/.control/nr_requests")" "file's nr_requests"
	if [ -d "$MNT/.control/iosched" ]; then
		assert_eq 250 "$(cat "$MNT/.control/iosched/read_expire")" \
			"file's read_expire on the mount"
	fi
	unmount_fs
fi
grep -q "configuration $T/file.conf" "$LOG" || fail "mount line does not name the file"
check_log
exit 0
