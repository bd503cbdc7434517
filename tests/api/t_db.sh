#!/usr/bin/env bash
# The connection pool's prepared statements against the suite's real
# PostgreSQL (tests/unit/test_db.c): prepared once per connection, prepared
# again when they vanish under a live connection, errors still errors; a
# catalog GPU read back as typed figures (store_gpu_get_spec).
. "$(dirname "$0")/lib.sh"
bin=$TOP/build/san/tests/test_db
[ -x "$bin" ] || { not_ok "test_db is built" "$bin missing"; exit 0; }
# test_gpu_spec reads the catalog: the schema and its rows first.
"$GSZ_BIN" migrate --database-url "$DATABASE_URL" --migrations-dir "$TOP/migrations" >"$T/migrate.log" 2>&1 ||
	not_ok "migrations applied for test_db" "$(tail -n 3 "$T/migrate.log")"
"$bin"
