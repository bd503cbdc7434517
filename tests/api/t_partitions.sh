#!/usr/bin/env bash
# Time partitions (issue 18, migrations/0013_time_partitions.sql): 0013
# and 0014 applied to a database populated under 0012 keep every answer the
# same (the rollup-based reads: the raw queries' answers);
# new runs land in month partitions; a replay is still a replay; retention
# (`gpusizerd maintain`) drops whole partitions past the cut and keeps the
# rest, recommendations included.
. "$(dirname "$0")/lib.sh"
db=gsz_part_$RANDOM$RANDOM
url=$("$TOP/deploy/dev/pg.sh" createdb "$GSZ_PGDIR" "$GSZ_PGPORT" "$db")
q() { "$TOP/deploy/dev/pg.sh" psql "$GSZ_PGDIR" "$GSZ_PGPORT" "$db" "$1"; }
psqlbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)/psql
old=$T/migrations_0012
mkdir -p "$old"
cp "$TOP"/migrations/000[1-9]_*.sql "$TOP"/migrations/001[0-2]_*.sql "$old"/
export DATABASE_URL=$url
"$GSZ_BIN" migrate --database-url "$url" --migrations-dir "$old" >"$T/m.log" 2>&1 ||
	not_ok "migrations up to 0012 apply" "$(tail -2 "$T/m.log")"
# Today's daemon writes what the 0012-era one wrote, given for a while the
# run id guard 0013 brings and, from 0020, the compact run's columns and a
# gpusizer_rollup() that stores the results it is given as rows (what the
# 0012-era statement did): it populates the old schema. Its runs are then
# turned back into the old form (report text, no compact columns).
q "CREATE TABLE benchmark_run_ids (run_id uuid PRIMARY KEY, received_at timestamptz NOT NULL DEFAULT now());
ALTER TABLE benchmark_runs ALTER COLUMN report DROP NOT NULL, ADD COLUMN report_zstd bytea,
 ADD COLUMN result_count int, ADD COLUMN gpu_uuids text[], ADD COLUMN gpu_types text[],
 ADD COLUMN node_type text, ADD COLUMN metrics text[], ADD COLUMN dtypes text[];
CREATE FUNCTION gpusizer_rollup(rs benchmark_results[], run_synthetic boolean) RETURNS void
LANGUAGE sql AS 'INSERT INTO benchmark_results SELECT * FROM unnest(rs)'" >/dev/null
# Its sizing reads the stack catalog of 0015, 0019, 0023, 0027, 0028, 0029, 0031, 0032, 0033, 0034, 0035, 0036, 0039, 0040, 0041 and 0042 (independent
# of 0013/0014): the same kind of shim, dropped before the real migrations
# run.
q "$(cat "$TOP/migrations/0015_stacks.sql")" >/dev/null
q "$(cat "$TOP/migrations/0019_stack_torchtitan_terms.sql")" >/dev/null
q "$(cat "$TOP/migrations/0023_stack_loss_logit_bytes.sql")" >/dev/null
q "$(cat "$TOP/migrations/0027_stack_lora_fp32_adapters.sql")" >/dev/null
q "$(cat "$TOP/migrations/0028_stack_eager_autocast_memory.sql")" >/dev/null
q "$(cat "$TOP/migrations/0029_stack_loss_pass_bytes.sql")" >/dev/null
q "$(cat "$TOP/migrations/0031_stack_zero_stages.sql")" >/dev/null
q "$(cat "$TOP/migrations/0032_stack_max_offload.sql")" >/dev/null
q "$(cat "$TOP/migrations/0033_stack_expert_parallel.sql")" >/dev/null
q "$(cat "$TOP/migrations/0034_stack_pipeline_parallel.sql")" >/dev/null
q "$(cat "$TOP/migrations/0035_stack_tensor_parallel.sql")" >/dev/null
q "$(cat "$TOP/migrations/0036_stack_nf4_base_weights.sql")" >/dev/null
q "$(cat "$TOP/migrations/0039_stack_overlaps.sql")" >/dev/null
q "$(cat "$TOP/migrations/0040_stack_partial_recompute.sql")" >/dev/null
q "$(cat "$TOP/migrations/0041_stack_ep_overlap.sql")" >/dev/null
q "$(cat "$TOP/migrations/0042_moe_dispatch.sql")" >/dev/null
# and ingestion writes the node inventory's columns of 0043 (which adds
# them only if absent) and calls 0044's reconciliation
q "ALTER TABLE node_gpus ADD COLUMN removed_at timestamptz, ADD COLUMN reported_at timestamptz;
ALTER TABLE nodes ADD COLUMN inventory_at timestamptz, ADD COLUMN inventory_uuids text[],
 ADD COLUMN reported_at timestamptz" >/dev/null
