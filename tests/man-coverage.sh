# SPDX-License-Identifier: GPL-2.0-or-later
# The pages say what the code does, checked against the code's own output
# (no mount):
# - every option --help lists is in fuse-iosched(8), every setting in
#   fuse-iosched.conf(5) and the README, each with the default and range
#   --help states (which come from config.c's settings table);
# - every log level the parser accepts is named wherever log= is;
# - the threads default the pages state is the one the code computes;
# - every tunable of every built scheduler is in fuse-iosched(8) with its
#   default, unit and range, and in etc/fuse-iosched.conf with its default,
#   as --print-config shows them; so is every setting.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99

page=$top_builddir/man/fuse-iosched.8
conf=$top_builddir/man/fuse-iosched.conf.5
readme=$top_srcdir/README
etc=$top_builddir/etc/fuse-iosched.conf
# The formatted text, so that font escapes and \- do not get in the way.
require mandoc
mandoc -Tascii "$page" | col -b >"$T/page.txt"
mandoc -Tascii "$conf" | col -b >"$T/conf.txt"
# The sections that list them, for entry().
sed -n '/^OPTIONS/,/^[A-Z]/p' "$T/page.txt" >"$T/options.txt"
sed -n '/^SETTINGS/,/^[A-Z]/p' "$T/conf.txt" >"$T/settings.txt"

# entry FILE REGEX: the text of the tagged paragraph whose tag (at
# indent 7) matches REGEX, on one line, blanks squeezed.
entry() {
	awk -v re="$2" '
		on && (/^       [^ ]/ || /^[A-Z]/) { exit }
		on { printf " %s", $0 }
		!on && $0 ~ "^       " re { on = 1; printf "%s", $0 }
	' "$1" | tr -s ' \t' '  '
}
# readme_entry NAME: README's "-o NAME" line and its continuation lines.
readme_entry() {
	awk -v o="    -o $1" '
		on && !/^                           / { exit }
		on { printf " %s", $0 }
		!on && (index($0, o "=") == 1 || index($0, o " ") == 1) { on = 1; printf "%s", $0 }
	' "$readme" | tr -s ' \t' '  '
}
# has TEXT PHRASE: TEXT contains PHRASE, not followed by a letter or digit.
has() {
	awk -v t="$1" -v p="$2" 'BEGIN {
		while ((i = index(t, p)) > 0) {
			c = substr(t, i + length(p), 1)
			if (c !~ /[A-Za-z0-9]/) exit 0
			t = substr(t, i + 1)
		}
		exit 1 }'
}

"$FUSE_IOSCHED" --help >"$T/help" || fail "--help failed"
# Ours: one line per option, continuation lines joined.
sed -n '/^fuse-iosched options/,/^Options mount/p' "$T/help" |
	awk '/^    -/ { if (l != "") print l; l = $0; next }
	     /^                           / { l = l " " $0; next }
	     END { if (l != "") print l }' | tr -s ' ' ' ' >"$T/ours"
opts=$(grep -oE -- '^ -o [a-z_]+|^ --[a-z-]+' "$T/ours" | sed 's/^ //; s/^-o //' | sort -u)
[ -n "$opts" ] || fail "no options found in --help"
n=0
for o in $opts; do
	n=$((n + 1))
	case $o in
	--*) grep -qF -- "$o" "$T/page.txt" || fail "fuse-iosched.8 lacks $o"
	     continue ;;
	esac
	man8=$(entry "$T/options.txt" "-o $o(=|\\[| |\$)")
	[ -n "$man8" ] || fail "fuse-iosched.8 lacks -o $o"
	[ "$o" = config ] && continue
	man5=$(entry "$T/settings.txt" "$o = ")
	[ -n "$man5" ] || fail "fuse-iosched.conf.5 lacks $o"
	rd=$(readme_entry "$o")
	[ -n "$rd" ] || fail "README's option list lacks -o $o"
	help=$(grep -E -- "^ -o $o(=| )" "$T/ours")
	def=$(printf '%s\n' "$help" | sed -n 's/.*(default: \(.*\))$/\1/p')
	[ -n "$def" ] || fail "--help states no default for $o: $help"
	case $def in
	/*) ;;	# a path: the build's, not the pages' /usr/local
	*)	for where in "fuse-iosched.8:$man8" "fuse-iosched.conf.5:$man5" \
			"README:$rd"; do
			has "${where#*:}" "default: $def" ||
				fail "${where%%:*} does not say 'default: $def' for $o: ${where#*:}"
		done ;;
	esac
	range=$(printf '%s\n' "$help" | grep -oE '[0-9]+ to [0-9]+' | head -n 1 || true)
	if [ -n "$range" ]; then
		has "$man8" "$range" || fail "fuse-iosched.8 lacks the range $range of $o"
		has "$man5" "$range" || fail "fuse-iosched.conf.5 lacks the range $range of $o"
	fi
done
[ $n -ge 13 ] || fail "only $n options found in --help"

# The settings SIGHUP cannot apply to a running mount, as --help lists
# them from the settings table, are the ones both pages list (SIGNALS in
# fuse-iosched(8), RELOADING in fuse-iosched.conf(5)).
# names TEXT: the setting names of "a, b, c or d", one per line, sorted.
names() { printf '%s\n' "$1" | sed 's/,/ /g; s/ or / /g' | tr -s ' \t' '\n\n' |
	grep . | sort; }
help_mount=$(tr '\n' ' ' <"$T/help" | tr -s ' ' |
	sed -n 's/.*applies at once; of \(.*\), at the next mount\..*/\1/p')
