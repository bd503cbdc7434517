#!/usr/bin/env bash
# The capacity report's weekly table from the daemon's copy of each node's
# latest runs of each week (issue 18, migrations/0021_week_mirror.sql,
# storage/week_mirror.c week_mirror_weeks()): it answers what the
# statement it replaced answers (tests/api/sql/report_rollup.sql) at the
# first read, after runs arrive between reads, after a run moves to
# another week, when a transaction that started before a read commits
# after it (commits out of order), after rollup rows are added to a run
# stored earlier, through a second daemon (real runs only) while the
# first writes, after a run is deleted, and after gpusizer_maintain()
# drops a partition; and the rest of the statement (each node's figures
# in the node list) is unchanged. The daemons answer at the API's
# threshold (0.10); tests/unit/test_report_weeks.c reduces the same copy
# at thresholds 0.05, 0.1 and 0.3, windows of 1, 30 and 366 days, with
# and without synthetic runs, in one process (each case after the first
# reads the copy the earlier ones loaded).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fleet_lib.sh"
fleet_database gsz_repmir
start_daemon || { not_ok "daemon starts"; exit 1; } # synthetic runs count
tok=$(create_token "repmir-$RANDOM" probe)
P=(-H "Authorization: Bearer $tok" -H 'Content-Type: application/json')
bin=$TOP/build/san/tests/test_report_weeks
[ -x "$bin" ] || not_ok "test_report_weeks is built" "$bin missing"

# ref DAYS THR SYN: the statement's weekly table, one line per week and type
# measured: week_start,gpu_type,seen_gpus,healthy_gpus
ref() {
	raw report_rollup.sql days="$1" bucket=day maxnodes=50 thr="$2" syn="$3" |
		jq -r '.capacity.items[] | select(.seen_gpus > 0)
			| [.week_start, .gpu_type, .seen_gpus, .healthy_gpus] | map(tostring) | join(",")' | sort
}
cases=()
for days in 366 30 1; do for thr in 0.05 0.1 0.3; do for syn in true false; do
	cases+=("$days:$thr:$syn")