q "$(cat "$TOP/migrations/0044_node_reconcile.sql")" >/dev/null
GSZ_MIGRATIONS_DIR=$old start_daemon || { not_ok "daemon starts on the 0012 schema"; exit 1; }
tok=$(create_token "part-$RANDOM" probe)
P=(-H "Authorization: Bearer $tok" -H 'Content-Type: application/json')
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
mk() { # HOST FINISHED_AT: the H100 fixture as host HOST, its own uuids
	jq -c --arg h "$1" --arg f "$2" --arg r "$(cat /proc/sys/kernel/random/uuid)" \
		--arg s "$(printf '%08x' $((RANDOM * 7 + ${#1})))" '.run_id = $r | .node.hostname = $h
		| .started_at = $f | .finished_at = $f
		| .gpus |= map(.uuid |= sub("5e7e71c0"; $s))
		| .results |= map(if .gpu_uuid then .gpu_uuid |= sub("5e7e71c0"; $s) else . end
			| if .peer_uuid then .peer_uuid |= sub("5e7e71c0"; $s) else . end)' \
		"$TOP/tests/fixtures/probe/report_synthetic_h100x8.json"
}
runs=()
for h in part-a part-b part-c; do
	mk "$h" "$now" >"$T/$h.json"
	req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/$h.json"
	[ "$STATUS" = 201 ] || not_ok "0012: report of $h stored" "$STATUS $(head -c 300 "$T/body")"
	runs+=("$(jq -r .run_id "$T/$h.json")")
done
# a probe whose clock was far ahead: its results dated next year, as a
# daemon before 2026-11-27 stored them (ingestion now refuses such a date,
# review s15), so moved there by SQL
mk part-future "$now" >"$T/future.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/future.json"
check "0012: a report of a node whose clock runs ahead is stored" 201
future=$(jq -r .run_id "$T/future.json")
q "UPDATE benchmark_results SET measured_at = measured_at + interval '400 days' WHERE run_id = '$future';
UPDATE benchmark_runs SET started_at = started_at + interval '400 days',
 finished_at = finished_at + interval '400 days' WHERE run_id = '$future'" >/dev/null ||
	not_ok "0012: the run moved 400 days ahead"
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64,"top":1,"calibration":"datasheet"}'
check "0012: a sizing answer is stored" 201
rec=$(jq -r .id "$T/body")
for id in $(q "SELECT run_id FROM benchmark_runs"); do
	q "SELECT encode(report_zstd, 'base64') FROM benchmark_runs WHERE run_id = '$id'" |
		base64 -d | zstd -dcq >"$T/report.txt"
	{
		printf "UPDATE benchmark_runs SET report = \$gszr\$"
		cat "$T/report.txt"
		printf "\$gszr\$, report_zstd = NULL WHERE run_id = '%s';\n" "$id"
	} | "$psqlbin" "$url" -q -v ON_ERROR_STOP=1 -f - >/dev/null || not_ok "0012: run $id in the old form"
done
# Everything but the future run's results is 300 days old.
q "UPDATE benchmark_runs SET received_at = received_at - interval '300 days';
UPDATE benchmark_results SET measured_at = measured_at - interval '300 days' WHERE run_id <> '$future';
UPDATE recommendations SET created_at = created_at - interval '300 days'" >/dev/null ||
	not_ok "0012: rows backdated"
