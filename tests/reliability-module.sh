#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Scheduler modules that are missing at switch time, appear later, are
# removed after loading, are refused by the loader, or fail their init:
# a switch either works or fails with an error, and the scheduler in charge
# before it stays in charge and keeps serving I/O.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3
require_module "$MODULE_DIR" deadline anticipatory
require_module "$TEST_MODULE_DIR" failinit badabi abi2

S=$MNT/.control/scheduler
# switch NAME: prints the errno name of a failed write, or "ok".
switch() { write_errno "$S" "$1"; }

# A module directory with deadline and failinit only; anticipatory and
# badabi come later.
mkdir "$T/mods"
cp "$MODULE_DIR/deadline.so" "$TEST_MODULE_DIR/failinit.so" "$T/mods/"
mount_fs -o "module_dir=$T/mods" -o scheduler=deadline
echo "at mount: $(cat "$S")"
assert_eq deadline "$(scheduler_active)" "scheduler at mount"
scheduler_listed failinit || fail "failinit.so did not load: $(cat "$S")"
scheduler_listed anticipatory && fail "anticipatory listed without its module"

echo "--- missing at switch time"
assert_eq EINVAL "$(switch anticipatory)" "switch to a missing module"
assert_eq deadline "$(scheduler_active)" "after switching to a missing module"
io_works "after a missing module"

echo "--- appears after mount: loaded on demand"
cp "$MODULE_DIR/anticipatory.so" "$T/mods/"
assert_eq ok "$(switch anticipatory)" "switch to a module copied in after mount"
assert_eq anticipatory "$(scheduler_active)" "after the late module"
io_works "on the late module"

echo "--- removed after loading: still there"
rm "$T/mods/deadline.so"
assert_eq ok "$(switch deadline)" "switch to a loaded module whose file is gone"
assert_eq deadline "$(scheduler_active)" "after switching to deadline"
io_works "on deadline"

echo "--- refused by the loader (wrong ABI version)"
cp "$TEST_MODULE_DIR/badabi.so" "$T/mods/"
r=$(switch badabi)
[ "$r" != ok ] || fail "switch to a module of another ABI succeeded"
echo "badabi: $r"
assert_eq deadline "$(scheduler_active)" "after a refused module"
scheduler_listed badabi && fail "a refused module is listed"
grep -q "badabi.*ABI version 1, this daemon needs 3" "$LOG" || fail "no log line says why badabi was refused"
# ABI 2 nested its hooks in struct elevator_ops: refused, both versions named.
cp "$TEST_MODULE_DIR/abi2.so" "$T/mods/"
[ "$(switch abi2)" != ok ] || fail "switch to a module of ABI 2 succeeded"
scheduler_listed abi2 && fail "a module of ABI 2 is listed"
grep -q "abi2.*ABI version 2, this daemon needs 3" "$LOG" || fail "no log line says why abi2 was refused"
io_works "after a refused module"

echo "--- init fails"
for from in deadline noop anticipatory; do
	assert_eq ok "$(switch $from)" "switch to $from"
	r=$(switch failinit)
	[ "$r" != ok ] || fail "switch to failinit succeeded"
	echo "$from -> failinit: $r"
	assert_eq "$from" "$(scheduler_active)" "after failinit's init failed, from $from"
	io_works "on $from after failinit"
done

# Still alive and switching; the daemon counted no phantom switch.
assert_eq ok "$(switch noop)" "final switch"
compare_trees
unmount_fs
# The failures provoked above are logged; nothing else.
check_log 'badabi|abi2|failinit|anticipatory\.so'
