#!/usr/bin/env bash
# demo.sh - `make demo`: demo data in a running gpusizerd, so the fleet
# view, the capacity report and docs/API.md's examples marked "after
# `make demo`" have something to show before any GPU node reports.
#
#   GPUSIZER_URL   the daemon (default http://127.0.0.1:8080, `make run`'s)
#   DATABASE_URL   its database, for the probe token; without it the CLI
#                  reads var/database_url, which `make run` writes
#
# It posts the SYNTHETIC probe report of tests/fixtures/probe (nothing in
# it was measured) as three nodes, dated now: two 8 x H100 SXM5 nodes (GPU
# 3 of the second one trained its PCIe link at Gen4 and reads HBM 20 %
# slower, so the fleet view has a degraded GPU) and one 8 x A100 SXM4 node
# (the H100 figures scaled to the A100's datasheet). Then it sizes a few
# jobs: training and inference on three GPU types and one compare.
#
# Running it again posts new runs of the same nodes and GPUs (new run_id,
# dated now) and asks the same sizing questions, which the report counts
# as the same jobs. The probe token it makes is revoked when it is done.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" # the CLI looks for var/database_url here
url=${GPUSIZER_URL:-http://127.0.0.1:8080}
url=${url%/}
bin=${GPUSIZERD:-$top/${BUILD:-build}/gpusizerd}
fixture=$top/tests/fixtures/probe/report_synthetic_h100x8.json

die() {
	echo "demo: $*" >&2
	exit 1
}
for c in curl jq; do
	command -v "$c" >/dev/null 2>&1 || die "needs $c (make deps installs it)"
done
[ -x "$bin" ] || die "no $bin: run make first"
ready=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$url/readyz" || true)
[ "$ready" = 200 ] ||
	die "no ready gpusizerd at $url (answered ${ready:-nothing}): start it with make run, or set GPUSIZER_URL"
if [ -z "${DATABASE_URL:-}" ] && [ ! -s var/database_url ]; then
	die "no database for the probe token: set DATABASE_URL to the daemon's, or use make run (it writes var/database_url)"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpusizer-demo.XXXXXX")
token_name=demo-probe-$(date -u +%Y%m%dT%H%M%SZ)-$$
cleanup() {
	"$bin" token revoke "$token_name" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
token=$("$bin" token create --name "$token_name" --scopes probe 2>"$tmp/token.err") ||
	die "cannot create a probe token: $(cat "$tmp/token.err")"

# The A100 node: no FP8 (Ampere), rates scaled to the A100's datasheet.
a100=$(cat "$top/tests/fixtures/probe/as_a100.jq")
# GPU 3 of the second H100 node: PCIe at Gen4, HBM reads 20 % slower.
slow3='.gpus[3].pcie.gen_current = 4
	| .results |= map(if .gpu_index == 3 and .metric == "hbm_read_gbps" then
		.median *= 0.8 | .max *= 0.8 | .mean *= 0.8 | .p10 *= 0.8 | .p90 *= 0.8 else . end)'

echo "demo: posting synthetic probe reports (dated now) to $url"
started=$(date -u -d '-8 minutes' +%Y-%m-%dT%H:%M:%S.000Z)
finished=$(date -u +%Y-%m-%dT%H:%M:%S.000Z)
post_node() { # HOST UUID_TAG JQ_EDIT
	local host=$1 uuid_tag=$2 edit=$3 run status
	run=$(cat /proc/sys/kernel/random/uuid)
	jq --arg run "$run" --arg host "$host" --arg s "$started" --arg f "$finished" \
		--arg u "$uuid_tag" "
		.run_id = \$run | .node.hostname = \$host | .started_at = \$s | .finished_at = \$f
		| .gpus |= map(.uuid |= sub(\"5e7e71c0-0000\"; \$u))
		| .results |= map(if .gpu_uuid then .gpu_uuid |= sub(\"5e7e71c0-0000\"; \$u) else . end
			| if .peer_uuid then .peer_uuid |= sub(\"5e7e71c0-0000\"; \$u) else . end)
		| $edit" "$fixture" >"$tmp/report.json"
	status=$(curl -s -o "$tmp/answer.json" -w '%{http_code}' -X POST "$url/v1/benchmarks" \
		-H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
		--data-binary @"$tmp/report.json") || status=000
	[ "$status" = 201 ] || die "POST /v1/benchmarks for $host: $status $(head -c 300 "$tmp/answer.json")"
	jq -r '"  \(.hostname): run \(.run_id), \(.gpus) GPUs, \(.results) results"' "$tmp/answer.json"
}
post_node demo-h100-1 de300001-0001 '.'
post_node demo-h100-2 de300001-0002 "$slow3"
post_node demo-a100-1 de300001-0003 "$a100"

echo "demo: sizing jobs"
size() { # ENDPOINT BODY
	local ep=$1 body=$2 status
	status=$(curl -s -o "$tmp/answer.json" -w '%{http_code}' -X POST "$url/v1/sizing/$ep" \
		-H 'Content-Type: application/json' -d "$body") || status=000
	[ "$status" = 201 ] || die "POST /v1/sizing/$ep: $status $(head -c 300 "$tmp/answer.json")"
	jq -r --arg ep "$ep" --argjson q "$body" '"  \($ep) \(.model.name // $q.model // "") on \($q.gpu // ($q.gpus | join(", "))): " +
		(if .plans then (.plans[0] | "\(.gpus) GPUs" +
			(if (.days // 0) > 0 then ", \(.days) days" else "" end))
		 else .verdict // "" end) + "  (\(.id))"' "$tmp/answer.json"
}
size training '{"model": "llama-3-8b", "seq_len": 8192, "train_tokens": 1e12, "global_batch_size": 512, "gpu": "h100-sxm5-80gb", "max_gpus": 256}'
size training '{"model": "llama-2-7b", "seq_len": 4096, "train_tokens": 2e11, "gpu": "a100-sxm4-80gb", "max_gpus": 64}'
size training '{"model": "llama-2-70b", "seq_len": 4096, "train_tokens": 2e12, "global_batch_size": 1024, "gpu": "h100-sxm5-80gb", "max_gpus": 2048, "deadline_days": 30}'
size inference '{"model": "llama-3-70b", "weight_precision": "fp8", "prompt_tokens": 2048, "output_tokens": 512, "requests_per_s": 10, "tpot_ms": 50, "gpu": "h100-sxm5-80gb"}'
size inference '{"model": "llama-2-7b", "prompt_tokens": 1024, "output_tokens": 256, "requests_per_s": 20, "gpu": "a100-sxm4-80gb"}'
size inference '{"model": "llama-3-8b", "prompt_tokens": 1024, "output_tokens": 256, "requests_per_s": 5, "gpu": "l4-24gb"}'
size compare '{"training": {"model": "llama-2-7b", "seq_len": 4096, "train_tokens": 2e11, "max_gpus": 64}, "gpus": ["a100-sxm4-80gb", "h100-sxm5-80gb", "l4-24gb"]}'

cat <<EOF
demo: done. Look at:
  $url/v1/reports/capacity   (the capacity report; save it: curl -s $url/v1/reports/capacity -o capacity.html)
  $url/v1/fleet
  $url/v1/nodes
  $url/v1/recommendations
EOF
