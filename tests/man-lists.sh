#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every list the documentation keeps is the list the programs report, in
# both directions, so that the next option, key, tunable, control file,
# counter or metric added (or removed) on one side only fails here:
# - the options of fuse-iosched, fuse-iosched-replay and fuse-iosched-stat
#   (--help) and the tags of their pages' OPTIONS;
# - the settings --print-config shows, the SETTINGS of
#   fuse-iosched.conf(5), etc/fuse-iosched.conf and the README's options;
# - each scheduler's tunables (--print-config, and .control/iosched/ on a
#   mount, which has the read-only ones too), its subsection of
#   fuse-iosched(8) SCHEDULERS and its section of etc/fuse-iosched.conf;
# - on a mount: the files of .control/ and the tags of CONTROL FILES and
#   the README's list, the lines and fields of .control/stats, each
#   scheduler's counters and its "Counters" paragraph, the metrics served
#   and the tags of METRICS, and the settings a reload says take effect
#   at the next mount and the lists of SIGNALS in fuse-iosched(8) and
#   RELOADING in fuse-iosched.conf(5).
# The pages are formatted with groff (man -l's formatter) into one line
# per paragraph: a tag is found at the indent of its list, so a tag that
# an unclosed .RS pushes into the item above it counts as missing.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require groff col curl python3
: "${FUSE_IOSCHED_REPLAY:=$top_builddir/replay/fuse-iosched-replay}"
: "${FUSE_IOSCHED_STAT:=$top_builddir/stat/fuse-iosched-stat}"
page() { # NAME: the page, formatted
	f=$top_srcdir/man/$1
	[ -f "$f" ] || f=$top_builddir/man/$1
	groff -Tutf8 -man -rLL=5000n "$f" 2>/dev/null | col -bx
}
page fuse-iosched.8 >"$T/p8"
page fuse-iosched.conf.5 >"$T/p5"
page fuse-iosched-replay.1 >"$T/p1r"
page fuse-iosched-stat.1 >"$T/p1s"
etc=$top_builddir/etc/fuse-iosched.conf
readme=$top_srcdir/README
# section FILE NAME: the lines of section NAME.
section() { awk -v s="$2" '$0 == s { on = 1; next } on && /^[A-Z]/ { exit } on' "$1"; }
# tags: the first word of each line at the list's indent (7), from stdin.
tags() { sed -n 's/^       \([^ ].*\)/\1/p' | awk '{ print $1 }'; }
# same WHAT FILE-A NAME-A FILE-B NAME-B: the same set of lines.
same() {
	sort -u "$2" >"$T/a"; sort -u "$4" >"$T/b"
	[ -s "$T/a" ] || fail "$1: nothing found in $3"
	[ -s "$T/b" ] || fail "$1: nothing found in $5"
	only_a=$(comm -23 "$T/a" "$T/b" | tr '\n' ' ')
	only_b=$(comm -13 "$T/a" "$T/b" | tr '\n' ' ')
	[ -z "$only_a$only_b" ] ||
		fail "$1: ${only_a:+in $3 only: $only_a}${only_a:+${only_b:+; }}${only_b:+in $5 only: $only_b}"
}

# --- fuse-iosched's options: its --help (its own and libfuse's) and the
# tags of OPTIONS, "-o name" for "-o name=value" and "-o name[=yes|no]".
"$FUSE_IOSCHED" --help >"$T/help" 2>&1 || fail "--help failed"
opts() { grep -oE -- '(^|[ ,])(-o [a-z_]+|--[a-z-]+|-[a-zA-Z])\b' | sed 's/^[ ,]//'; }
grep -E '^ {4}-' "$T/help" | sed 's/  \+[a-z(].*//' | opts | sort -u >"$T/help.opts"
section "$T/p8" OPTIONS | grep '^       -' | sed 's/^ *//; s/[=[].*//; s/  .*//' |
	opts | sort -u >"$T/page.opts"
# Ours must all be in the page; the page's must all exist.
sed -n '/^fuse-iosched options/,/^Options mount/p' "$T/help" | grep -E '^ {4}-' |
	sed 's/  \+[a-z(].*//' | opts | sort -u >"$T/ours.opts"
comm -23 "$T/ours.opts" "$T/page.opts" | grep . &&
	fail "fuse-iosched.8 OPTIONS lacks the options above"
comm -13 "$T/help.opts" "$T/page.opts" | grep . &&
	fail "fuse-iosched.8 OPTIONS documents options --help does not have (above)"

