# SPDX-License-Identifier: GPL-2.0-or-later
# Every -o option of ours takes effect, mixed with FUSE's own; options
# mount(8) passes along are accepted; --help mentions every option.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

"$FUSE_IOSCHED" --help >"$T/help" || fail "--help failed"
for word in config= scheduler= threads= nr_requests= module_dir= \
	max_background= writeback_cache log= --print-config; do
	grep -q -- "$word" "$T/help" || fail "--help does not mention $word"
done

base="module_dir=$MODULE_DIR,config=$EMPTY_CONF"

# What --print-config shows for each option.
"$FUSE_IOSCHED" --print-config -o "$base,scheduler=noop,threads=3" \
	-o nr_requests=77,max_background=20,writeback_cache,log=debug \
	>"$T/out" || fail "--print-config failed"
for kv in 'scheduler = "noop"' 'threads = 3' 'nr_requests = 77' \
	'max_background = 20' 'writeback_cache = yes' 'log = "debug"' \
	"module_dir = \"$MODULE_DIR\""; do
	grep -qxF "$kv" "$T/out" || fail "--print-config lacks '$kv': $(cat "$T/out")"
done
"$FUSE_IOSCHED" --print-config -o "$base,writeback_cache=no" |
	grep -qx 'writeback_cache = no' || fail "writeback_cache=no"

# A mount with all of them, FUSE options and mount(8)'s mixed in.
mount_fs -o "config=$EMPTY_CONF,scheduler=noop,threads=3,nr_requests=77" \
	-o max_background=20,writeback_cache,log=debug,allow_other \
	-o defaults,nofail,noauto,_netdev,user,relatime,nodiratime \
	-o x-systemd.automount,comment=fstab,rw,nosuid,nodev
grep -q '\[noop\]' "$MNT/.control/scheduler" || fail "scheduler=noop"
assert_eq 77 "$(cat "$MNT/.control/nr_requests")" "nr_requests"
grep -q 'scheduler noop, 3 workers' "$LOG" || fail "threads=3 not in the log"
grep -q 'debug:' "$LOG" || fail "log=debug: no debug lines"
grep " $MNT " /proc/mounts | grep -q allow_other || fail "allow_other"
echo hello >"$MNT/f"
assert_eq hello "$(cat "$BACKING/f")" "write through the mount"
unmount_fs
check_log
exit 0