done; done; done
# weeks_as_ref WHEN: every case of test_report_weeks against ref
weeks_as_ref() {
	local out=$T/weeks.out bad="" c got
	if ! "$bin" "${cases[@]}" >"$out" 2>"$T/weeks.err"; then
		not_ok "the weekly table ($1) at 18 thresholds, windows and synthetic choices is the statement's" "$(tail -n 3 "$T/weeks.err")"
		return
	fi
	for c in "${cases[@]}"; do
		IFS=: read -r days thr syn <<<"$c"
		got=$(awk -v h="# $days $(awk -v t="$thr" 'BEGIN { printf "%g", t }') $syn" \
			'$0 == h { on = 1; next } /^#/ { on = 0 } on' "$out" | sort)
		[ "$got" = "$(ref "$days" "$thr" "$syn")" ] || bad="$bad $c"
	done
	if [ -z "$bad" ]; then
		ok "the weekly table ($1) at 18 thresholds, windows and synthetic choices is the statement's"
	else
		c=${bad# }
		c=${c%% *}
		IFS=: read -r days thr syn <<<"$c"
		not_ok "the weekly table ($1) at 18 thresholds, windows and synthetic choices is the statement's" \
			"differs:$bad; first: $(diff <(awk -v h="# $days $(awk -v t="$thr" 'BEGIN { printf "%g", t }') $syn" '$0 == h { on = 1; next } /^#/ { on = 0 } on' "$out" | sort) <(ref "$days" "$thr" "$syn") | tr '\n' ' ')"
	fi
}
# csv_as_ref WHEN SYN [BASE]: the capacity CSV (through BASE) against the
# statement's items, at the API's threshold, for windows of 1, 30, 366 days
# (or those in WINDOWS)
csv_as_ref() {
	local days got want base=${3:-$GSZ_URL}
	for days in ${WINDOWS:-1 30 366}; do
		STATUS=$(curl -sS --max-time 30 -o "$T/body" -w '%{http_code}' \
			"$base/v1/reports/capacity?section=capacity&window_days=$days") || STATUS=000
		got=$(tail -n +2 "$T/body" | tr -d '\r' | awk -F, '{print $1 "," $2 "," $3 "," $9 "," $10 "," $11}')
		want=$(raw report_rollup.sql days="$days" bucket=day maxnodes=50 thr=0.1 syn="$2" |
			jq -r '.capacity.items[] | [.week, .week_start, .gpu_type, .seen_gpus, .healthy_gpus, .healthy_gpu_days] | map(tostring) | join(",")')
		if [ "$STATUS" = 200 ] && [ "$got" = "$want" ]; then
			ok "capacity CSV (window $days d, $1) is the statement's"
		else
			not_ok "capacity CSV (window $days d, $1) is the statement's" "$STATUS $(diff <(echo "$got") <(echo "$want") | head -10 | tr '\n' ' ')"
		fi
	done
}
# nodes_as_ref WHEN: the freshness CSV (every node) against the statement's
# node items: host, GPU types, GPUs and runs in the window (1 and 30 days)
nodes_as_ref() {
	local days got want
	for days in 1 30; do
		STATUS=$(curl -sS --max-time 30 -o "$T/body" -w '%{http_code}' \
			"$GSZ_URL/v1/reports/capacity?section=freshness&window_days=$days") || STATUS=000
		got=$(tail -n +2 "$T/body" | tr -d '\r' | awk -F, '{print $1 "," $2 "," $3 "," $8}')
		want=$(raw report_rollup.sql days="$days" bucket=day maxnodes=100000 thr=0.1 syn=true |
			jq -r '.nodes.items[] | [.hostname, (.gpu_types | join(" ")), .gpus, .runs_in_window] | map(tostring) | join(",")')
		if [ "$STATUS" = 200 ] && [ -n "$got" ] && [ "$got" = "$want" ]; then
			ok "freshness CSV (window $days d, $1): each node's GPUs, types and runs are the statement's"
		else
			not_ok "freshness CSV (window $days d, $1): each node's GPUs, types and runs are the statement's" "$STATUS $(diff <(echo "$got") <(echo "$want") | head -10 | tr '\n' ' ')"
		fi
	done
}
as_ref() { # WHEN: all three, through the first daemon (synthetic runs count)
	csv_as_ref "$1" true
	weeks_as_ref "$1"
	nodes_as_ref "$1"
}
slow() { # GPU_SUFFIX METRIC FACTOR: a jq edit scaling one GPU's metric
	echo ".results |= map(if (.gpu_uuid // \"\" | endswith(\"$1\")) and .metric == \"$2\" then .median *= $3 else . end)"
}
run_of() { jq -r .run_id "$T/$1.json"; }

# Node a: a real run now, and one in an earlier week (received 8 days ago).
# Node b: GPU 3 20 % slow on GEMM (degraded at 0.05 and 0.1, not 0.3), GPU
# 4 7 % slow on HBM reads (at 0.05 only), GPU 6's P2P latency 20 % over.
# Node c: a real run with GPUs 1 and 2 20 % slow, then a synthetic run, later,
# with a thermal slowdown on GPU 5: which counts depends on the choice.
# Node d: another GPU type (not in the catalog). Node e: a partial run.
mk rm-a "$(at '-9 minutes')" '.synthetic = false | .results |= map(if .median then .median *= 1.1 else . end)' >"$T/a0.json"
mk rm-a "$(at '-8 minutes')" '.synthetic = false' >"$T/a1.json"
mk rm-b "$(at '-7 minutes')" ".synthetic = false | $(slow 0003 gemm_tflops 0.8) | $(slow 0004 hbm_read_gbps 0.93) | $(slow 0006 p2p_latency_us 1.2)" >"$T/b1.json"
mk rm-c "$(at '-6 minutes')" ".synthetic = false | $(slow 0002 gemm_tflops 0.8) | $(slow 0001 gemm_tflops 0.8)" >"$T/c1.json"
mk rm-c "$(at '-5 minutes')" '.synthetic = true | .results |= map(if (.gpu_uuid // "" | endswith("0005")) then .telemetry.clock_event_reasons += ["hw_thermal_slowdown"] else . end)' >"$T/c2.json"
mk rm-d "$(at '-4 minutes')" '.synthetic = false | .gpus |= map(.name = "Tesla Mystery")' >"$T/d1.json"
mk rm-e "$(at '-3 minutes')" '.synthetic = false | .status = "partial"' >"$T/e1.json"
for f in a0 a1 b1 c1 c2 d1 e1; do post "report $f" "$T/$f.json"; done
q "UPDATE benchmark_runs SET received_at = now() - interval '8 days' WHERE run_id = '$(run_of a0)'" >/dev/null
as_ref "the first read loads the copy"
# the comparisons have substance: thresholds, windows and the synthetic
# choice each change the answer
[ "$(ref 30 0.05 true)" != "$(ref 30 0.3 true)" ] && [ "$(ref 30 0.1 true)" != "$(ref 30 0.1 false)" ] &&
	[ "$(ref 1 0.1 true)" != "$(ref 30 0.1 true)" ] && ref 30 0.1 true | grep -q '^.*,nvml:Tesla Mystery,8,8$' &&
	ok "the statement's answers differ by threshold, synthetic choice and window ($(ref 30 0.1 true | tr '\n' ' '))" ||
	not_ok "the statement's answers differ by threshold, synthetic choice and window" "$(ref 30 0.1 true | tr '\n' ' ')"

# A run between reads: node b again, GPU 3 recovered.
mk rm-b "$(at '-2 minutes')" '.synthetic = false' >"$T/b2.json"
post "report b2" "$T/b2.json"
as_ref "a run posted between reads"

# A run moved to another week after it was read (an operator's UPDATE):
# node a's latest run of this week goes back 15 days.
q "UPDATE benchmark_runs SET received_at = now() - interval '15 days' WHERE run_id = '$(run_of a1)'" >/dev/null
as_ref "a run read before moves to another week"

# Commits out of order: a transaction stores a run of node e (as the
# ingestion statement would, rollup rows included: GPU 1 with a clock
# slowdown) and degrades node d's GPU 0's PCIe link, and waits; meanwhile
# node f's run is posted (a later transaction) and read; then the first
# commits. Its rows were written before the rows the read saw, and must
# still reach the copy.
late=$(cat /proc/sys/kernel/random/uuid)
e1=$(run_of e1)
"$psqlbin" "$DATABASE_URL" -Atq -v ON_ERROR_STOP=1 >"$T/slow.out" 2>&1 <<SQL &
BEGIN;
INSERT INTO benchmark_run_ids (run_id) VALUES ('$late');
INSERT INTO benchmark_runs (run_id, hostname, status, mode, started_at, finished_at, report, report_zstd,
  synthetic) SELECT '$late', hostname, 'ok', mode, started_at, finished_at, report, report_zstd, false
FROM benchmark_runs WHERE run_id = '$e1';
INSERT INTO rollup_gpu_runs (measured_at, gpu_uuid, run_id, synthetic, metrics, dtypes, units, v, lim,
  v_week, slowdowns, shape) SELECT now(), gpu_uuid, '$late', false, metrics, dtypes, units, v, lim, v_week,
  CASE WHEN gpu_uuid LIKE '%0001' THEN '{hw_slowdown}' ELSE slowdowns END, shape
FROM rollup_gpu_runs WHERE run_id = '$e1';
UPDATE node_gpus SET info = jsonb_set(info, '{pcie,gen_current}', '3')
WHERE hostname = 'rm-d' AND gpu_index = 0;
SELECT pg_sleep(3);
COMMIT;
SQL
slowpid=$!
sleep 1
mk rm-f "$(at '-1 minute')" '.synthetic = false' >"$T/f1.json"
post "report f1 (while an older transaction is open)" "$T/f1.json"
csv_as_ref "read while an older transaction is open" true
wait "$slowpid" && ok "the older transaction commits" || not_ok "the older transaction commits" "$(cat "$T/slow.out")"
req GET '/v1/reports/capacity?section=capacity&window_days=1'
tr -d '\r' <"$T/body" | grep -q ',nvml:Tesla Mystery,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*,[0-9.]*,8,7,49$' &&
	ok "the older transaction's PCIe change reaches the copy after it commits" ||
	not_ok "the older transaction's PCIe change reaches the copy after it commits" "$(cat "$T/body")"
as_ref "after commits out of order"

# Rollup rows added to a run stored earlier (without any), in a later
# transaction: the run is fetched again with them.
mk rm-g "$(at '-30 seconds')" '.synthetic = false | .results = []' >"$T/g1.json"
post "report g1 (no results)" "$T/g1.json"
as_ref "a run without results"
q "INSERT INTO rollup_gpu_runs (measured_at, gpu_uuid, run_id, synthetic, metrics, dtypes, units, v, lim,
   v_week, slowdowns, shape) SELECT now(), replace(gpu_uuid, '-', '-g-'), '$(run_of g1)', false, metrics,
   dtypes, units, v, lim, v_week, slowdowns, shape FROM rollup_gpu_runs WHERE run_id = '$(run_of f1)';
   INSERT INTO node_gpus (uuid, hostname, gpu_index, name, gpu_type, pci_bus_id, info, last_seen)
   SELECT replace(uuid, '-', '-g-'), 'rm-g', gpu_index, name, gpu_type, pci_bus_id, info, now()
   FROM node_gpus WHERE hostname = 'rm-f'" >/dev/null
