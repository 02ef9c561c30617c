# SPDX-License-Identifier: GPL-2.0-or-later
# .control/scheduler lists what a switch would find now: a module
# installed after mounting is listed at the next read (and a write of its
# name switches to it); one removed before it was loaded is no longer
# listed; one loaded stays listed and switchable, its file removed or not.
# Names no switch could load are not listed, and never more than the
# registry could hold; another user's reads see the same.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require setpriv
require_module "$MODULE_DIR" deadline kyber cfq

S=$MNT/.control/scheduler
mods=$T/mods
mkdir -m 755 "$mods"
cp "$MODULE_DIR/deadline.so" "$mods/"
# nobody must be able to walk to the mountpoint.
chmod 755 "$T"
mount_fs -o "module_dir=$mods" -o scheduler=deadline -o allow_other
assert_eq "noop [deadline]" "$(cat "$S")" "the list at mount"

cp "$MODULE_DIR/kyber.so" "$MODULE_DIR/cfq.so" "$mods/"
cp "$MODULE_DIR/kyber.so" "$mods/Kyber.so"
cp "$MODULE_DIR/kyber.so" "$mods/kyber.so.1"
assert_eq "noop [deadline] cfq kyber" "$(cat "$S")" "after installing cfq and kyber"
echo kyber >"$S" || fail "switch to the new kyber"
assert_eq "noop deadline [kyber] cfq" "$(cat "$S")" "after switching to kyber"

rm "$mods/cfq.so"
assert_eq "noop deadline [kyber]" "$(cat "$S")" "after removing cfq"
err=$( (echo cfq >"$S") 2>&1) && fail "switch to a removed cfq"
echo "$err" | grep -q 'Invalid argument' || fail "switch to a removed cfq: $err"

# Loaded: it stays, and switches, as a kernel module until rmmod.
rm "$mods/kyber.so"
echo deadline >"$S"
assert_eq "noop [deadline] kyber" "$(cat "$S")" "after removing kyber"
echo kyber >"$S" || fail "switch to the loaded kyber"
echo deadline >"$S"

# A directory full of names: the list stops at what the registry holds.
i=0
while [ $i -lt 100 ]; do : >"$mods/z$i.so"; i=$((i + 1)); done
n=$(wc -w <"$S")
[ "$n" -le 64 ] || fail "$n names listed, more than the registry holds"
[ "$n" -ge 60 ] || fail "only $n names listed"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
assert_eq "$(cat "$S")" "$(as_nobody cat "$S")" "the list as nobody reads it"
unmount_fs
check_log 'switch refused|No such file'