snap() { # DIR: the answers that must not change
	mkdir -p "$1"
	for p in "/v1/benchmarks?limit=500" \
		"/v1/benchmarks?limit=7&gpu_type=h100-sxm5-80gb&metric=gemm_tflops" \
		"/v1/benchmarks/${runs[0]}" "/v1/benchmarks/$future" "/v1/nodes/part-a" \
		"/v1/recommendations/$rec" "/v1/recommendations?limit=50"; do
		curl -s "$GSZ_URL$p" | jq -S 'del(.request_id?)' >"$1/$(echo "$p" | tr -c 'A-Za-z0-9\n' _)"
	done
}
snap "$T/before"
jq -e '.items | length == 500' "$T/before/_v1_benchmarks_limit_500" >/dev/null &&
	ok "before 0013: the results are listed" || not_ok "before 0013: the results are listed"
stop_daemon
q "DROP TABLE benchmark_run_ids; DROP TABLE stacks;
DROP FUNCTION gpusizer_rollup(benchmark_results[], boolean);
ALTER TABLE benchmark_runs ALTER COLUMN report SET NOT NULL, DROP COLUMN report_zstd,
 DROP COLUMN result_count, DROP COLUMN gpu_uuids, DROP COLUMN gpu_types,
 DROP COLUMN node_type, DROP COLUMN metrics, DROP COLUMN dtypes" >/dev/null ||
	not_ok "0012: the shims are dropped"
counts() { q "SELECT (SELECT count(*) FROM benchmark_runs) || '/' || (SELECT count(*) FROM benchmark_results) || '/' || (SELECT count(*) FROM recommendations) || '/' || (SELECT sum(hashtext(b::text)) FROM benchmark_results b)"; }
before=$(counts)

start_daemon || { not_ok "daemon starts and applies 0013 over the populated database"; exit 1; }
ok "daemon starts and applies 0013 over the populated database"
got=$(q "SELECT string_agg(relname || ':' || relkind::text, ',' ORDER BY relname) FROM pg_class WHERE relname IN ('benchmark_runs', 'benchmark_results', 'recommendations')")
[ "$got" = "benchmark_results:p,benchmark_runs:p,recommendations:p" ] && ok "runs, results and recommendations are partitioned tables" ||
	not_ok "runs, results and recommendations are partitioned tables" "$got"
[ "$(counts)" = "$before" ] && ok "every row kept, unchanged (counts and a hash of each result row)" ||
	not_ok "every row kept, unchanged (counts and a hash of each result row)" "$before -> $(counts)"
got=$(q "SELECT tableoid::regclass FROM benchmark_results WHERE run_id = '$future' LIMIT 1")
[ "$got" = benchmark_results_default ] && ok "results dated past the legacy bound are in the DEFAULT partition" ||
	not_ok "results dated past the legacy bound are in the DEFAULT partition" "$got"
snap "$T/after"
if d=$(diff -r "$T/before" "$T/after"); then
	ok "results, runs, nodes and recommendations answer as before"
else
	not_ok "results, runs, nodes and recommendations answer as before" "$(head -c 600 <<<"$d")"
fi
# The fleet view now reads the rollups 0014 computed from the old rows:
# the same answer as the raw query over those rows (tests/api/sql).
want=$("$psqlbin" "$url" -Atq -v ON_ERROR_STOP=1 -v days=366 -v thr=0.10 -v lo=1e-9 -v hi=1e15 -v syn=true \
	-f "$TOP/tests/api/sql/fleet_raw.sql" | jq -S .)
req GET "/v1/fleet?window_days=366"
[ "$STATUS" = 200 ] && [ "$(jq -S 'del(.items[].calibration)' "$T/body")" = "$want" ] &&
	jq -e '[.items[].metrics | length] | add > 10' "$T/body" >/dev/null &&
	ok "the fleet view over the migrated rows is the raw query's answer" ||
	not_ok "the fleet view over the migrated rows is the raw query's answer" "$(diff <(jq -S 'del(.items[].calibration)' "$T/body") <(echo "$want") | head)"

