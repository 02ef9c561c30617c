# Every option the program accepts (as --help lists them) and every tunable
# of every built scheduler (as --print-config lists them) is documented in
# fuse-iosched(8), and every setting in fuse-iosched.conf(5).  No mount.
. "$top_srcdir/tests/lib.sh"

page=$top_srcdir/man/fuse-iosched.8
conf=$top_srcdir/man/fuse-iosched.conf.5
# The formatted text, so that font escapes and \- do not get in the way.
require mandoc
mandoc -Tascii "$page" | col -b >"$T/page.txt"
mandoc -Tascii "$conf" | col -b >"$T/conf.txt"

"$FUSE_IOSCHED" --help >"$T/help" || fail "--help failed"
# Ours: "-o name=..." and "-o name", and long options, from our part only.
sed -n '/^fuse-iosched options/,/^$/p' "$T/help" >"$T/ours"
opts=$(grep -oE -- '-o [a-z_]+|--[a-z-]+' "$T/ours" | sed 's/^-o //' | sort -u)
[ -n "$opts" ] || fail "no options found in --help"
n=0
for o in $opts; do
	n=$((n + 1))
	case $o in
	--*) grep -qF -- "$o" "$T/page.txt" || fail "fuse-iosched.8 lacks $o" ;;
	*) grep -qE -- "-o $o(=|$|[ [])" "$T/page.txt" ||
		fail "fuse-iosched.8 lacks -o $o" ;;
	esac
done
[ $n -ge 8 ] || fail "only $n options found in --help"
for s in scheduler threads nr_requests module_dir max_background \
	writeback_cache log; do
	grep -qE "^ +$s = " "$T/conf.txt" || fail "fuse-iosched.conf.5 lacks $s"
done

# Tunables, per scheduler section of --print-config.
: >"$T/empty.conf"
"$FUSE_IOSCHED" --print-config -o "module_dir=$MODULE_DIR,config=$T/empty.conf" \
	>"$T/config" || fail "--print-config failed"
awk '/^[a-z0-9_-]+ \{$/ { s = $1; next }
     /^\}/ { s = ""; next }
     s != "" && $2 == "=" { print s, $1 }' "$T/config" >"$T/tunables"
sed -n '/^SCHEDULERS/,/^FILES/p' "$T/page.txt" >"$T/schedulers.txt"
while read -r sched tunable; do
	# The scheduler's subsection, up to the next one.
	awk -v s="$sched" '$0 == "   " s { on = 1; next }
		/^   [a-z]/ { on = 0 } on' "$T/schedulers.txt" >"$T/sub"
	[ -s "$T/sub" ] || fail "fuse-iosched.8 has no SCHEDULERS entry for $sched"
	grep -qE "^ +$tunable\$" "$T/sub" ||
		fail "fuse-iosched.8 does not document $sched tunable $tunable"
done <"$T/tunables"
if [ -e "$MODULE_DIR/deadline.so" ]; then
	grep -q '^deadline read_expire$' "$T/tunables" ||
		fail "deadline's tunables not found in --print-config"
fi
exit 0
