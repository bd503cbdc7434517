#!/usr/bin/env bash
# The daemon's copy of each GPU's inventory and latest rollup row (issue
# 18, migrations/0017_fleet_mirror.sql, storage/fleet_mirror.c): GET
# /v1/fleet answers what the raw query answers (tests/api/sql/fleet_raw.sql)
# and calibration what its statement over rollup_type_runs answered before
# migrations/0018 (tests/api/sql/medians_rollup.sql; the daemon keeps no
# calibration cache here: --calibration-cache-s 0)
# at its first read, after runs arrive between reads, when a transaction
# that started before a read commits after a later transaction was read
# (commits out of order), through a second daemon on the same database,
# after a run is deleted, and after gpusizer_maintain() removes rows whose
# runs are gone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fleet_lib.sh"
fleet_database gsz_mirror
GSZ_REAL_FLEET=1 start_daemon --calibration-cache-s 0 || { not_ok "daemon starts"; exit 1; }
tok=$(create_token "mirror-$RANDOM" probe)
P=(-H "Authorization: Bearer $tok" -H 'Content-Type: application/json')

as_ref() { # SQL WHAT WHEN [BASE]: GET /v1/fleet (through BASE) against a reference query
	local days
	for days in 1 30; do
		fleet_same "fleet (window $days d, $3) answers what $2 answers" "$1" false "$days" "${4:-}"
	done
}
calib_as_ref() { # WHEN [BASE]: a sizing request's calibration against medians_rollup.sql
	local want bf16 runs base=${2:-$GSZ_URL}
	want=$(raw medians_rollup.sql gpu=h100-sxm5-80gb days=30 syn=false \
		thr="$(awk '/#define DEGRADED_THRESHOLD/ {print $3}' "$TOP/handlers/calib.h")")
	bf16=$(awk -F'|' '$1 == "gemm_tflops" && $2 == "bf16" {print $3 "|" $4}' <<<"$want")
	runs=$(head -n 1 <<<"$want" | awk -F'|' '{print $5}')
	STATUS=$(curl -s -o "$T/body" -w '%{http_code}' -X POST "$base/v1/sizing/training" -d \
		'{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64,"top":1,"calibration":"measured"}')
	# (basis shows 4 significant digits; samples and runs exactly)
	check "calibration ($1) is what its 0017 statement answers: $runs runs, bf16 ${bf16:-none}" 201 \
		"((.basis.gemm_tflops.measured_median - ${bf16%|*}) / ${bf16%|*} | fabs) < 5e-4
		 and .basis.gemm_tflops.samples == ${bf16#*|} and .basis.probe_runs == $runs"
}
# the raw results, and the statement over rollup_gpu_latest before 0017;
# calibration
as_raw() {
	as_ref fleet_raw.sql "the raw query" "$@"
	as_ref fleet_latest.sql "the 0016 statement" "$@"
	calib_as_ref "$@"
}
gpus_in_answer() { curl -s "$GSZ_URL/v1/fleet?window_days=30" | jq '[.items[].gpus] | add // 0'; }

mk mir-a "$(at '-5 minutes')" '.synthetic = false' >"$T/a.json"
mk mir-b "$(at '-4 minutes')" '.synthetic = false | .results |= map(if (.gpu_uuid // "" | endswith("0003")) and .metric == "gemm_tflops" then .median *= 0.7 else . end)' >"$T/b.json"
post "report a" "$T/a.json"
as_raw "the first read loads the copy"
[ "$(gpus_in_answer)" = 8 ] && ok "the first read counts node a's 8 GPUs" || not_ok "the first read counts node a's 8 GPUs" "$(gpus_in_answer)"

post "report b" "$T/b.json"
[ "$(gpus_in_answer)" = 16 ] && ok "a run posted after a read is in the next read" || not_ok "a run posted after a read is in the next read" "$(gpus_in_answer)"
as_raw "a run posted between reads"

# Commits out of order: a transaction degrades node a's GPU 1's PCIe link
# and waits; meanwhile node c's run is posted (a later transaction) and
# read; then the first commits. Its row was written before the rows the
# read saw, and must still reach the copy.
uuid1=$(q "SELECT uuid FROM node_gpus WHERE hostname = 'mir-a' ORDER BY gpu_index LIMIT 1")
"$psqlbin" "$DATABASE_URL" -Atq -v ON_ERROR_STOP=1 >"$T/slow.out" 2>&1 <<SQL &
BEGIN;
UPDATE node_gpus SET info = jsonb_set(info, '{pcie,gen_current}', '3') WHERE uuid = '$uuid1';
INSERT INTO rollup_type_runs (measured_at, gpu_type, run_id, synthetic, metrics, dtypes, v)
VALUES (now(), 'h100-sxm5-80gb', gen_random_uuid(), false, '{gemm_tflops}', '{bf16}', '{1}');
SELECT pg_sleep(3);
COMMIT;
SQL
slow=$!
sleep 1
mk mir-c "$(at '-1 minute')" '.synthetic = false' >"$T/c.json"
post "report c (while an older transaction is open)" "$T/c.json"
[ "$(gpus_in_answer)" = 24 ] && ok "the later transaction's run is read while the older one is open" ||
	not_ok "the later transaction's run is read while the older one is open" "$(gpus_in_answer)"
calib_as_ref "read while an older transaction is open"
wait "$slow" && ok "the older transaction commits" || not_ok "the older transaction commits" "$(cat "$T/slow.out")"
req GET "/v1/fleet?window_days=30"
check "the older transaction's change reaches the copy after it commits" 200 \
	'[.items[].degraded[] | select(.reasons | any(test("PCIe link trained at Gen3")))] | length == 1'
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64,"top":1,"calibration":"measured"}'
check "the older transaction's calibration row reaches the copy after it commits (4 runs)" 201 '.basis.probe_runs == 4'
as_raw "after commits out of order"

