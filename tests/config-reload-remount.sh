# SPDX-License-Identifier: GPL-2.0-or-later
# On SIGHUP a changed setting that cannot change on a running mount is
# logged, "NAME OLD -> NEW: it takes effect at the next mount"; one
# applied live is not.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root

mount_conf '' scheduler=noop,threads=2
cat >"$C" <<CONF
threads = 3
max_background = 20
writeback_cache = yes
disk_model = hdd
seek_ms = 9
rpm = 5400
mb_per_s = 99
nr_requests = 100
CONF
reload_fs
grep -q 'reload failed' "$LOG" && fail "reload failed"
for change in 'max_background 64 -> 20' 'writeback_cache no -> yes' \
	'disk_model none -> hdd' 'seek_ms 8 -> 9' 'rpm 7200 -> 5400' \
	'mb_per_s 150 -> 99'; do
	assert_eq 1 "$(grep -c "warning: configuration reload: $change: it takes effect at the next mount\$" "$LOG")" \
		"warnings for '$change'"
done
# threads comes from -o, so the file's value is no change; nr_requests
# is applied.
grep -q 'configuration reload: threads' "$LOG" && fail "-o threads reported as changed"
grep -q 'nr_requests.*next mount' "$LOG" && fail "nr_requests said to wait for a remount"
assert_eq 100 "$(cat "$MNT/.control/nr_requests")" "nr_requests applied live"
unmount_fs
check_log
exit 0
