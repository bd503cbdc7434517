#!/usr/bin/env bash
# The migration runner: applies each file once under a lock, records
# checksums, refuses an edited file, and the daemon waits for the schema.
. "$(dirname "$0")/lib.sh"
db=gsz_mig_$RANDOM$RANDOM
url=$("$TOP/deploy/dev/pg.sh" createdb "$GSZ_PGDIR" "$GSZ_PGPORT" "$db")
mdir=$T/migrations
cp -r "$TOP/migrations" "$mdir"

"$GSZ_BIN" migrate --database-url "$url" --migrations-dir "$mdir" >"$T/m1.log" 2>&1 &&
	ok "migrate applies every file" || not_ok "migrate applies every file" "$(tail -3 "$T/m1.log")"
n=$("$TOP/deploy/dev/pg.sh" psql "$GSZ_PGDIR" "$GSZ_PGPORT" "$db" "SELECT count(*) FROM schema_migrations")
files=$(ls "$mdir"/[0-9][0-9][0-9][0-9]_*.sql | wc -l)
[ "$n" = "$files" ] && ok "schema_migrations has one row per file" || not_ok "schema_migrations has one row per file" "$n vs $files"
sums=$("$TOP/deploy/dev/pg.sh" psql "$GSZ_PGDIR" "$GSZ_PGPORT" "$db" "SELECT sha256 FROM schema_migrations WHERE version = 1")
[ "$sums" = "$(sha256sum "$mdir/0001_schema.sql" | cut -d' ' -f1)" ] && ok "the recorded checksum is the file's SHA-256" || not_ok "the recorded checksum is the file's SHA-256" "$sums"

"$GSZ_BIN" migrate --database-url "$url" --migrations-dir "$mdir" >"$T/m2.log" 2>&1 &&
	grep -q '"applied":"0"' "$T/m2.log" && ok "a second migrate applies nothing" || not_ok "a second migrate applies nothing" "$(tail -3 "$T/m2.log")"

# Two concurrent runners on a fresh database: each file applied once.
db2=gsz_mig2_$RANDOM$RANDOM
url2=$("$TOP/deploy/dev/pg.sh" createdb "$GSZ_PGDIR" "$GSZ_PGPORT" "$db2")
"$GSZ_BIN" migrate --database-url "$url2" --migrations-dir "$mdir" >"$T/c1.log" 2>&1 &
p1=$!
"$GSZ_BIN" migrate --database-url "$url2" --migrations-dir "$mdir" >"$T/c2.log" 2>&1 &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
[ $r1 = 0 ] && [ $r2 = 0 ] && ok "two concurrent migrate runs both succeed" || not_ok "two concurrent migrate runs both succeed" "$r1 $r2 $(tail -2 "$T/c1.log" "$T/c2.log")"
n=$("$TOP/deploy/dev/pg.sh" psql "$GSZ_PGDIR" "$GSZ_PGPORT" "$db2" "SELECT count(*) FROM schema_migrations")
[ "$n" = "$files" ] && ok "the advisory lock applied each file once" || not_ok "the advisory lock applied each file once" "$n"

# A new file is applied on the next start.
printf 'CREATE TABLE test_extra (id int);\n' >"$mdir/9999_test_extra.sql"
"$GSZ_BIN" migrate --database-url "$url" --migrations-dir "$mdir" >"$T/m3.log" 2>&1 &&
	grep -q '"applied":"1"' "$T/m3.log" && ok "a new migration file is applied" || not_ok "a new migration file is applied" "$(tail -3 "$T/m3.log")"

# A failing file rolls back entirely and is not recorded.
printf 'CREATE TABLE half_done (id int);\nSELECT * FROM no_such_table;\n' >"$mdir/9998_broken.sql"
"$GSZ_BIN" migrate --database-url "$url" --migrations-dir "$mdir" >"$T/m4.log" 2>&1 &&
	not_ok "a failing migration fails" || ok "a failing migration fails"
grep -q '9998_broken.sql' "$T/m4.log" && ok "the failure names the file" || not_ok "the failure names the file" "$(tail -2 "$T/m4.log")"
t=$("$TOP/deploy/dev/pg.sh" psql "$GSZ_PGDIR" "$GSZ_PGPORT" "$db" "SELECT to_regclass('half_done') IS NULL")
[ "$t" = t ] && ok "a failing migration is rolled back whole" || not_ok "a failing migration is rolled back whole"
rm "$mdir/9998_broken.sql"