# --- fuse-iosched-replay's and fuse-iosched-stat's options.
"$FUSE_IOSCHED_REPLAY" --help >"$T/rhelp" || fail "replay --help failed"
grep -E '^ +-' "$T/rhelp" | sed 's/  \+[a-z(].*//' | grep -oE -- '--[a-z-]+|-[a-zA-Z]\b' |
	sort -u >"$T/a1"
section "$T/p1r" OPTIONS | grep '^       -' | sed 's/^ *//; s/[=[ ].*//; s/,$//' >"$T/b1"
section "$T/p1r" OPTIONS | grep -oE '^       -[a-z], --[a-z-]+' | grep -oE -- '--[a-z-]+' >>"$T/b1"
same "fuse-iosched-replay's options" "$T/a1" "--help" "$T/b1" "fuse-iosched-replay.1"
# The mount settings -o takes: the list of --help and of the page.
awk '/-o NAME=VALUE/ { on = 1; sub(/.*mount option:/, "") }
	on && /^ +-/ { exit } on' "$T/rhelp" | grep -oE '[a-z_]+' >"$T/a1"
awk '/^       -o name=value/ { getline; print; exit }' <(section "$T/p1r" OPTIONS) |
	sed 's/.*one of the mount options//; s/, as fuse-iosched(8) reads them.*//' |
	sed 's/([^)]*)//g' | grep -oE '[a-z_]+' | grep -vxE 'and|the|hdd|ssd|model|per|direction' >"$T/b1"
same "the mount settings fuse-iosched-replay takes" "$T/a1" "--help" "$T/b1" "fuse-iosched-replay.1"
"$FUSE_IOSCHED_STAT" -h >"$T/shelp" || fail "stat -h failed"
grep -oE '^ +-[a-z]' "$T/shelp" | tr -d ' ' >"$T/a1"
section "$T/p1s" OPTIONS | grep -oE '^       -[a-z]' | tr -d ' ' >"$T/b1"
same "fuse-iosched-stat's options" "$T/a1" "-h" "$T/b1" "fuse-iosched-stat.1"

# --- Settings: --print-config, conf(5) SETTINGS, etc, the README.
: >"$T/empty.conf"
"$FUSE_IOSCHED" --print-config -o "module_dir=$MODULE_DIR,config=$T/empty.conf" \
	>"$T/config" || fail "--print-config failed"
sed -n 's/^\([a-z_]*\) = .*/\1/p' "$T/config" >"$T/keys"
# A group section is no key: --print-config shows one only when given.
section "$T/p5" SETTINGS | tags | grep -vx -e 'scheduler' -e 'group' >"$T/b1"
grep -q '^       scheduler = ' <(section "$T/p5" SETTINGS) && echo scheduler >>"$T/b1"
grep -q '^       group "' <(section "$T/p5" SETTINGS) ||
	fail "fuse-iosched.conf.5 SETTINGS has no group section"
same "settings" "$T/keys" "--print-config" "$T/b1" "fuse-iosched.conf.5 SETTINGS"
sed -n 's/^#\([a-z_]*\) = .*/\1/p' "$etc" >"$T/b1"
same "settings" "$T/keys" "--print-config" "$T/b1" "etc/fuse-iosched.conf"
sed -n 's/^    -o \([a-z_]*\)[= ].*/\1/p' "$readme" | grep -vx config >"$T/b1"
same "settings" "$T/keys" "--print-config" "$T/b1" "README's option list"

# page_tunables SCHED: the tags of its subsection of SCHEDULERS.
page_tunables() {
	section "$T/p8" SCHEDULERS | awk -v s="   $1" '$0 == s { on = 1; next }
		/^   [a-z]/ { on = 0 } on' | grep -E '^       [a-z_]+$' | tags
}