# A second daemon on the same database, which reads what the first stored.
second_daemon --calibration-cache-s 0
as_raw "a second daemon's first read" "$base2"
mk mir-d "$(at '-30 seconds')" '.synthetic = false' >"$T/d.json"
post "report d (through the first daemon)" "$T/d.json"
as_raw "a second daemon, after a run stored by the first" "$base2"
second_daemon_stop

# Concurrent reads of both copies while runs arrive: every answer is a
# 200, and the copies end equal to the statements they replaced.
for i in 1 2 3 4; do
	mk "mir-p$i" "$(at "-$i seconds")" '.synthetic = false' >"$T/p$i.json"
done
readers=()
for w in 1 2 3; do
	(for _ in $(seq 15); do
		curl -s -o /dev/null -w '%{http_code}\n' "$GSZ_URL/v1/fleet?window_days=30"
		curl -s -o /dev/null -w '%{http_code}\n' -X POST "$GSZ_URL/v1/sizing/training" -d \
			'{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64,"top":1,"calibration":"measured"}'
	done >"$T/conc$w.codes") &
	readers+=($!)
done
for i in 1 2 3 4; do post "report p$i (during concurrent reads)" "$T/p$i.json"; done
wait "${readers[@]}"
codes=$(sort "$T"/conc*.codes | uniq -c | tr -s ' ' | tr '\n' ';')
[ "$(cat "$T"/conc*.codes | grep -vc '^20[01]$')" = 0 ] && ok "90 concurrent fleet and calibration reads during ingestion all answer ($codes)" ||
	not_ok "90 concurrent fleet and calibration reads during ingestion all answer" "$codes"
as_raw "after concurrent reads and ingestion"

# Deletes leave no row to fetch: the copies are loaded again.
q "DELETE FROM benchmark_runs WHERE run_id = '$(jq -r .run_id "$T/b.json")'" >/dev/null
as_raw "after a run is deleted"
q "ALTER TABLE rollup_gpu_runs DISABLE TRIGGER rollup_gpu_runs_latest_del;
   DELETE FROM rollup_gpu_runs WHERE gpu_uuid IN (SELECT uuid FROM node_gpus WHERE hostname = 'mir-c');
   ALTER TABLE rollup_gpu_runs ENABLE TRIGGER rollup_gpu_runs_latest_del" >/dev/null
q "SELECT gpusizer_maintain(0, 0, 0)" >/dev/null
# (the raw results of node c stay: only the 0016 statement reads what is left)
as_ref fleet_latest.sql "the 0016 statement" "after gpusizer_maintain() drops latest rows whose runs are gone"
# retention drops partitions and DEFAULT rows without a trigger on the parent
q "ALTER TABLE rollup_type_runs DISABLE TRIGGER rollup_type_runs_mirror_del;
   DELETE FROM rollup_type_runs WHERE gpu_type = 'h100-sxm5-80gb' AND v = '{1}';
   ALTER TABLE rollup_type_runs ENABLE TRIGGER rollup_type_runs_mirror_del;
   UPDATE fleet_mirror_epoch SET epoch = epoch + 1" >/dev/null
calib_as_ref "after rows go without a trigger and the epoch is raised (gpusizer_maintain() after a drop)"
e1=$(q "SELECT epoch FROM fleet_mirror_epoch")
q "SELECT gpusizer_maintain(0, 0, 0)" >/dev/null
[ "$(q "SELECT epoch FROM fleet_mirror_epoch")" = "$e1" ] && ok "gpusizer_maintain() that removes nothing leaves the copies as they are" ||
	not_ok "gpusizer_maintain() that removes nothing leaves the copies as they are"
q "SELECT gpusizer_maintain(0, 0, 0) FROM (SELECT 1) x WHERE false" >/dev/null
left=$(q "SELECT count(*) FROM rollup_gpu_latest l JOIN node_gpus g ON g.uuid = l.gpu_uuid
	WHERE NOT l.with_synthetic AND g.hostname <> 'mir-c'")
req GET "/v1/fleet?window_days=30"
check "node c's GPUs left the medians with their latest rows ($left GPUs left)" 200 \
	"[.items[].metrics[].gpus] | max == $left"
e0=$(q "SELECT epoch FROM fleet_mirror_epoch")
q "DELETE FROM rollup_gpu_latest WHERE false" >/dev/null
[ "$(q "SELECT epoch FROM fleet_mirror_epoch")" = "$e0" ] && ok "a DELETE of no rows leaves the copy as it is" ||
	not_ok "a DELETE of no rows leaves the copy as it is"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"