[ -n "$help_mount" ] || fail "--help does not list the mount-only settings"
names "$help_mount" >"$T/mount-help"
for where in "fuse-iosched.8:$T/page.txt:SIGNALS" \
	"fuse-iosched.conf.5:$T/conf.txt:RELOADING"; do
	f=${where#*:}; sec=${f#*:}; f=${f%%:*}
	sed -n "/^$sec/,/^[A-Z]/p" "$f" | tr '\n\t' '  ' | tr -s ' ' |
		sed -n 's/.*A change of \(.*\) cannot apply to a running mount.*/\1/p' \
		>"$T/mount-list"
	[ -s "$T/mount-list" ] || fail "${where%%:*} $sec lists no mount-only settings"
	names "$(cat "$T/mount-list")" >"$T/mount-page"
	diff "$T/mount-help" "$T/mount-page" >&2 ||
		fail "${where%%:*} $sec: the mount-only settings differ from --help's"
done

# Log levels: the names the parser accepts, from its own message.
"$FUSE_IOSCHED" --print-config -o log=nosuchlevel >/dev/null 2>"$T/err" &&
	fail "log=nosuchlevel accepted"
levels=$(sed -n 's/.*not a log level (\(.*\))$/\1/p' "$T/err" | sed 's/,//g; s/ or / /')
[ "$(echo $levels | wc -w)" -ge 4 ] || fail "no level list in: $(cat "$T/err")"
for l in $levels; do
	for where in "--help:$(grep -E -- '^ -o log=' "$T/ours")" \
		"fuse-iosched.8:$(entry "$T/options.txt" '-o log=')" \
		"fuse-iosched.conf.5:$(entry "$T/settings.txt" 'log = ')" \
		"README:$(readme_entry log)" \
		"etc/fuse-iosched.conf:$(grep -B3 '^#log = ' "$etc" | tr '\n' ' ')"; do
		has "${where#*:}" "$l" || fail "${where%%:*} does not name log level $l"
	done
done

# What --print-config shows with no file: every setting and tunable.
"$FUSE_IOSCHED" --print-config -o "module_dir=$MODULE_DIR,config=$EMPTY_CONF" \
	>"$T/config" || fail "--print-config failed"

# The threads default: "two per CPU, at least 4, at most 16" in the pages
# (checked above against --help); here against what the code computes.
cpus=$(getconf _NPROCESSORS_ONLN)
want=$(( (cpus < 2 ? 2 : cpus) * 2 ))
[ "$want" -le 16 ] || want=16
assert_eq "threads = $want" "$(grep '^threads = ' "$T/config")" \
	"the threads default on $cpus CPUs"
has "$(grep -E -- '^ -o threads=' "$T/ours")" \
	"default: two per CPU, at least 4, at most 16" ||
	fail "--help states another threads default"

# Every plain setting in etc/fuse-iosched.conf, commented out at its
# default (threads and module_dir depend on the machine and the prefix).
grep -E '^[a-z_]+ = ' "$T/config" | sed 's/"//g' | while read -r name _ value; do
	case $name in
	threads|module_dir) grep -qE "^#$name = " "$etc" ||
		fail "etc/fuse-iosched.conf lacks $name" ;;
	*) grep -qE "^#$name = $value([[:space:]]|\$)" "$etc" ||
		fail "etc/fuse-iosched.conf lacks '#$name = $value'" ;;
	esac
done

# Tunables, per scheduler section of --print-config:
# "<tab>name = def<tab># unit (min to max): what".
awk '/^[a-z0-9_-]+ \{$/ { s = $1; next }
     /^\}/ { s = ""; next }
     s != "" && $2 == "=" {
	unit = $5; if (unit ~ /^\(/) unit = ""
	r = $0; sub(/^[^(]*\(/, "", r); sub(/\).*/, "", r)
	split(r, mm, " to ")
	print s, $1, $3, (unit == "" ? "-" : unit), mm[1], mm[2] }' \
	"$T/config" >"$T/tunables"
sed -n '/^SCHEDULERS/,/^FILES/p' "$T/page.txt" >"$T/schedulers.txt"
while read -r sched tunable def unit min max; do
	# The scheduler's subsection, up to the next one.
	awk -v s="$sched" '$0 == "   " s { on = 1; next }
		/^   [a-z]/ { on = 0 } on' "$T/schedulers.txt" >"$T/sub"
	[ -s "$T/sub" ] || fail "fuse-iosched.8 has no SCHEDULERS entry for $sched"
	text=$(entry "$T/sub" "$tunable\$")
	[ -n "$text" ] || fail "fuse-iosched.8 does not document $sched tunable $tunable"
	[ "$unit" = - ] && u="" || u=" $unit"
	if [ "$min:$max" = 0:1 ]; then r="(0 or 1)"; else r="($min to $max)"; fi
	# A unitless count may be named in the page ("8 requests").
	has "$text" " $def$u $r" ||
		{ [ -z "$u" ] && printf '%s\n' "$text" |
			grep -qE " $def [a-z ]+ \\$r"; } ||
		fail "fuse-iosched.8: $sched $tunable is not '$def$u $r': $text"
	awk -v s="#$sched {" '$0 == s { on = 1; next } /^#\}/ { on = 0 } on' \
		"$etc" >"$T/etcsub"
	grep -qE "^#[[:space:]]+$tunable = $def([[:space:]]|\$)" "$T/etcsub" ||
		fail "etc/fuse-iosched.conf lacks '$tunable = $def' in #$sched { }"
done <"$T/tunables"
if [ -e "$MODULE_DIR/deadline.so" ]; then
	grep -q '^deadline read_expire 500 ms 0 3600000$' "$T/tunables" ||
		fail "deadline's tunables not parsed from --print-config: $(cat "$T/tunables")"
fi
exit 0
