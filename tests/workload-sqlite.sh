# SPDX-License-Identifier: GPL-2.0-or-later
# SQLite on the mount, with a rollback journal and with WAL: thousands of
# rows inserted, updated and deleted in transactions, two writers at once,
# then integrity_check, and the database read through BACKING agrees.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh" || exit 99
require_root
require sqlite3

sql() { sqlite3 -batch -bail "$@" </dev/null; }

# Deterministic content, so that the expected checksum can be computed.
workload() { # DB JOURNAL_MODE
	sqlite3 -batch -bail "$1" <<SQL >/dev/null || fail "$2: workload failed"
PRAGMA journal_mode=$2;
PRAGMA synchronous=FULL;
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
CREATE INDEX t_k ON t(k);
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
INSERT INTO t SELECT i, (i * 7919) % 10007, printf('%0*d', 50 + i % 400, i) FROM n;
COMMIT;
BEGIN;
UPDATE t SET v = v || 'updated', k = k + 1 WHERE id % 3 = 0;
COMMIT;
BEGIN;
DELETE FROM t WHERE id % 7 = 0;
COMMIT;
BEGIN;
UPDATE t SET v = 'rolled back' WHERE id % 2 = 0;
ROLLBACK;
SQL
	# Many small transactions, each fsync'd.
	i=0
	while [ $i -lt 20 ]; do
		echo "BEGIN; INSERT INTO t VALUES($((30000 + i)), $i, zeroblob(5000)); COMMIT;"
		i=$((i + 1))
	done | sqlite3 -batch -bail "$1" || fail "$2: small transactions failed"
}

# Two processes inserting into one database at the same time.
concurrent() { # DB
	pids=
	for w in 1 2; do
		(
			i=0
			while [ $i -lt 20 ]; do
				echo "BEGIN IMMEDIATE;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
INSERT INTO t SELECT $w * 1000000 + $i * 1000 + i, $w, 'concurrent' FROM n;
COMMIT;"
				i=$((i + 1))
			done | sqlite3 -batch -bail -cmd '.timeout 30000' "$1"
		) &
		pids="$pids $!"
	done
	st=0
	# Not a bare wait: the daemon is a background job of this shell too.
	for p in $pids; do wait "$p" || st=$?; done
	assert_eq 0 "$st" "concurrent writers"
}

# noop, and every scheduler module that was built.
SCHEDULERS=noop
for so in "$MODULE_DIR"/*.so; do
	[ ! -e "$so" ] || SCHEDULERS="$SCHEDULERS $(basename "$so" .so)"
done
# TEST_QUICK=1 (slow builds, e.g. under TSan): noop and one module only.
[ -z "${TEST_QUICK:-}" ] || SCHEDULERS=$(echo $SCHEDULERS | cut -d' ' -f1,2)

CHECKSUM="SELECT count(*), sum(id), sum(k), sum(length(v)), min(v), max(v) FROM t;"

for sched in $SCHEDULERS; do
	mount_fs -o scheduler=$sched
	for mode in DELETE WAL; do
		db=db-$sched-$mode.sqlite
		workload "$MNT/$db" $mode
		concurrent "$MNT/$db"
		assert_eq ok "$(sql "$MNT/$db" 'PRAGMA integrity_check;')" "$sched $mode: integrity_check"
		assert_eq "$(echo "$mode" | tr A-Z a-z)" "$(sql "$MNT/$db" 'PRAGMA journal_mode;')" \
			"$sched $mode: journal mode"
		# 10000 - 1428 deleted + 20 small + 2 * 2000 concurrent
		assert_eq 12592 "$(sql "$MNT/$db" 'SELECT count(*) FROM t;')" "$sched $mode: row count"
		assert_eq 0 "$(sql "$MNT/$db" "SELECT count(*) FROM t WHERE v = 'rolled back';")" \
			"$sched $mode: rolled back rows"
		sql "$MNT/$db" "$CHECKSUM" >"$T/sum.mnt"
		sql "$MNT/$db" .sha3sum >"$T/sha.mnt"
		# No connection is open: the journal or WAL is gone, and BACKING holds
		# the same bytes and the same rows.
		[ ! -e "$MNT/$db-wal" ] || [ ! -s "$MNT/$db-wal" ] || fail "$sched $mode: WAL left behind"
		cmp "$MNT/$db" "$BACKING/$db" || fail "$sched $mode: files differ"
		assert_eq ok "$(sql "$BACKING/$db" 'PRAGMA integrity_check;')" \
			"$sched $mode: integrity_check in BACKING"
		sql "$BACKING/$db" "$CHECKSUM" >"$T/sum.back"
		sql "$BACKING/$db" .sha3sum >"$T/sha.back"
		cmp "$T/sum.mnt" "$T/sum.back" || fail "$sched $mode: checksum query differs in BACKING"
		cmp "$T/sha.mnt" "$T/sha.back" || fail "$sched $mode: .sha3sum differs in BACKING"
	done
	unmount_fs
done

# And once more after a remount, through the daemon and not the cache.
mount_fs
assert_eq $(($(echo $SCHEDULERS | wc -w) * 2)) \
	"$(cd "$BACKING" && ls -- *.sqlite | wc -l)" "databases after remount"
for db in $(cd "$BACKING" && ls -- *.sqlite); do
	assert_eq ok "$(sql "$MNT/$db" 'PRAGMA integrity_check;')" "$db: integrity after remount"
	sql "$MNT/$db" "$CHECKSUM" >"$T/sum.again"
	sql "$BACKING/$db" "$CHECKSUM" >"$T/sum.back"
	cmp "$T/sum.again" "$T/sum.back" || fail "$db: checksum differs after remount"
done
unmount_fs
check_log
exit 0
