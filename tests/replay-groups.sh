# SPDX-License-Identifier: GPL-2.0-or-later
# The replay carries each request's control group from a trace of ours
# (the C and Q lines' "cgroup PATH") and applies weights given as
# -o /GROUP=WEIGHT, so that an experiment with groups replays offline:
# two sequential readers in groups /a and /b share 3:1 under bfq with
# weights 300 and 100 (Jain's index over the two, 0.8), equally without
# weights or with the groups left out of the trace; the same with the
# configuration file's group sections; a bad weight is refused.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
: "${FUSE_IOSCHED_REPLAY:=$top_builddir/replay/fuse-iosched-replay}"
replay() { "$FUSE_IOSCHED_REPLAY" -o "module_dir=$MODULE_DIR" "$@"; }
jain_of() { awk '$1 == "bfq" { print $NF }' "$1"; }
# between A LO HI: LO <= A <= HI, decimals.
between() { awk -v a="$1" -v l="$2" -v h="$3" 'BEGIN { exit !(a >= l && a <= h) }'; }

# Two readers of 64 KiB requests, 1 ms apart, for 2 s; the second group's
# path has a blank, escaped as the daemon escapes it.
awk 'BEGIN {
	print "# fuse-iosched trace 1: dev cpu seq time pid action rwbs " \
	      "sector + count [comm] cgroup PATH"
	for (i = 0; i < 2000; i++) {
		t = sprintf("%d.%09d", int(i / 1000), (i % 1000) * 1000000)
		printf "  0,0    0 %8d %15s   101  Q  RS %d + 128 [ra] " \
		       "cgroup /a\n", 2 * i + 1, t, i * 128
		printf "  0,0    0 %8d %15s   102  Q  RS %d + 128 [rb] " \
		       "cgroup /b\\x20c\n", 2 * i + 2, t, 50000000 + i * 128
	}
}' >"$T/groups.trace"
sed 's/ cgroup .*//' "$T/groups.trace" >"$T/plain.trace"

run() {
	replay -s bfq --closed-loop --time-based=2 "$@" >"$T/out" ||
		fail "replay $* failed: $(cat "$T/out")"
	jain_of "$T/out"
}
j=$(run -o '/a=300' -o '/b c=100' "$T/groups.trace")
between "$j" 0.75 0.85 || fail "weights 300:100: Jain $j, want 0.8 (3:1)"
j=$(run -o '/a=100' -o '/b c=300' "$T/groups.trace")
between "$j" 0.75 0.85 || fail "weights 100:300: Jain $j, want 0.8 (1:3)"
j=$(run "$T/groups.trace")
between "$j" 0.97 1 || fail "default weights: Jain $j, want 1"
# The configuration file's group sections, as the mount reads them; -o
# over them.
printf 'group "/a" {\n\tweight = 300\n}\ngroup "/b c" {\n\tweight = 100\n}\n' \
	>"$T/conf"
j=$(run -o "config=$T/conf" "$T/groups.trace")
between "$j" 0.75 0.85 || fail "group sections 300:100: Jain $j, want 0.8"
j=$(run -o "config=$T/conf" -o '/a=100' "$T/groups.trace")
between "$j" 0.97 1 || fail "-o over the sections: Jain $j, want 1"
j=$(run -o '/a=300' -o '/b c=100' "$T/plain.trace")
between "$j" 0.97 1 || fail "no groups in the trace: Jain $j, want 1"

for bad in '/a=0' '/a=1001' '/a=x' '/a'; do
	replay -s bfq -o "$bad" "$T/groups.trace" >"$T/out" 2>&1 &&
		fail "-o $bad accepted"
	grep -q "want /GROUP=WEIGHT" "$T/out" || fail "-o $bad: $(cat "$T/out")"
done
exit 0
