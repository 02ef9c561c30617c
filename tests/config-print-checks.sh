# SPDX-License-Identifier: GPL-2.0-or-later
# --print-config refuses what a mount refuses, with the same one line on
# stderr and exit status 1: an unknown scheduler, an option libfuse does
# not know, a missing BACKING, a metrics port in use or a metrics address
# that does not resolve.  Neither mounts (the mount fails before).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_module "$MODULE_DIR" deadline

base="module_dir=$MODULE_DIR,config=$EMPTY_CONF"
# same WHAT BACKING OPTIONS...: --print-config and a mount fail alike.
same() {
	what=$1 backing=$2
	shift 2
	st=0
	timeout 10 "$FUSE_IOSCHED" --print-config "$@" "$backing" "$MNT" \
		>"$T/out" 2>"$T/print.err" </dev/null || st=$?
	assert_eq 1 "$st" "--print-config exit status for $what"
	[ ! -s "$T/out" ] || fail "--print-config printed a configuration for $what"
	st=0
	timeout 10 "$FUSE_IOSCHED" -f "$@" "$backing" "$MNT" \
		>"$T/out" 2>"$T/mount.err" </dev/null || st=$?
	assert_eq 1 "$st" "mount exit status for $what"
	! mountpoint -q "$MNT" || fail "mounted despite $what"
	assert_eq 1 "$(wc -l <"$T/mount.err")" "lines on stderr for $what"
	diff "$T/mount.err" "$T/print.err" >&2 ||
		fail "$what: --print-config and the mount say different things"
}

same "-o scheduler=nope" "$BACKING" -o "$base,scheduler=nope"
grep -q "unknown scheduler 'nope'" "$T/print.err" || fail "$(cat "$T/print.err")"
same "-o nosuchoption" "$BACKING" -o "$base,nosuchoption"
grep -q "nosuchoption" "$T/print.err" || fail "$(cat "$T/print.err")"
same "a missing BACKING" "$T/missing" -o "$base"
grep -q "$T/missing" "$T/print.err" || fail "$(cat "$T/print.err")"

# The metrics socket: a port in use, an address that does not resolve.
if command -v python3 >/dev/null 2>&1; then
	python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
print(s.getsockname()[1], flush=True)
time.sleep(120)
' >"$T/port" &
	holder=$!
	cleanup_push "kill $holder 2>/dev/null"
	wait_for "the port holder" test -s "$T/port"
	port=$(cat "$T/port")
	same "a metrics port in use" "$BACKING" -o "$base,metrics=:$port"
	grep -q "$port" "$T/print.err" || fail "$(cat "$T/print.err")"
	kill "$holder"
fi
same "a metrics host that does not resolve" "$BACKING" \
	-o "$base,metrics=nowhere.invalid:9100"
grep -q "nowhere.invalid" "$T/print.err" || fail "$(cat "$T/print.err")"

# Valid options: both accept them (the mount part needs no check here).
"$FUSE_IOSCHED" --print-config -o "$base,scheduler=noop,allow_other" \
	"$BACKING" "$MNT" >"$T/out" || fail "--print-config refused valid options"
grep -qxF 'scheduler = "noop"' "$T/out" || fail "$(cat "$T/out")"
exit 0
