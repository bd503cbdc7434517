#!/usr/bin/env bash
# fleet.sh - `make bench-fleet`: a simulated fleet's history, then what it
# costs to keep and to read (issue 18). Figures, never assertions.
#
#   NODES=2000 DAYS=365 bench/fleet.sh
#
# 1. A private PostgreSQL (deploy/dev/pg.sh) and build/gpusizerd. One real
#    report (tests/fixtures/probe/report_synthetic_h100x8.json: 8 H100s,
#    290 results) is posted through the API, and VARIANTS - 1 copies of it
#    with every decimal number moved by up to +-0.5 % (a real run's numbers
#    all differ from the last one's, and that is what compression sees):
#    the first's results are the template of every generated run's
#    rollups; the variants' stored reports (zstd frames made by the
#    daemon, migrations/0020) are the generated runs' reports in turn.
# 2. NODES 8-GPU nodes probe once a day for DAYS days, generated in SQL
#    (generate_series, one statement per day and batch of nodes, one
#    transaction per day, into the same tables as ingestion, not over
#    HTTP): each run's rollups are the template run's, every value with
#    its own +-0.5 % noise and a slow drift (-2 % a year); every 97th node
#    has one GPU 25 % slow on GEMM with a thermal slowdown; node 0 is
#    retired halfway (no runs after DAYS/2).
#    A generated run's stored report is a variant's, as posted (its
#    run_id and host are the variant's): the bytes are a real report's.
# 3. Measures and prints one line per figure, name then value:
#      bytes_per_gpu_year      database growth / (GPUs x DAYS/365)
#      ingest_reports_per_s    POST /v1/benchmarks at that size (INGEST
#                              reports of new runs, 4 clients)
#      fleet_p50_ms fleet_p99_ms  GET /v1/fleet (default 30-day window),
#                              after the first read (printed as a comment),
#                              which loads the daemon's copy
#      nodes_p99_ms            GET /v1/nodes
#      calibration_p99_ms      a training sizing request calibrated on the
#                              H100 runs of 30 days, no cache
#                              (--calibration-cache-s 0); the same request
#                              on datasheet figures is printed beside it
#      capacity_report_p99_ms  GET /v1/reports/capacity (CSV, capacity),
#                              after its first read (printed as a comment),
#                              which loads the daemon's weekly copy
#    and, as comments, GET /v1/benchmarks pages (list_p99_ms,
#    list_sparse_p99_ms) and the bytes split into history and per-GPU state.
#    READS (default 50) requests per read figure. KEEP=1 leaves the
#    database running afterwards.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
nodes=${NODES:-2000}
days=${DAYS:-365}
reads=${READS:-50}
ingest=${INGEST:-200}
batch=${BATCH:-100}
variants=${VARIANTS:-8}
work=$(mktemp -d "${TMPDIR:-/tmp}/gsz-fleet.XXXXXX")
chmod 755 "$work"
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	if [ -n "${KEEP:-}" ]; then # KEEP=1: the database stays up, to explore
		echo "# kept: DATABASE_URL='$DATABASE_URL' (deploy/dev/pg.sh stop $work/pg)" >&2
		return
	fi
	deploy/dev/pg.sh stop "$work/pg" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
make -s build/gpusizerd
port=$((30000 + RANDOM % 10000))
DATABASE_URL=$(deploy/dev/pg.sh start "$work/pg" "$port")
export DATABASE_URL
http=$((40000 + RANDOM % 10000))
build/gpusizerd serve --listen "127.0.0.1:$http" --calibration-cache-s 0 >"$work/d.log" 2>&1 &
pid=$!
base=http://127.0.0.1:$http
for _ in $(seq 200); do curl -sf "$base/readyz" >/dev/null && break; sleep 0.1; done
token=$(build/gpusizerd token create --name fleet-bench --scopes probe 2>/dev/null)
psqlbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)/psql
sql() { "$psqlbin" "$DATABASE_URL" -Atq -v ON_ERROR_STOP=1 "$@"; }
now=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
tmpl=$(cat /proc/sys/kernel/random/uuid)
jq -c --arg r "$tmpl" --arg now "$now" '.run_id = $r | .node.hostname = "fleet-template"
	| .synthetic = false | .started_at = $now | .finished_at = $now' \
	tests/fixtures/probe/report_synthetic_h100x8.json >"$work/tmpl.json"