# An edited, already applied file stops the daemon with a clear message.
printf '\n-- edited after the fact\n' >>"$mdir/0001_schema.sql"
"$GSZ_BIN" serve --listen 127.0.0.1:0 --database-url "$url" --migrations-dir "$mdir" >"$T/s.log" 2>&1 &
pid=$!
for i in $(seq 1 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then
	kill -KILL $pid
	not_ok "the daemon refuses to start on an edited migration" "still running"
else
	wait $pid && rc=0 || rc=$?
	[ $rc -ne 0 ] && grep -q '0001_schema.sql.*was edited after it was applied' "$T/s.log" &&
		ok "the daemon refuses to start on an edited migration, naming the file" ||
		not_ok "the daemon refuses to start on an edited migration, naming the file" "rc=$rc $(tail -2 "$T/s.log")"
fi
"$GSZ_BIN" migrate --database-url "$url" --migrations-dir "$mdir" >/dev/null 2>&1 &&
	not_ok "migrate refuses an edited migration" || ok "migrate refuses an edited migration"

# 0007 on a database with probe runs from before it: each run's results
# move into its block of ids, in their order; deleting a run still deletes
# its results; new runs take the next block.
db3=gsz_mig3_$RANDOM$RANDOM
url3=$("$TOP/deploy/dev/pg.sh" createdb "$GSZ_PGDIR" "$GSZ_PGPORT" "$db3")
q3() { "$TOP/deploy/dev/pg.sh" psql "$GSZ_PGDIR" "$GSZ_PGPORT" "$db3" "$1"; }
old=$T/migrations_0006
mkdir -p "$old"
cp "$TOP"/migrations/000[1-6]_*.sql "$old"/
"$GSZ_BIN" migrate --database-url "$url3" --migrations-dir "$old" >"$T/m6.log" 2>&1 ||
	not_ok "migrations up to 0006 apply" "$(tail -2 "$T/m6.log")"
ra=11111111-1111-4111-8111-111111111111
rb=22222222-2222-4222-8222-222222222222
# Results of the two runs interleave in id order, as concurrent posts did.
q3 "INSERT INTO nodes (hostname) VALUES ('n1');
INSERT INTO benchmark_runs (run_id, hostname, status, report, received_at)
 VALUES ('$ra', 'n1', 'ok', '{}', now() - interval '2 days'),
        ('$rb', 'n1', 'ok', '{}', now() - interval '1 day');
INSERT INTO benchmark_results (run_id, hostname, metric, unit, median)
 SELECT CASE WHEN i % 3 = 0 THEN '$rb'::uuid ELSE '$ra'::uuid END, 'n1',
        'm' || i, 'GB/s', i FROM generate_series(1, 9) i" >/dev/null ||
	not_ok "0006-era rows inserted"
"$GSZ_BIN" migrate --database-url "$url3" --migrations-dir "$TOP/migrations" >"$T/m7.log" 2>&1 &&
	ok "0007 applies over existing probe runs" || not_ok "0007 applies over existing probe runs" "$(tail -2 "$T/m7.log")"
got=$(q3 "SELECT string_agg(r.first_result_id::text, ',' ORDER BY r.received_at) FROM benchmark_runs r")
[ "$got" = "32768,65536" ] && ok "existing runs get blocks in arrival order" || not_ok "existing runs get blocks in arrival order" "$got"
got=$(q3 "SELECT string_agg(id || ':' || metric, ',' ORDER BY id) FROM benchmark_results")
want="32768:m1,32769:m2,32770:m4,32771:m5,32772:m7,32773:m8,65536:m3,65537:m6,65538:m9"
[ "$got" = "$want" ] && ok "existing results are renumbered into their run's block, in order" ||
	not_ok "existing results are renumbered into their run's block, in order" "$got"
q3 "DELETE FROM benchmark_runs WHERE run_id = '$ra'" >/dev/null
got=$(q3 "SELECT count(*) FILTER (WHERE run_id = '$ra') || '/' || count(*) FROM benchmark_results")
[ "$got" = "0/3" ] && ok "deleting a run deletes its results and no others" ||
	not_ok "deleting a run deletes its results and no others" "$got"
got=$(q3 "INSERT INTO benchmark_runs (run_id, hostname, status, report)
 VALUES (gen_random_uuid(), 'n1', 'ok', '{}') RETURNING first_result_id")
[ "$got" = "98304" ] && ok "a new run takes the next block" || not_ok "a new run takes the next block" "$got"
