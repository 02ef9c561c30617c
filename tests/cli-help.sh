# SPDX-License-Identifier: GPL-2.0-or-later
# -h/--help and -V/--version print to stdout and exit 0 without mounting.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99

version=$(sed -n 's/^#define PACKAGE_VERSION "\(.*\)"$/\1/p' \
	"$top_builddir/config.h")
[ -n "$version" ] || fail "no PACKAGE_VERSION in $top_builddir/config.h"

for opt in -h --help; do
	st=0
	timeout 10 "$FUSE_IOSCHED" $opt >"$T/out" 2>"$T/err" </dev/null || st=$?
	assert_eq 0 "$st" "exit status of $opt"
	grep -qi 'usage' "$T/out" || fail "$opt: no usage line on stdout"
	# The help must show our own options, not just libfuse's.
	for word in scheduler= threads= nr_requests= module_dir=; do
		grep -q -- "$word" "$T/out" || fail "$opt: help does not mention $word"
	done
done

for opt in -V --version; do
	st=0
	timeout 10 "$FUSE_IOSCHED" $opt >"$T/out" 2>"$T/err" </dev/null || st=$?
	assert_eq 0 "$st" "exit status of $opt"
	grep -qF "$version" "$T/out" ||
		fail "$opt: version $version not on stdout: $(cat "$T/out")"
done

# Help and version must win over missing arguments, and mount nothing.
grep -qF "$T" /proc/mounts && fail "something got mounted"
exit 0