as_ref "rollup rows added to a run stored earlier"
[ "$(ref 1 0.1 true | awk -F, '$2 == "h100-sxm5-80gb" {print $3}')" = 40 ] &&
	ok "the added rows count (40 H100s in the last day: a, b, c, e, f, g less the moved run)" ||
	not_ok "the added rows count" "$(ref 1 0.1 true | tr '\n' ' ')"

# A second daemon (real runs only) on the same database, while the first
# writes.
second_daemon
csv_as_ref "a second daemon's first read, real runs only" false "$base2"
mk rm-c "$(at '-20 seconds')" ".synthetic = false | $(slow 0007 gemm_tflops 0.5)" >"$T/c3.json"
post "report c3 (through the first daemon)" "$T/c3.json"
csv_as_ref "a second daemon, after a run stored by the first" false "$base2"
second_daemon_stop
as_ref "after the second daemon's reads"

# Deletes leave no row to fetch: the copy is loaded again (node b's first
# run is its week's latest again).
q "DELETE FROM benchmark_runs WHERE run_id = '$(run_of b2)'" >/dev/null
as_ref "after a run is deleted"
# A delete that only the new triggers see (0021): a run with no result
# rows (node g's: its rollup rows were added by hand above), and rollup rows
# alone (the fleet copy's trigger held off: the rows are not a GPU's latest
# for it to refresh).
q "DELETE FROM benchmark_runs WHERE run_id = '$(run_of g1)'" >/dev/null
as_ref "after a run without result rows is deleted"
q "ALTER TABLE rollup_gpu_runs DISABLE TRIGGER rollup_gpu_runs_latest_del;
   DELETE FROM rollup_gpu_runs WHERE run_id = '$(run_of b1)' AND gpu_uuid LIKE '%0003';
   ALTER TABLE rollup_gpu_runs ENABLE TRIGGER rollup_gpu_runs_latest_del" >/dev/null