# A replay answers as the first post did (201, the stored received_at) and
# stores nothing.
was=$(q "SELECT to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') FROM benchmark_runs WHERE run_id = '${runs[1]}'")
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/part-b.json"
check "a run stored before 0013 posted again is a replay (its first received_at)" 201 ".run_id == \"${runs[1]}\" and .received_at == \"$was\""
mk part-new "$now" >"$T/new.json"
new=$(jq -r .run_id "$T/new.json")
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/new.json"
check "a new report is stored (201)" 201 '.results == 290'
first=$(jq -r .received_at "$T/body")
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/new.json"
check "and posted again is a replay" 201 ".received_at == \"$first\""
got=$(q "SELECT count(*) || '/' || sum(coalesce(result_count, (SELECT count(*)
	FROM benchmark_results b WHERE b.run_id = r.run_id))) FROM benchmark_runs r WHERE run_id IN ('$new', '${runs[1]}')")
[ "$got" = "2/580" ] && ok "replays stored nothing" || not_ok "replays stored nothing" "$got"
got=$(q "SELECT (SELECT tableoid::regclass FROM benchmark_runs WHERE run_id = '$new') || ',' || (SELECT count(*) FROM rollup_gpu_runs WHERE run_id = '$new' AND tableoid::regclass::text = 'rollup_gpu_runs_' || to_char(now() AT TIME ZONE 'UTC', 'YYYYMM'))")
[ "$got" = "benchmark_runs_$(date -u +%Y%m),8" ] && ok "it lands in this month's partitions" || not_ok "it lands in this month's partitions" "$got"
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":2048,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64,"top":1,"calibration":"datasheet"}'
check "a new sizing answer is stored" 201
rec2=$(jq -r .id "$T/body")
stop_daemon

# Retention: 200 days drops the legacy partitions (everything in them is
# 400 days old) and keeps this month and the future-dated rows.
"$GSZ_BIN" maintain --database-url "$url" --history-retention-days 200 \
	--recommendation-retention-days 200 >"$T/maint.out" 2>"$T/maint.err" &&
	ok "gpusizerd maintain runs" || not_ok "gpusizerd maintain runs" "$(tail -3 "$T/maint.err")"
grep -q '^dropped benchmark_runs_legacy' "$T/maint.out" && grep -q '^dropped benchmark_results_legacy' "$T/maint.out" &&
	grep -q '^dropped recommendations_legacy' "$T/maint.out" && ok "it names the partitions it dropped" ||
	not_ok "it names the partitions it dropped" "$(cat "$T/maint.out")"
got=$(q "SELECT to_regclass('benchmark_runs_legacy') IS NULL AND to_regclass('benchmark_results_legacy') IS NULL AND to_regclass('recommendations_legacy') IS NULL")
[ "$got" = t ] && ok "the legacy partitions are gone" || not_ok "the legacy partitions are gone" "$got"
got=$(q "SELECT to_regclass('benchmark_runs_' || to_char(now() AT TIME ZONE 'UTC' + interval '3 months', 'YYYYMM')) IS NOT NULL")
[ "$got" = t ] && ok "partitions are made three months ahead" || not_ok "partitions are made three months ahead" "$got"
start_daemon || { not_ok "daemon restarts after maintenance"; exit 1; }
req GET "/v1/benchmarks/${runs[0]}"
check_problem "retention: a run past the cut is gone (404)" 404
req GET "/v1/recommendations/$rec"
check_problem "retention: a recommendation past the cut is gone (404)" 404
req GET "/v1/benchmarks/$new"
check "retention: this month's run stays" 200
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/new.json"
check "retention: and posted again is still a replay" 201 ".received_at == \"$first\""
# The future run's results are partitioned by their own (skewed) date:
# they outlive their run until that date passes the cut.
got=$(q "SELECT count(*) FROM benchmark_results_default WHERE run_id = '$future'")
[ "$got" = 290 ] && ok "retention: results dated ahead stay" || not_ok "retention: results dated ahead stay" "$got"
req GET "/v1/recommendations/$rec2"
check "retention: this month's recommendation stays" 200
got=$(q "SELECT count(*) FROM benchmark_run_ids WHERE run_id = '${runs[0]}'")
[ "$got" = 0 ] && ok "retention: the dropped runs' ids are forgotten" || not_ok "retention: the dropped runs' ids are forgotten" "$got"
"$GSZ_BIN" maintain --database-url "$url" --history-retention-days 200 >"$T/maint2.out" 2>/dev/null &&
	[ ! -s "$T/maint2.out" ] && ok "maintain again does nothing" || not_ok "maintain again does nothing" "$(cat "$T/maint2.out")"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"
