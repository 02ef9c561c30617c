# SPDX-License-Identifier: GPL-2.0-or-later
# -o metrics=:PORT serves Prometheus metrics on the loopback: valid for
# promtool, following the I/O, the scheduler, its switches and its own
# counters; the config key works too; a bad address or a port in use fails
# before mounting.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require curl promtool python3
# A port nothing listens on now (another process may take it before us:
# then the mount fails, visibly).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
scrape() { curl -sf --max-time 10 "http://127.0.0.1:$1/metrics"; }
# metric LINE-START FILE: the value of the sample that starts so.
metric() { awk -v m="$1" 'index($0, m " ") == 1 { print $NF }' "$2"; }
# mount_fails WHAT OPTIONS: the daemon refuses, says what, mounts nothing.
mount_fails() {
	if "$FUSE_IOSCHED" -o "module_dir=$MODULE_DIR,$2" "$BACKING" "$MNT" \
		2>"$T/err"; then
		mountpoint -q "$MNT" && fusermount3 -u "$MNT"
		fail "$1: mounted"
	fi
	mountpoint -q "$MNT" && fail "$1: left a mount"
	grep -q "metrics=" "$T/err" || fail "$1: message: $(cat "$T/err")"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "$1: not one line: $(cat "$T/err")"
}

mount_fails "no port" "metrics=localhost"
mount_fails "port 0" "metrics=:0"
mount_fails "port too big" "metrics=:65536"
mount_fails "unknown host" "metrics=no-such-host.invalid:9100"
mount_fails "bare IPv6" "metrics=::1:9100"

P=$(free_port)
mount_fs -o "metrics=:$P,scheduler=deadline"
# Loopback only: listening on 127.0.0.1:P, not on any address.
hex=$(printf '%04X' "$P")
grep -q "^ *[0-9]*: 0100007F:$hex 00000000:0000 0A" /proc/net/tcp ||
	fail "not listening on 127.0.0.1:$P"
if grep -q "^ *[0-9]*: 00000000:$hex " /proc/net/tcp; then
	fail "listening on every address"
fi

# The same port again fails the mount, before mounting.
M1=$MNT; MNT=$T/mnt2; mkdir "$MNT"
mount_fails "port in use" "metrics=:$P"
grep -q "in use" "$T/err" || fail "port in use: $(cat "$T/err")"
MNT=$M1

dd if=/dev/urandom of="$MNT/f" bs=64k count=16 oflag=direct status=none
dd if="$MNT/f" of=/dev/null bs=64k iflag=direct status=none
scrape "$P" >"$T/m1" || fail "scrape failed"
promtool check metrics <"$T/m1" || fail "promtool check metrics failed"
for d in read write; do
	v=$(metric "fuse_iosched_requests_total{direction=\"$d\"}" "$T/m1")
	[ "${v:-0}" -ge 16 ] || fail "$d requests_total: '$v', want >= 16"
	v=$(metric "fuse_iosched_sectors_total{direction=\"$d\"}" "$T/m1")
	[ "${v:-0}" -ge 2048 ] || fail "$d sectors_total: '$v', want >= 2048"
	assert_eq 0 "$(metric "fuse_iosched_in_flight{direction=\"$d\"}" "$T/m1")" \
		"$d in_flight when idle"
done
# A histogram: +Inf bucket = _count = dispatched reads of class be.
n=$(metric 'fuse_iosched_wait_seconds_count{direction="read",class="be"}' "$T/m1")
assert_eq "$n" "$(metric 'fuse_iosched_wait_seconds_bucket{direction="read",class="be",le="+Inf"}' "$T/m1")" \
	"+Inf bucket"
assert_eq "$n" "$(metric 'fuse_iosched_dispatched_total{direction="read"}' "$T/m1")" \
	"read wait count"
assert_eq 1 "$(metric 'fuse_iosched_scheduler_info{scheduler="deadline"}' "$T/m1")" \
	"scheduler_info"
