# SPDX-License-Identifier: GPL-2.0-or-later
# Relative paths: a missing one given with -o is one clear line on stderr
# and exit status 1, and a relative module_dir in the file is refused (the
# file is read again after the daemon moved to /).  No mount.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99

# run WHAT PATTERN ARGS...: exit status 1, one line matching PATTERN.
run() {
	what=$1 pattern=$2
	shift 2
	st=0
	(cd "$T" && timeout 10 "$FUSE_IOSCHED" "$@" >"$T/out" 2>"$T/err" \
		</dev/null) || st=$?
	assert_eq 1 "$st" "exit status for $what"
	assert_eq 1 "$(wc -l <"$T/err")" "lines on stderr for $what"
	grep -qE -- "$pattern" "$T/err" || fail "$what: $(cat "$T/err")"
}

run "a missing relative module_dir" \
	'module_dir=nomods: No such file or directory' \
	--print-config -o module_dir=nomods
run "a missing relative config=" \
	'config=etc/no.conf: No such file or directory' \
	--print-config -o config=etc/no.conf
printf 'module_dir = "mods"\n' >"$T/rel.conf"
run "a relative module_dir in the file" \
	"$T/rel.conf:1: module_dir=mods: not an absolute path" \
	--print-config -o "module_dir=$MODULE_DIR,config=$T/rel.conf"

# Existing ones are shown absolute (empty.conf is lib.sh's $EMPTY_CONF).
mkdir "$T/mods"
(cd "$T" && "$FUSE_IOSCHED" --print-config -o module_dir=mods,config=empty.conf) \
	>"$T/out" || fail "--print-config with relative paths failed"
grep -qxF "module_dir = \"$(cd "$T" && pwd -P)/mods\"" "$T/out" ||
	fail "module_dir not absolute: $(grep module_dir "$T/out")"
grep -qF "< $(cd "$T" && pwd -P)/empty.conf <" "$T/out" ||
	fail "config file not absolute: $(head -n 2 "$T/out")"
exit 0
