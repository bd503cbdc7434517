#!/usr/bin/env bash
# GET /v1/recommendations reads one page through the (created_at, id)
# index, however long the history: its ORDER BY named the ::text output
# columns, so every page sorted the whole table (46 ms at 20,000 answers,
# 125 ms at 100,000, 365 ms at 300,000; linear). 100,000 small answers are
# planted with SQL; a page must cost what a page costs, not what the table
# costs, and the pages must still come newest first, each answer once.
. "$(dirname "$0")/lib.sh"
own_database gsz_recs
psqlbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)/psql
start_daemon || { not_ok "daemon starts"; exit 1; }
sql() { "$psqlbin" "$DATABASE_URL" -X -q -At -c "$1"; }
sql "INSERT INTO recommendations (id, kind, model, gpu, request, response, summary, created_at)
	SELECT gen_random_uuid(), CASE WHEN g % 3 = 0 THEN 'inference' ELSE 'training' END,
	'llama-2-7b', 'h100-sxm5-80gb', '{\"model\":\"llama-2-7b\"}', '{}', '{\"gpus\":8}',
	now() - (g || ' seconds')::interval FROM generate_series(1, 100000) g;
	ANALYZE recommendations" || not_ok "100,000 answers planted"

slowest=0
for q in "limit=5" "limit=5" "kind=training&limit=5" "gpu=h100&limit=5" "limit=500"; do
	req GET "/v1/recommendations?$q"
	[ "$STATUS" = 200 ] || not_ok "list ($q) answers" "$STATUS $(body)"
	rid=$(header X-Request-Id)
	ms=$(grep "\"request_id\":\"$rid\"" "$GSZ_LOG" | grep -o '"duration_ms":[0-9.]*' | cut -d: -f2 | cut -d. -f1)
	[ "${ms:-999}" -gt "$slowest" ] && slowest=${ms:-999}
done
[ "$slowest" -lt 40 ] && ok "a page of the history costs a page, not the table (slowest ${slowest} ms at 100,000 answers)" ||
	not_ok "a page of the history costs a page, not the table" "slowest ${slowest} ms at 100,000 answers"

# Keyset paging over the index: the SQL order, each answer once.
ids=""
cursor=""
for i in $(seq 1 12); do
	req GET "/v1/recommendations?limit=500${cursor:+&cursor=$cursor}"
	ids+=$(jq -r '.items[].id' "$T/body")$'\n'
	cursor=$(jq -r '.next_cursor // empty' "$T/body")
done
want=$(sql "SELECT id FROM recommendations ORDER BY created_at DESC, id DESC LIMIT 6000")
[ "$(grep -c . <<<"$ids")" = 6000 ] && [ "$(grep . <<<"$ids")" = "$want" ] &&
	ok "12 pages of 500: the SQL order, each answer once" ||
	not_ok "12 pages of 500: the SQL order, each answer once" "$(grep -c . <<<"$ids") ids"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"
