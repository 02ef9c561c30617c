# SPDX-License-Identifier: GPL-2.0-or-later
# Every kind of mistake in the configuration file: exit status 1, one line
# on stderr naming the file, the line and the problem, nothing mounted.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_module "$MODULE_DIR" deadline

C=$T/bad.conf
# expect LINE PATTERN: the file C must fail at LINE with PATTERN.
expect() {
	line=$1 pattern=$2
	for fg in -f ''; do
		st=0
		timeout 10 "$FUSE_IOSCHED" $fg -o "module_dir=$MODULE_DIR,config=$C" \
			"$BACKING" "$MNT" >"$T/out" 2>"$T/err" </dev/null || st=$?
		[ "$st" -ne 124 ] || fail "$pattern: hung"
		assert_eq 1 "$st" "exit status for '$pattern'"
		assert_eq 1 "$(wc -l <"$T/err")" "lines on stderr for '$pattern'"
		grep -qF -- "$C:$line: " "$T/err" ||
			fail "no '$C:$line:' in: $(cat "$T/err")"
		grep -Eq -- "$pattern" "$T/err" ||
			fail "no '$pattern' in: $(cat "$T/err")"
		! mountpoint -q "$MNT" || fail "mounted despite '$pattern'"
	done
}

printf 'threads = 2\n\nbogus = 1\n' >"$C"
expect 3 "'bogus' is neither a setting nor a scheduler"
printf 'deadline {\n\tread_expire = 100\n\tbogus = 1\n}\n' >"$C"
expect 3 "'bogus' is not a tunable of deadline"
printf '# c\ndeadline {\n\tread_expire = 99999999\n}\n' >"$C"
expect 3 'read_expire = 99999999: out of range \(0 to 3600000\)'
printf 'deadline {\n\tfifo_batch = many\n}\n' >"$C"
expect 2 'fifo_batch = many: not a number'
printf 'nosuchsched {\n\tx = 1\n}\n' >"$C"
expect 1 "'nosuchsched' is neither a setting nor a scheduler"
printf '\nscheduler = nosuchsched\n' >"$C"
expect 2 'no such scheduler'
printf 'threads = 0\n' >"$C"
expect 1 'threads=0: not a number from 1 to 256'
printf 'nr_requests = lots\n' >"$C"
expect 1 'nr_requests=lots'
printf 'log = loud\n' >"$C"
expect 1 'log=loud'
printf 'writeback_cache = maybe\n' >"$C"
expect 1 'writeback_cache=maybe'
printf 'threads = 2 }\n' >"$C"
expect 1 'unexpected closing brace'
printf 'threads = 2\ndeadline {\n\tread_expire = 100\n' >"$C"
expect 2 'not closed'
printf 'noop {\n}\nmodule_dir = "/elsewhere"\n' >"$C"
# Without -o module_dir, the file's own counts.
st=0
timeout 10 "$FUSE_IOSCHED" -f -o "config=$C" "$BACKING" "$MNT" \
	>"$T/out" 2>"$T/err" </dev/null || st=$?
assert_eq 1 "$st" "exit status for module_dir after a section"
grep -q "$C:3: module_dir must come before" "$T/err" ||
	fail "module_dir after a section: $(cat "$T/err")"

# A missing explicit file is an error too.
st=0
timeout 10 "$FUSE_IOSCHED" -o "config=$T/missing.conf" "$BACKING" "$MNT" \
	>"$T/out" 2>"$T/err" </dev/null || st=$?
assert_eq 1 "$st" "exit status for a missing file"
grep -q "$T/missing.conf: No such file" "$T/err" ||
	fail "missing file: $(cat "$T/err")"
! mountpoint -q "$MNT" || fail "mounted without its configuration file"
exit 0