# --- Tunables, per scheduler: --print-config's sections, the SCHEDULERS
# subsections (at indent 3) and their tags, etc/fuse-iosched.conf's.
sed -n 's/^\([a-z0-9_-]*\) {$/\1/p' "$T/config" >"$T/scheds"
section "$T/p8" SCHEDULERS | sed -n 's/^   \([a-z0-9_-][a-z0-9_-]*\)$/\1/p' >"$T/b1"
# noop has no tunables, hence no section in --print-config.
echo noop >>"$T/scheds"
same "schedulers" "$T/scheds" "--print-config" "$T/b1" "fuse-iosched.8 SCHEDULERS"
for s in $(cat "$T/scheds"); do
	awk -v s="$s {" '$0 == s { on = 1; next } /^\}/ { on = 0 }
		on && $2 == "=" { print $1 }' "$T/config" >"$T/a1"
	[ "$s" = noop ] && continue
	# The page has them all (and the read-only ones: see below).
	page_tunables "$s" >"$T/b1"
	comm -23 <(sort -u "$T/a1") <(sort -u "$T/b1") | grep . &&
		fail "fuse-iosched.8 SCHEDULERS lacks $s's tunables above"
	awk -v s="#$s {" '$0 == s { on = 1; next } /^#\}/ { on = 0 }
		on { sub(/^#[[:space:]]+/, ""); if ($2 == "=") print $1 }' "$etc" >"$T/b1"
	same "$s's tunables" "$T/a1" "--print-config" "$T/b1" "etc/fuse-iosched.conf"
done

# --- On a mount.
require_root
P=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Everything from the file, so that a reload may change it all.
cp "$T/config" "$T/m.conf"
sed -i "s|^module_dir = .*|module_dir = \"$MODULE_DIR\"|; s|^metrics = .*|metrics = \":$P\"|" "$T/m.conf"
"$FUSE_IOSCHED" -f -o "config=$T/m.conf" "$BACKING" "$MNT" >>"$LOG" 2>&1 &
DAEMON_PID=$!
wait_for "the mount" mountpoint -q "$MNT"
timeout 30 stat "$MNT" >/dev/null || fail "the mount does not answer"

# Control files: the directory, CONTROL FILES' tags, the README's.
(cd "$MNT/.control" && for f in *; do
	if [ -d "$f" ]; then echo "$f/"; else echo "$f"; fi; done) >"$T/a1"
section "$T/p8" 'CONTROL FILES' | tags | grep -E '^[a-z_]+/?$' >"$T/b1"
same "control files" "$T/a1" ".control/" "$T/b1" "fuse-iosched.8 CONTROL FILES"
sed -n '/^The .control directory/,/^[A-Z][a-z]* [a-z]*$/p' "$readme" |
	sed -n 's/^`\([a-z_/]*\)`$/\1/p' >"$T/b1"
same "control files" "$T/a1" ".control/" "$T/b1" "README"

# The lines of stats (their first words) and the fields of each kind,
# with a scheduler that has counters (their lines).
echo cfq >"$MNT/.control/scheduler"
dd if=/dev/zero of="$MNT/f" bs=64k count=4 conv=fsync status=none
dd if="$MNT/f" of=/dev/null bs=64k status=none
cat "$MNT/.control/stats" >"$T/stats"
stats_doc=$(section "$T/p8" 'CONTROL FILES' | awk '/^       stats/ { on = 1; next }
	on && /^       [a-z]/ { exit } on')
awk '{ print $1 }' "$T/stats" | sort -u >"$T/a1"
printf '%s\n' "$stats_doc" | sed -n 's/^              \([a-z_]*\)\(, \([a-z_]*\)\)\{0,1\}$/\1\n\3/p;
	s/^              \([a-z_]*\)\(, \([a-z_]*\)\)\{0,1\}  .*/\1\n\3/p;
	s/^              \([a-z_]*\)\(, \([a-z_]*\)\)\{0,1\} [A-Z].*/\1\n\3/p' | grep . >"$T/b1"
same "the lines of .control/stats" "$T/a1" ".control/stats" "$T/b1" "fuse-iosched.8 stats"
# Fields: the names in name value pairs of each line kind, in the page.
for kind in read queue memory wait; do
	awk -v k="$kind" '$1 == k { for (i = 2; i < NF; i++)
		if ($i ~ /^[a-z_0-9]*[a-z][a-z_0-9]*$/ && $i != "read" && $i != "write" &&
		    $i != "be" && $i != "rt" && $i != "idle") print $i; exit }' "$T/stats" |
		sort -u >"$T/a1"
	for f in $(cat "$T/a1"); do
		printf '%s\n' "$stats_doc" | grep -qw -- "$f" ||
			fail "fuse-iosched.8 stats does not document the field $f of $kind lines"
	done
done

# Each scheduler's counters: in its subsection's "Counters" paragraph,
# whose bold words (in the page's source), tunables aside, are counters.
src=$top_srcdir/man/fuse-iosched.8.in
for s in $(cat "$T/scheds"); do
	echo "$s" >"$MNT/.control/scheduler" || fail "switch to $s"
	# Its tunables, the read-only ones included: .control/iosched/.
	ls "$MNT/.control/iosched" >"$T/a1"
	page_tunables "$s" >"$T/b1"
	if [ ! -s "$T/a1" ]; then
		[ ! -s "$T/b1" ] || fail "$s has no tunables, yet the page lists: $(cat "$T/b1")"
	else
		same "$s's tunables" "$T/a1" ".control/iosched/" "$T/b1" "fuse-iosched.8 SCHEDULERS"
	fi
	awk -v s="$s" '$1 == "scheduler" && $2 == s { print $3 }' \
		"$MNT/.control/stats" | sort -u >"$T/a1"
	awk -v s=".SS $s" '$0 == s { on = 1; next } /^\.S[SH] / { on = 0 }
		on && /^Counters/ { c = 1; next } c && /^\.(TP|PP|IP|SS|SH)/ { c = 0 }
		c && /^\.BR? / { print $2 }' "$src" | tr -d '",' |
		grep -vxF -e scheduler -e "$(awk -v s="$s {" '$0 == s { on = 1; next }
			/^\}/ { on = 0 } on && $2 == "=" { print $1 }' "$T/config")" |
		grep -E '^[a-z_]+$' | sort -u >"$T/b1"
	if [ ! -s "$T/a1" ]; then
		[ ! -s "$T/b1" ] || fail "$s has no counters, yet the page lists: $(cat "$T/b1")"
		continue
	fi
	same "$s's counters" "$T/a1" ".control/stats" "$T/b1" "fuse-iosched.8 SCHEDULERS"
done

# Metrics: those served (with cfq active: its counters have samples),
# and the names METRICS's tags list.
echo cfq >"$MNT/.control/scheduler"
curl -sf --max-time 10 "http://127.0.0.1:$P/metrics" >"$T/metrics" ||
	fail "no metrics on :$P"
sed -n 's/^# TYPE \([a-z_]*\) .*/\1/p' "$T/metrics" >"$T/a1"
section "$T/p8" METRICS | grep -E '^       fuse_iosched_' |
	grep -oE '^ *[a-z_, ]+$|^ *fuse_iosched_[a-z_]+' |
	grep -oE 'fuse_iosched_[a-z_]+' >"$T/b1"
same "metrics" "$T/a1" "/metrics" "$T/b1" "fuse-iosched.8 METRICS"

# Settings that take effect at the next mount: change every one in the
# file, reload, and collect those the daemon says so of.
python3 - "$T/m.conf" "$MODULE_DIR" <<'PY' || fail "cannot edit the file"
import re, sys
path, moddir = sys.argv[1], sys.argv[2]
swap = {"scheduler": '"noop"', "module_dir": '"%s/."' % moddir,
	"writeback_cache": "yes", "log": '"debug"', "disk_model": '"hdd"',
	"backing_io": '"buffered"', "engine": '"uring"', "metrics": '"off"', "overmount": "yes", "groups": "no",
	"log_file": '"%s.log"' % path}
out = []
for line in open(path):
	m = re.match(r'^([a-z_]+) = (.*)$', line)
	if m and m.group(1) in swap:
		line = "%s = %s\n" % (m.group(1), swap[m.group(1)])
	elif m and m.group(2).isdigit():
		v = int(m.group(2))
		line = "%s = %d\n" % (m.group(1), v - 1 if v > 1 else v + 1)
	out.append(line)
open(path, "w").write("".join(out))
PY
kill -HUP "$DAEMON_PID"
wait_for "the reload" grep -q 'configuration reloaded from' "$LOG"
sed -n 's/.*configuration reload: \([a-z_]*\) .*takes effect at the next mount.*/\1/p' \
	"$LOG" >"$T/a1"
n=$(grep -cE 'configuration reload: [a-z_]+ ' "$LOG")
[ "$n" -ge "$(wc -l <"$T/keys")" ] ||
	fail "the reload reported $n changes, for $(wc -l <"$T/keys") settings changed: $(grep reload "$LOG")"
# listed FILE SECTION: the names in its "A change of ... cannot apply".
listed() {
	section "$1" "$2" | grep -o 'A change of .* cannot apply' |
		sed 's/A change of //; s/ cannot apply//' | grep -oE '[a-z_]+' |
		grep -vxE 'or|and'
}
listed "$T/p8" SIGNALS >"$T/b1"
same "settings for the next mount" "$T/a1" "the reload's log" "$T/b1" "fuse-iosched.8 SIGNALS"
listed "$T/p5" RELOADING >"$T/b1"
same "settings for the next mount" "$T/a1" "the reload's log" "$T/b1" "fuse-iosched.conf.5 RELOADING"
unmount_fs
exit 0