as_ref "after a rollup row of a week's latest run is deleted"

# gpusizer_maintain() drops a partition without a trigger on the parent:
# node a's earlier-week run goes into the partition before this month
# (this database's first: created by 0013) and retention drops it.
since=$(q "SELECT floor(extract(epoch FROM now() - date_trunc('month', now())) / 86400)::int")
if [ "$since" -ge 1 ]; then
	q "UPDATE benchmark_runs SET received_at = date_trunc('month', now()) - interval '1 hour' WHERE run_id = '$(run_of a0)'" >/dev/null
	as_ref "a run moved before this month"
	dropped=$(q "SELECT * FROM gpusizer_maintain($since, 0, 0)" | grep -c '^dropped benchmark_runs_')
	[ "$(q "SELECT count(*) FROM benchmark_runs WHERE run_id = '$(run_of a0)'")" = 0 ] && [ "$dropped" -ge 1 ] &&
		ok "gpusizer_maintain($since, 0, 0) drops the partition of that run" ||
		not_ok "gpusizer_maintain($since, 0, 0) drops the partition of that run" "$dropped dropped"
	as_ref "after gpusizer_maintain() drops a partition"
else
	ok "gpusizer_maintain() drops a partition # SKIP the first day of a month has no partition behind it to drop"
fi
# A window that cannot be loaded does not fail the narrower reads after it:
# a NaN planted in an old run's rollup row (never written by the rollups:
# an unreadable row) fails the 366-day read, and the copy then loads only
# the 30 days the next read asks for.
q "UPDATE rollup_gpu_runs SET v_week = array_prepend('NaN'::float8, (coalesce(v_week, v))[2:])
   WHERE run_id = '$(run_of c1)';
   UPDATE benchmark_runs SET received_at = now() - interval '200 days' WHERE run_id = '$(run_of c1)'" >/dev/null
req GET '/v1/reports/capacity?section=capacity&window_days=366'
[ "$STATUS" -ge 500 ] && ok "a 366-day read over an unreadable row fails ($STATUS)" ||
	not_ok "a 366-day read over an unreadable row fails" "$STATUS"
WINDOWS="30 1" csv_as_ref "after a wider read failed" true
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"
