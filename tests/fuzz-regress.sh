# SPDX-License-Identifier: GPL-2.0-or-later
# Replays every saved fuzz input (fuzz/corpus/NAME: seeds, fuzz/regress/NAME:
# inputs that once crashed) through a normal build of each fuzz target
# (fuzz/replay_NAME, no libFuzzer needed): none may crash, trip a sanitizer
# in a sanitizer build, or fail an invariant of the target.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99

# Real scheduler modules, so switches and config sections are exercised.
FUZZ_MODULE_DIR=$MODULE_DIR
export FUZZ_MODULE_DIR
total=0
for name in number scheduler config; do
	prog=$top_builddir/fuzz/replay_$name
	[ -x "$prog" ] || fail "$prog is not built (make check builds it)"
	set --
	for d in "$top_srcdir/fuzz/corpus/$name" "$top_srcdir/fuzz/regress/$name"; do
		[ -d "$d" ] && set -- "$@" "$d"
	done
	[ $# -gt 0 ] || fail "no inputs for $name"
	st=0
	(cd "$T" && "$prog" "$@") >"$T/$name.out" 2>"$T/$name.err" || st=$?
	if [ "$st" -ne 0 ] || grep -Ei 'sanitizer|runtime error|invariant' "$T/$name.err" >&2; then
		tail -n 30 "$T/$name.err" >&2
		fail "replay_$name failed (status $st)"
	fi
	n=$(sed -n 's/.*: \([0-9]*\) inputs replayed$/\1/p' "$T/$name.out")
	expect=$(find "$@" -type f ! -name '.*' | wc -l)
	assert_eq "$expect" "$n" "inputs replayed by replay_$name"
	echo "$name: $n inputs"
	total=$((total + n))
done
[ "$total" -ge 3 ] || fail "only $total inputs replayed"
