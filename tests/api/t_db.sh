#!/usr/bin/env bash
# The connection pool's prepared statements against the suite's real
# PostgreSQL (tests/unit/test_db.c): prepared once per connection, prepared
# again when they vanish under a live connection, errors still errors.
. "$(dirname "$0")/lib.sh"
bin=$TOP/build/san/tests/test_db
[ -x "$bin" ] || { not_ok "test_db is built" "$bin missing"; exit 0; }
"$bin"
