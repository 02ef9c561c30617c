#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/mutations.txt follows the code: every entry's old text is found
# once in its file, and every test it names exists (check-mutations
# --applies).  A list that has drifted makes `make check-mutations`
# report errors instead of catches, long after the change that broke it.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require python3
"$top_srcdir/tests/check-mutations" --applies "$top_srcdir" ||
	fail "tests/mutations.txt does not follow the code"
exit 0
