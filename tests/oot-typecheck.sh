#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The header's table macros check a field's type at compile time: a module
# declaring an int (or a long long, or an unsigned) field as a tunable, or
# a uint32_t one as a counter, must not compile, as C with $CC and as C++
# with $CXX, while the same module with int64_t and uint64_t fields does.
# Without the check the host would write 8 bytes into a 4-byte field.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
: "${CC:=cc}" "${CXX:=g++}"
require "$CC" "$CXX"

# One module, the field types given on the command line.
cat >"$T/mod.c" <<'EOC'
#include <fuse-iosched/elevator.h>

struct m_data {
	TUNABLE_TYPE knob;
	COUNTER_TYPE events;
};

static const struct elv_tunable m_tunables[] = {
	ELV_TUNABLE(struct m_data, knob, 1, 0, 10, "", "a knob"),
	{ NULL, 0, 0, 0, 0, NULL, NULL, 0, NULL, NULL },
};

static const struct elv_counter m_counters[] = {
	ELV_COUNTER(struct m_data, events),
	{ NULL, 0 },
};

const struct elv_tunable *m_tunables_p = m_tunables;
const struct elv_counter *m_counters_p = m_counters;
EOC
cp "$T/mod.c" "$T/mod.cpp"

# build LANG TUNABLE_TYPE COUNTER_TYPE: compile, the log in $T/log.
build() {
	local cc=$CC src=$T/mod.c std=-std=gnu11
	[ "$1" = c++ ] && cc=$CXX src=$T/mod.cpp std=-std=c++11
	"$cc" $std -Wall -Wextra -Werror -fsyntax-only \
		-I"$top_srcdir/include" -DTUNABLE_TYPE="$2" \
		-DCOUNTER_TYPE="$3" "$src" >"$T/log" 2>&1
}

for lang in c c++; do
	build $lang int64_t uint64_t ||
		fail "$lang: a well-typed module does not compile: $(cat "$T/log")"
	for t in int 'long long' uint64_t int32_t; do
		! build $lang "$t" uint64_t ||
			fail "$lang: a $t field compiles as a tunable"
		[ $lang = c++ ] || grep -q "must be an int64_t" "$T/log" ||
			fail "$lang: no message names the tunable's type: $(cat "$T/log")"
	done
	for t in uint32_t int64_t unsigned; do
		! build $lang int64_t "$t" ||
			fail "$lang: a $t field compiles as a counter"
		[ $lang = c++ ] || grep -q "must be a uint64_t" "$T/log" ||
			fail "$lang: no message names the counter's type: $(cat "$T/log")"
	done
	echo "$lang: well-typed fields compile, the others do not"
done
