#!/usr/bin/env bash
# Each GPU's latest rollup row (issue 18, migrations/0016_gpu_latest.sql):
# rollup_gpu_latest holds, per GPU, the latest rollup_gpu_runs row of any
# run and of a real run, whatever order runs arrive in, after a run is
# deleted and after retention; GET /v1/fleet, which reads it, answers what
# the raw query answers (tests/api/sql/fleet_raw.sql) with synthetic runs
# left out (the daemon's default).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fleet_lib.sh"
fleet_database gsz_latest
GSZ_REAL_FLEET=1 start_daemon || { not_ok "daemon starts"; exit 1; }
tok=$(create_token "latest-$RANDOM" probe)
P=(-H "Authorization: Bearer $tok" -H 'Content-Type: application/json')
# lat-a: a real run now, then (posted after it) a real run two days ago,
# then a synthetic run newer than both; lat-b: one real run with a slow GPU.
mk lat-a "$(at '-5 minutes')" '.synthetic = false' >"$T/a1.json"
mk lat-a "$(at '-2 days')" '.synthetic = false | .results |= map(if .median then .median *= 1.1 else . end)' >"$T/a0.json"
mk lat-a "$(at '-1 minute')" '.synthetic = true | .results |= map(if .median then .median *= 0.5 else . end)' >"$T/as.json"
mk lat-b "$(at '-4 minutes')" '.synthetic = false | .results |= map(if (.gpu_uuid // "" | endswith("0003")) and .metric == "gemm_tflops" then .median *= 0.7 else . end)' >"$T/b.json"
# lat-s: a node only synthetic runs measured
mk lat-s "$(at '-3 minutes')" '.synthetic = true' >"$T/s.json"
for f in a1 a0 as b s; do post "report $f" "$T/$f.json"; done
# review s15: without --fleet-synthetic the fleet counts no GPU and no node
# that only synthetic runs measured (lat-s's 8 were counted beside medians
# that left them out)
req GET /v1/fleet
check "a node only synthetic runs measured is not in the fleet's counts" 200 \
	'[.items[] | select(.gpu_type == "h100-sxm5-80gb")][0] | .gpus == 16 and .nodes == 2'

# The table against the latest rows computed from rollup_gpu_values.
same_as_raw() { # NAME
	local got
	got=$(q "WITH want AS (
	  SELECT DISTINCT ON (r.gpu_uuid, w.ws) r.gpu_uuid, w.ws, r.run_id, r.measured_at,
	         r.metrics, r.v, r.lim, r.slowdowns
	  FROM rollup_gpu_values r, (VALUES (true), (false)) w (ws)
	  WHERE w.ws OR NOT r.synthetic ORDER BY r.gpu_uuid, w.ws, r.measured_at DESC),
	have AS (SELECT gpu_uuid, with_synthetic, run_id, measured_at, metrics, v, lim,
	         slowdowns FROM rollup_gpu_latest)
	SELECT (SELECT count(*) FROM (SELECT * FROM want EXCEPT ALL SELECT * FROM have) x)
	     + (SELECT count(*) FROM (SELECT * FROM have EXCEPT ALL SELECT * FROM want) y)
	     || ' ' || (SELECT count(*) FROM have)")
	[ "${got%% *}" = 0 ] && [ "${got#* }" -gt 0 ] && ok "$1" || not_ok "$1" "differing rows, rows: $got"
}
fleet_as_raw() { # WHEN
	local days
	for days in 1 30; do
		fleet_same "fleet (window $days d, $1) answers what the raw query answers" fleet_raw.sql false "$days"
	done
}
same_as_raw "each GPU's latest rows are the newest runs', real and any, whatever the order posted"
a1=$(jq -r .run_id "$T/a1.json")
as=$(jq -r .run_id "$T/as.json")
got=$(q "SELECT string_agg(DISTINCT with_synthetic || ':' || run_id, ' ' ORDER BY with_synthetic || ':' || run_id)
	FROM rollup_gpu_latest l JOIN node_gpus g ON g.uuid = l.gpu_uuid WHERE g.hostname = 'lat-a'")
[ "$got" = "false:$a1 true:$as" ] && ok "lat-a's latest: the synthetic run for all runs, the newer real run for real ones" ||
	not_ok "lat-a's latest: the synthetic run for all runs, the newer real run for real ones" "$got"
fleet_as_raw "runs out of order, a synthetic run newest"
req GET "/v1/fleet?window_days=30"
check "the comparison has substance: medians and a slow GPU" 200 \
	'(.items[0].metrics | length) > 10 and ([.items[0].degraded[].reasons[]] | any(test("gemm_tflops bf16")))'

# A deleted run: its GPUs fall back to their newest remaining run.
q "DELETE FROM benchmark_runs WHERE run_id = '$a1'" >/dev/null
same_as_raw "after a run is deleted, its GPUs' latest rows are the remaining runs'"
fleet_as_raw "the newest real run deleted"

# Retention drops partitions, which fires no trigger: the same delete with
# the trigger off, then gpusizer_maintain() drops the rows left behind.
q "ALTER TABLE rollup_gpu_runs DISABLE TRIGGER rollup_gpu_runs_latest_del;
   DELETE FROM rollup_gpu_runs WHERE gpu_uuid IN (SELECT uuid FROM node_gpus WHERE hostname = 'lat-b');
   ALTER TABLE rollup_gpu_runs ENABLE TRIGGER rollup_gpu_runs_latest_del" >/dev/null
q "SELECT gpusizer_maintain(0, 0, 0)" >/dev/null
same_as_raw "after runs go without a trigger (a partition drop), gpusizer_maintain() drops their latest rows"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"
