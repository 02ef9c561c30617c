# SPDX-License-Identifier: GPL-2.0-or-later
# Another user holds at most 64 control files open at once (each costs
# the daemon a buffer); the next open fails with EMFILE, the daemon goes
# on serving, and the user who mounted is not limited.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require setpriv python3
chmod 0755 "$T"

mount_fs -o allow_other
opens() { # HOW-MANY: open that many, print the count opened and why not
	python3 - "$MNT/.control/stats" "$1" <<'PY'
import errno, os, sys
fds, why = [], "-"
for _ in range(int(sys.argv[2])):
    try:
        fds.append(os.open(sys.argv[1], os.O_RDONLY))
    except OSError as e:
        why = errno.errorcode[e.errno]
        break
print(len(fds), why)
PY
}
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "$(declare -f opens); MNT='$MNT' opens 200")
assert_eq "64 EMFILE" "$out" "nobody's opens of 200"
# The limit is per user, held files only: the user who mounted is free,
# and nobody may open again once its files are closed.
assert_eq "200 -" "$(opens 200)" "root's opens of 200"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups bash -c "$(declare -f opens); MNT='$MNT' opens 10")
assert_eq "10 -" "$out" "nobody's opens after closing"
grep -q 'uid 65534 has 64 files open: EMFILE' "$LOG" || fail "the refusal is not logged"
cat "$MNT/.control/scheduler" >/dev/null || fail "the daemon stopped serving"
unmount_fs
check_log 'files open: EMFILE'
