#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Modules are code run as root: a module file or module directory that
# someone other than root (or the daemon's user) could have changed is
# refused, with a log line that says why, and a trusted copy of the same
# module loads.  Cases: a world-writable module file, a group-writable
# one, a directory owned by another user, a world-writable directory
# (sticky or not), a module that is a symbolic link (to a trusted file),
# and a directory above module_dir owned by another user or writable by
# others: one log line names that directory.  Above module_dir, a sticky
# directory writable by others (/tmp) is fine: a tree under one loads.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require python3
[ -f "$MODULE_DIR/deadline.so" ] || skip "$MODULE_DIR/deadline.so is not built"

S=$MNT/.control/scheduler
switch_fails() { [ "$(write_errno "$S" "$1")" != ok ]; }

# case DIR-SETUP FILE-SETUP WANT [MODS]: mount with a fresh module
# directory (MODS, else $T/mods) holding deadline.so, changed by the two
# commands; deadline must be refused at mount and at a switch, with WANT
# in the log line.
refused() {
	local mods=${4:-$T/mods}
	rm -rf "$T/mods" "$T/up"; mkdir -p -m 755 "$mods"
	cp "$MODULE_DIR/deadline.so" "$mods/"
	chmod 755 "$mods/deadline.so"
	eval "$1"; eval "$2"
	: >"$LOG"
	# The last module_dir given wins over lib.sh's.
	mount_fs -o "module_dir=$mods,scheduler=noop"
	scheduler_listed deadline && fail "$3: deadline was loaded"
	switch_fails deadline || fail "$3"
	grep 'refused: ' "$LOG" | grep -qF -- "$3" ||
		fail "$3: no log line: $(cat "$LOG")"
	unmount_fs
	grep 'refused' "$LOG" | head -n 1
}

refused : 'chmod o+w "$mods/deadline.so"' 'writable by others'
refused : 'chmod g+w "$mods/deadline.so"' 'writable by its group'
refused 'chown nobody "$mods"' : 'owned by uid'
refused 'chmod 777 "$mods"' : 'writable by others'
refused : 'chown nobody "$mods/deadline.so"' 'owned by uid'
refused 'chmod 1777 "$mods"' : 'writable by others'
refused : 'mv "$mods/deadline.so" "$T/trusted.so"
	ln -s "$T/trusted.so" "$mods/deadline.so"' 'deadline.so: refused: a symbolic link'
# Above module_dir: the line names the directory, canonical ($T may be
# reached through a link).
up=$(realpath "$T")/up
refused 'chown nobody "$T/up"' : \
	"$T/up/mods: refused: $up is owned by uid 65534, neither root nor" \
	"$T/up/mods"
refused 'chown nobody "$T/up/a"' : \
	"$T/up/a/b/mods: refused: $up/a is owned by uid 65534" "$T/up/a/b/mods"
refused 'chmod 777 "$T/up"' : \
	"refused: $up is writable by others (mode 777)" "$T/up/mods"

# The same module, trusted, loads; and the build tree's modules load
# (the test suite depends on it: check their modes here).
rm -rf "$T/mods" "$T/up"
mkdir -m 755 "$T/mods"
cp "$MODULE_DIR/deadline.so" "$T/mods/"
chmod 755 "$T/mods/deadline.so"
mount_fs -o "module_dir=$T/mods,scheduler=deadline"
unmount_fs
# Under a sticky directory writable by others, whose entry is root's.
mkdir -p "$T/up/mods"
chmod 1777 "$T/up"
cp "$T/mods/deadline.so" "$T/up/mods/"
mount_fs -o "module_dir=$T/up/mods,scheduler=deadline"
unmount_fs
mount_fs
for m in deadline anticipatory cfq bfq kyber; do
	scheduler_listed $m || fail "$m from $MODULE_DIR not loaded: $(grep refused "$LOG")"
done
unmount_fs
check_log 'refused'