curl -sf -o /dev/null -X POST "$base/v1/benchmarks" -H "Authorization: Bearer $token" \
	-H 'Content-Type: application/json' --data-binary @"$work/tmpl.json"
size() { sql -c "CHECKPOINT" >/dev/null; sql -c "SELECT pg_database_size(current_database())"; }
for v in $(seq 2 "$variants"); do
	# its own host and GPUs: the template's GPUs stay the template host's
	jq -c --arg r "$(cat /proc/sys/kernel/random/uuid)" --arg h "fleet-template-$v" \
		--arg s "$(printf 'f%07x' "$v")" '.run_id = $r | .node.hostname = $h
		| .gpus |= map(.uuid |= sub("5e7e71c0"; $s))
		| .results |= map(if .gpu_uuid then .gpu_uuid |= sub("5e7e71c0"; $s) else . end
			| if .peer_uuid then .peer_uuid |= sub("5e7e71c0"; $s) else . end)' "$work/tmpl.json" |
		awk -v seed="$v" 'BEGIN { srand(seed) } {
			out = ""; s = $0
			# a value (after ":) or an array element (after [ or ,) with a
			# decimal point: never inside a date-time string
			while (match(s, /(":|[[,])-?[0-9]+\.[0-9]+([eE][-+]?[0-9]+)?/)) {
				k = substr(s, RSTART, 1) == "\"" ? 2 : 1
				num = substr(s, RSTART + k, RLENGTH - k)
				out = out substr(s, 1, RSTART + k - 1) sprintf("%.6g", num * (1 + (rand() - 0.5) * 0.01))
				s = substr(s, RSTART + RLENGTH)
			}
			print out s }' >"$work/variant.json"
	curl -sf -o /dev/null -X POST "$base/v1/benchmarks" -H "Authorization: Bearer $token" \
		-H 'Content-Type: application/json' --data-binary @"$work/variant.json" ||
		echo "# variant $v was not stored" >&2
done

# The template: the posted run's per-run columns and rollups, its GPUs
# numbered by their place; the variants' stored reports.
sql -v tmpl="$tmpl" <<'EOF'
CREATE TABLE bench_tmpl_run AS
SELECT result_count, gpu_types, node_type, metrics, dtypes
FROM benchmark_runs WHERE run_id = :'tmpl';
CREATE TABLE bench_tmpl_blob AS
SELECT row_number() OVER (ORDER BY hostname) - 1 AS k, report_zstd
FROM benchmark_runs WHERE hostname LIKE 'fleet-template%';
CREATE TABLE bench_tmpl_gpu AS
SELECT g.*, dense_rank() OVER (ORDER BY g.uuid) - 1 AS gi
FROM node_gpus g WHERE hostname = 'fleet-template';
CREATE TABLE bench_tmpl_rollup AS
SELECT dense_rank() OVER (ORDER BY x.gpu_uuid) - 1 AS gi, x.shape, x.v,
       x.lim, x.v_week, x.slowdowns,
       ARRAY(SELECT m = 'gemm_tflops' FROM unnest(s.metrics)
             WITH ORDINALITY u (m, i) ORDER BY i) AS is_gemm
FROM rollup_gpu_runs x JOIN rollup_shapes s USING (shape)
WHERE x.run_id = :'tmpl';
CREATE TABLE bench_tmpl_type AS
SELECT gpu_type, metrics, dtypes, v FROM rollup_type_runs
WHERE run_id = :'tmpl';
-- A rollup's values, each with its own +-0.5 % noise, the drift, and the
-- slow GPU's GEMM values 25 % down; NULL stays NULL.
CREATE FUNCTION bench_noisy(v float8[], is_gemm boolean[], drift float8,
                            slow boolean) RETURNS float8[]
LANGUAGE sql VOLATILE AS $$
    SELECT CASE WHEN v IS NOT NULL THEN ARRAY(
        SELECT x * (1 + (random() - 0.5) * 0.01) * drift
               * CASE WHEN slow AND is_gemm[i] THEN 0.75 ELSE 1 END
        FROM unnest(v) WITH ORDINALITY u (x, i) ORDER BY i) END
$$;
EOF
before=$(size)

# One statement per day and batch of nodes, one transaction per day (a
# year in one transaction would keep every superseded version of each
# GPU's latest row, rollup_gpu_latest, until it ended: ~17 GB at 16,000
# GPUs). A run's rollups are the template run's, each value moved by its
# own noise (what noise on each result does to their median, without
# taking 290 medians a run: generation is ~20x faster than through
# gpusizer_rollup(), and a year of 16,000 GPUs takes minutes, not hours).
gen_start=$(date +%s.%N)
sql -v nodes="$nodes" -v days="$days" <<'EOF'
INSERT INTO nodes (hostname, cpu_model, driver_version, cuda_version,
                   inventory, first_seen, last_seen)
SELECT 'fleet-' || lpad(n::text, 5, '0'), 'bench', '570.0', '12.8', '{}',
       now() - make_interval(days => :days), now()
FROM generate_series(0, :nodes - 1) n;
INSERT INTO node_gpus (uuid, hostname, gpu_index, name, gpu_type,
                       pci_bus_id, info, last_seen)
SELECT 'GPU-' || md5('fleet-' || n || '-' || t.gi), 'fleet-' ||
       lpad(n::text, 5, '0'), t.gi, t.name, t.gpu_type, t.pci_bus_id,
       t.info, now()
FROM generate_series(0, :nodes - 1) n, bench_tmpl_gpu t;
CREATE FUNCTION bench_gen_day(nodes int, days int, batch int, d int)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    lo int := 0;
    t0 timestamptz := now() - make_interval(days => days - 1 - d);
    drift float8 := 1 - 0.02 * d / 365.0;
BEGIN
    WHILE lo < nodes LOOP
        WITH nn AS (
            SELECT n, gen_random_uuid() AS run_id,
                   t0 - make_interval(mins => n % 1440) AS at
            FROM generate_series(lo, least(lo + batch, nodes) - 1) n
            WHERE NOT (n = 0 AND d >= days / 2)),
        ids AS (INSERT INTO benchmark_run_ids (run_id, received_at)
                SELECT run_id, at FROM nn RETURNING 1),
        runs AS (
            INSERT INTO benchmark_runs (run_id, hostname, status, mode,
                started_at, finished_at, received_at, report_zstd,
                synthetic, result_count, gpu_uuids, gpu_types,
                node_type, metrics, dtypes)
            SELECT nn.run_id, 'fleet-' || lpad(nn.n::text, 5, '0'), 'ok',
                   'full', nn.at - interval '8 minutes', nn.at, nn.at,
                   b.report_zstd, false, r.result_count,
                   ARRAY(SELECT 'GPU-' || md5('fleet-' || nn.n || '-' || g)
                         FROM generate_series(0, 7) g),
                   r.gpu_types, r.node_type, r.metrics, r.dtypes
            FROM nn, bench_tmpl_run r, bench_tmpl_blob b
            WHERE b.k = (nn.n + d) % (SELECT count(*) FROM bench_tmpl_blob)
            RETURNING run_id, received_at),
        g AS (
            INSERT INTO rollup_gpu_runs (measured_at, gpu_uuid, run_id,
                synthetic, shape, v, lim, v_week, slowdowns)
            SELECT runs.received_at, 'GPU-' || md5('fleet-' || nn.n || '-'
                   || t.gi), runs.run_id, false, t.shape,
                   bench_noisy(t.v, t.is_gemm, drift, s.slow), t.lim,
                   bench_noisy(t.v_week, t.is_gemm, drift, s.slow),
                   CASE WHEN s.slow THEN ARRAY(SELECT DISTINCT x FROM
                       unnest(t.slowdowns || '{hw_thermal_slowdown}'::text[])
                       x ORDER BY 1) ELSE t.slowdowns END
            FROM runs JOIN nn USING (run_id) CROSS JOIN bench_tmpl_rollup t
            CROSS JOIN LATERAL (SELECT nn.n % 97 = 0 AND t.gi = 3 AS slow) s
            RETURNING 1)
        INSERT INTO rollup_type_runs (measured_at, gpu_type, run_id,
                                      synthetic, metrics, dtypes, v)
        SELECT runs.received_at, t.gpu_type, runs.run_id, false, t.metrics,
               t.dtypes, bench_noisy(t.v, NULL, drift, false)
        FROM runs CROSS JOIN bench_tmpl_type t;
        lo := lo + batch;
    END LOOP;
END
$$;
EOF
for d in $(seq 0 $((days - 1))); do
	sql -c "SELECT bench_gen_day($((nodes)), $((days)), $((batch)), $d)" >/dev/null
	# superseded latest rows become reusable, as autovacuum would make them
	[ $((d % 7)) = 6 ] && sql -c "VACUUM rollup_gpu_latest"
done
sql <<'EOF'
UPDATE nodes n SET last_run_id = r.run_id, last_seen = r.received_at
FROM (SELECT DISTINCT ON (hostname) hostname, run_id, received_at
      FROM benchmark_runs ORDER BY hostname, received_at DESC) r
WHERE r.hostname = n.hostname AND n.hostname LIKE 'fleet-%';
UPDATE node_gpus g SET last_seen = n.last_seen FROM nodes n
WHERE n.hostname = g.hostname AND n.hostname LIKE 'fleet-%';
DROP FUNCTION bench_gen_day(int, int, int, int);
DROP FUNCTION bench_noisy(float8[], boolean[], float8, boolean);
VACUUM ANALYZE;
EOF
# Each GPU's latest row (rollup_gpu_latest, 0016) is rewritten by every
# run of its node; generated in one transaction, none of those versions
# could be reclaimed, where a live deployment's autovacuum reuses them
# (two rows a GPU, rewritten once a day): count the live table only.
sql -c "VACUUM FULL rollup_gpu_latest"
gen_end=$(date +%s.%N)
after=$(size)
gpus=$((nodes * 8))
awk -v a="$after" -v b="$before" -v g="$gpus" -v d="$days" \
	'BEGIN { printf "bytes_per_gpu_year %.0f\n", (a - b) / g * 365 / d }'
# Part of that growth is per GPU, not per run (node_gpus, nodes,
# rollup_gpu_latest: rows updated in place; history is the partitioned
# tables and the run ids); scaled by 365/DAYS it
# overstates a year when DAYS is short. The split, and the year it implies:
hist=$(sql -c "SELECT pg_total_relation_size('benchmark_run_ids') + coalesce(sum(pg_total_relation_size(t.relid)), 0)
	FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace,
	LATERAL (SELECT relid FROM pg_partition_tree(c.oid) WHERE isleaf) t
	WHERE s.nspname = 'public' AND c.relkind = 'p' AND NOT c.relispartition")
awk -v a="$after" -v b="$before" -v h="$hist" -v g="$gpus" -v d="$days" 'BEGIN {
	printf "# of which partitioned history %.0f bytes per GPU-year, per-GPU state %.0f bytes per GPU;", h / g * 365 / d, (a - b - h) / g
	printf " a year of this fleet: %.0f bytes per GPU-year\n", h / g * 365 / d + (a - b - h) / g }' >&2
echo "# generated $nodes nodes x $days days in $(awk -v a="$gen_start" -v b="$gen_end" 'BEGIN { printf "%.0f", b - a }') s; database $((after / 1048576)) MiB" >&2
# where it went, per table (partitions summed; heap, TOAST, indexes)
sql -c "SELECT c.relname, sum(pg_table_size(t.relid)), sum(pg_indexes_size(t.relid))
	FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace,
	LATERAL (SELECT relid FROM pg_partition_tree(c.oid) WHERE isleaf) t
	WHERE s.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
	GROUP BY 1 ORDER BY 2 + 3 DESC LIMIT 6" |
	awk -F'|' -v g="$gpus" -v d="$days" '{ printf "# %s: table %.0f, indexes %.0f bytes per GPU-year\n", $1, $2 / g * 365 / d, $3 / g * 365 / d }' >&2

# Ingestion at that size: new runs, 4 clients, each report its own host
# and GPUs (deploy/tools/db-growth.sh does the same: reports of the same
# GPUs would wait on each other's node_gpus row locks).
mkdir -p "$work/r"
for i in $(seq 1 "$ingest"); do
	jq -c --arg h "$(printf 'fleet-new-%05d' "$i")" --arg r "$(cat /proc/sys/kernel/random/uuid)" \
		--arg s "$(printf '%08x' "$i")" '.run_id = $r | .node.hostname = $h
		| .gpus |= map(.uuid |= sub("5e7e71c0"; $s))
		| .results |= map(if .gpu_uuid then .gpu_uuid |= sub("5e7e71c0"; $s) else . end
			| if .peer_uuid then .peer_uuid |= sub("5e7e71c0"; $s) else . end)' \
		"$work/tmpl.json" >"$work/r/$i.json"
done
start=$(date +%s.%N)
find "$work/r" -name '*.json' -print0 | xargs -0 -P 4 -I{} curl -s -o /dev/null -w '%{http_code}\n' \
	-X POST "$base/v1/benchmarks" -H "Authorization: Bearer $token" \
	-H 'Content-Type: application/json' --data-binary @{} >"$work/codes"
end=$(date +%s.%N)
bad=$(grep -vc '^201$' "$work/codes" || true)
awk -v n="$ingest" -v a="$start" -v b="$end" 'BEGIN { printf "ingest_reports_per_s %.1f\n", n / (b - a) }'
[ "$bad" = 0 ] || echo "# $bad of $ingest posts did not answer 201" >&2

pct() { # NAME P: the P-th percentile of the ms values on stdin
	sort -n | awk -v name="$1" -v p="$2" '{ v[NR] = $1 } END {
		i = int(NR * p / 100 + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR
		printf "%s %.1f\n", name, v[i] }'
}
times() { # PATH: READS request times in ms
	for _ in $(seq 1 "$reads"); do
		curl -s -o /dev/null -w '%{time_total}\n' "$base$1"
	done | awk '{ printf "%.3f\n", $1 * 1000 }'
}
# The daemon's first fleet read loads its copy of every GPU's latest row
# (storage/fleet_mirror.c): once per start, and again after rows are
# deleted. Printed on its own; the percentiles are the reads after it.
curl -s -o /dev/null -w '%{time_total}\n' "$base/v1/fleet" | awk '{ printf "# fleet_first_read_ms %.1f\n", $1 * 1000 }' >&2
echo "# GPUs in the fleet view (30 days): $(curl -s "$base/v1/fleet" | jq '[.items[].gpus] | add')" >&2
times /v1/fleet >"$work/fleet"
pct fleet_p50_ms 50 <"$work/fleet"
pct fleet_p99_ms 99 <"$work/fleet"
times /v1/nodes | pct nodes_p99_ms 99
# Calibration as sizing reads it, with no cache (--calibration-cache-s 0
# above): a training sizing request with measured calibration (the copy
# brought up to date, the H100 medians over the window's runs, then the
# engine), beside the same request on datasheet figures (no database):
# the difference is the calibration read.
posts() { # BODY: READS request times in ms
	for _ in $(seq 1 "$reads"); do
		curl -s -o /dev/null -w '%{time_total}\n' -X POST "$base/v1/sizing/training" -d "$1"
	done | awk '{ printf "%.3f\n", $1 * 1000 }'
}
job='"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64,"top":1'
posts "{$job,\"calibration\":\"measured\"}" >/dev/null # the copy's first load
posts "{$job,\"calibration\":\"measured\"}" | pct calibration_p99_ms 99
posts "{$job,\"calibration\":\"datasheet\"}" | pct sizing_datasheet_p99_ms 99 | sed 's/^/# /' >&2
# GET /v1/benchmarks opens compact runs' reports (0020): a page of 100
# results (one run opened), and a page under a filter no result matches
# although every run measured each part of it (64 runs opened, the most
# one page opens).
times '/v1/benchmarks?limit=100' | pct list_p99_ms 99 | sed 's/^/# /' >&2
times '/v1/benchmarks?metric=hbm_read_gbps&dtype=bf16&limit=100' |
	pct list_sparse_p99_ms 99 | sed 's/^/# /' >&2
# The report's first read loads the daemon's weekly copy (0021): printed
# on its own, as the fleet view's is.
curl -s -o /dev/null -w '%{time_total}\n' "$base/v1/reports/capacity?section=capacity" |
	awk '{ printf "# capacity_report_first_read_ms %.1f\n", $1 * 1000 }' >&2
times '/v1/reports/capacity?section=capacity' | pct capacity_report_p99_ms 99