assert_eq 128 "$(metric fuse_iosched_nr_requests "$T/m1")" "nr_requests"
# Which mount: its paths in the labels of an info metric.
assert_eq 1 "$(metric "fuse_iosched_mount_info{mountpoint=\"$MNT\",backing=\"$BACKING\"}" "$T/m1")" \
	"mount_info"
s0=$(metric fuse_iosched_scheduler_switches_total "$T/m1")

echo noop >"$MNT/.control/scheduler"
echo 64 >"$MNT/.control/nr_requests"
scrape "$P" >"$T/m2" || fail "second scrape failed"
assert_eq $((s0 + 1)) "$(metric fuse_iosched_scheduler_switches_total "$T/m2")" \
	"switches after a switch"
assert_eq 1 "$(metric 'fuse_iosched_scheduler_info{scheduler="noop"}' "$T/m2")" \
	"scheduler_info after the switch"
grep -q 'scheduler="deadline"' "$T/m2" && fail "the old scheduler still listed"
grep -q '^fuse_iosched_scheduler_events_total' "$T/m2" &&
	fail "noop has no counters, yet some are listed"

# A scheduler's own counters, under its name, counting this instance.
echo cfq >"$MNT/.control/scheduler"
dd if="$MNT/f" of=/dev/null bs=64k iflag=direct status=none
scrape "$P" >"$T/m4" || fail "scrape under cfq failed"
promtool check metrics <"$T/m4" || fail "promtool check metrics failed under cfq"
v=$(metric 'fuse_iosched_scheduler_events_total{scheduler="cfq",counter="set_active"}' "$T/m4")
[ "${v:-0}" -ge 1 ] || fail "cfq set_active: '$v', want >= 1"
assert_eq "$v" "$(awk '$1 == "scheduler" && $2 == "cfq" && $3 == "set_active" { print $4 }' "$MNT/.control/stats")" \
	"set_active in .control/stats"
echo noop >"$MNT/.control/scheduler"
assert_eq 64 "$(metric fuse_iosched_nr_requests "$T/m2")" "nr_requests after a write"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P/other")
assert_eq 404 "$code" "another path"
# Oversized headers are refused, and the endpoint keeps serving.
big=$(head -c 20000 /dev/zero | tr '\0' a)
code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" \
	"http://127.0.0.1:$P/metrics")
case $code in 4??) ;; *) fail "20 kB of headers: HTTP $code, want 4xx" ;; esac
scrape "$P" >/dev/null || fail "scrape after oversized headers failed"
unmount_fs
# The port is free again once the daemon has gone.
grep -q "^ *[0-9]*: 0100007F:$hex 00000000:0000 0A" /proc/net/tcp &&
	fail "still listening after unmount"

# The configuration key.
P=$(free_port)
printf 'metrics = ":%s"\n' "$P" >"$T/m.conf"
mount_fs -o "config=$T/m.conf"
scrape "$P" >"$T/m3" || fail "scrape with the config key failed"
grep -q '^fuse_iosched_scheduler_info{' "$T/m3" || fail "no scheduler_info"
unmount_fs

# Paths with what the text format escapes (backslash, double quote,
# newline) and a byte that is not UTF-8: escaped, U+FFFD for the byte,
# still valid for promtool.
M0=$MNT B0=$BACKING
MNT=$T/$'m "q" \\b\nn\xff'; BACKING=$T/$'b\xffk'
mkdir "$MNT" "$BACKING"
ODD=$MNT
cleanup_push 'fusermount3 -u "$ODD" 2>/dev/null'
P=$(free_port)
mount_fs -o "metrics=:$P"
scrape "$P" >"$T/m5" || fail "scrape with odd paths failed"
promtool check metrics <"$T/m5" || fail "promtool: odd paths: $(grep mount_info "$T/m5")"
want="fuse_iosched_mount_info{mountpoint=\"$T/m \\\"q\\\" \\\\b\\nn"$'\xef\xbf\xbd'"\",backing=\"$T/b"$'\xef\xbf\xbd'"k\"} 1"
assert_eq "$want" "$(grep '^fuse_iosched_mount_info' "$T/m5")" "mount_info with odd paths"
unmount_fs
MNT=$M0 BACKING=$B0
check_log
