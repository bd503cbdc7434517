#!/usr/bin/env bash
# A GPU that leaves its node stops being counted (review s24c F1). The probe
# reports the node's whole inventory, node.gpu_uuids, beside the GPUs it
# measured (gpus[]); the server marks the node's GPUs a newer inventory no
# longer lists removed: out of /v1/fleet, /v1/nodes, the capacity report's
# fleet and freshness tables, and listed under the node's removed_gpus. A
# --devices run (a subset in gpus[], the whole node in gpu_uuids) removes
# nothing; an older report sent late (a spool flush) neither removes nor
# brings back; a report without gpu_uuids (an older probe) only adds. And a
# report that contradicts itself is a 400 naming the field (review s24c F3).
# Reports of tests/fixtures/probe/report_synthetic_h100x8.json, made real,
# under a GPU name no catalog type maps (its own nvml: group).
. "$(dirname "$0")/lib.sh"
start_daemon || { not_ok "daemon starts"; exit 1; }
probe=$(create_token "inventory-$RANDOM$RANDOM" probe)
P=(-H "Authorization: Bearer $probe" -H 'Content-Type: application/json')
fix=$TOP/tests/fixtures/probe/report_synthetic_h100x8.json
name="NVIDIA Inventory $RANDOM$RANDOM"
host=inventory-$RANDOM$RANDOM
pre=$(cut -c1-8 /proc/sys/kernel/random/uuid)
u() { printf 'GPU-%s-0000-4000-8000-%012d' "$pre" "$1"; }

# mk FILE HOURS_AGO "MEASURED" "INVENTORY|null": a report of $host started
# HOURS_AGO hours ago measuring GPUs MEASURED (numbers: uuid u N, index in
# the list's order) with node.gpu_uuids the GPUs INVENTORY (or null)
mk() {
	local at inv=null m
	at=$(date -u -d "-$2 hours" +%Y-%m-%dT%H:%M:%S.000Z)
	m=$(for n in $3; do u "$n"; echo; done | jq -R . | jq -sc .)
	[ "$4" != null ] && inv=$(for n in $4; do u "$n"; echo; done | jq -R . | jq -sc .)
	jq --arg at "$at" --arg r "$(cat /proc/sys/kernel/random/uuid)" --arg h "$host" \
		--arg name "$name" --argjson m "$m" --argjson inv "$inv" '
		.synthetic = false | .run_id = $r | .node.hostname = $h
		| .node.gpu_count = ($m | length) | .node.gpu_uuids = $inv
		| .started_at = $at | .finished_at = $at
		| .gpus[0] as $g0
		| ([.results[] | select(.metric == "hbm_read_gbps" and .gpu_index == 0)][0]) as $r0
		| .gpus = [$m | to_entries[] | . as $e | $g0 | .index = $e.key | .name = $name
			| .gpu_type = null | .uuid = $e.value]
		| .results = [.gpus[] | . as $g | $r0 | .gpu_index = $g.index | .gpu_uuid = $g.uuid]' \
		"$fix" >"$T/$1.json"
}
post() { req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/$1.json"; }
# counted N NAME: the node lists N GPUs, /v1/nodes counts N, the fleet N
counted() {
	req GET "/v1/nodes/$host"
	check "$2: /v1/nodes/{hostname} lists $1 GPUs" 200 "(.gpus | length) == $1"
	req GET /v1/nodes
	check "$2: /v1/nodes counts $1" 200 "(.items[] | select(.hostname == \"$host\") | .gpus) == $1"
	req GET /v1/fleet
	check "$2: /v1/fleet counts $1" 200 "(.items[] | select(.gpu_type == \"nvml:$name\") | .gpus) == $1"
}

mk a 10 "0 1 2 3 4 5 6 7" "0 1 2 3 4 5 6 7"
post a
check "a node of 8 GPUs with its inventory is stored" 201
counted 8 "8 GPUs"
# a --devices 0,1 run: two measured, the whole node in the inventory
mk b 9 "0 1" "0 1 2 3 4 5 6 7"
post b
check "a run of 2 of the node's 8 GPUs is stored" 201
counted 8 "a subset run removes nothing"
# an RMA: GPU 7 replaced by GPU 8
mk c 8 "0 1 2 3 4 5 6 8" "0 1 2 3 4 5 6 8"
post c
check "the node after an RMA is stored" 201
counted 8 "GPU 7 replaced by GPU 8"
req GET "/v1/nodes/$host"
check "the replaced GPU is listed under removed_gpus" 200 \
	"([.removed_gpus[].uuid] == [\"$(u 7)\"]) and (.removed_gpus[0].removed_at | type) == \"string\"
	 and ([.gpus[].uuid] | index(\"$(u 7)\")) == null"
req GET '/v1/reports/capacity?section=freshness'
tr -d '\r' <"$T/body" | grep -F "$host," | cut -d, -f1,3 | grep -qx "$host,8" &&
	ok "the freshness table counts 8" || not_ok "the freshness table counts 8" "$(grep -F "$host" "$T/body")"
req GET '/v1/reports/capacity?section=fleet'
tr -d '\r' <"$T/body" | grep -F "nvml:$name," | awk -F, '{print $(NF-3), $NF}' | grep -qx '8 1' &&
	ok "the capacity report's fleet table counts 8 GPUs on 1 node" ||
	not_ok "the capacity report's fleet table counts 8 GPUs on 1 node" "$(grep -F "nvml:$name" "$T/body")"
# GPU 6 pulled
mk d 7 "0 1 2 3 4 5 8" "0 1 2 3 4 5 8"
post d
check "the node without GPU 6 is stored" 201
counted 7 "GPU 6 pulled"
# an older report, sent late from a spool: the node as it was
mk e 20 "0 1 2 3 4 5 6 7" "0 1 2 3 4 5 6 7"
post e
check "an older report sent late is stored" 201
counted 7 "an older report brings back nothing"
# GPU 6 back in the node, not measured by a one-GPU run
mk f 6 "0" "0 1 2 3 4 5 6 8"
post f
check "a newer inventory listing GPU 6 again is stored" 201
counted 8 "GPU 6 listed again is back"
req GET "/v1/nodes/$host"
check "only GPU 7 stays removed" 200 "[.removed_gpus[].uuid] == [\"$(u 7)\"]"
# an older probe: no inventory, so a new GPU only adds
mk g 5 "0 9" null
post g
check "a report without gpu_uuids is stored" 201
counted 9 "a report without an inventory only adds"

# reports that contradict themselves
mk x 1 "0 1" "0 2"
post x
check_problem "an inventory without a measured GPU is a 400" 400 'node.gpu_uuids'
mk x 1 "0 1" "0 1 1"
post x
check_problem "a GPU twice in the inventory is a 400" 400 'node.gpu_uuids'
# refused JQ FIELD NAME: report x edited by JQ is a 400 naming FIELD
refused() {
	jq "$1" "$T/x.json" >"$T/x2.json"
	req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/x2.json"
	check_problem "$3" 400 "$2"
}
mk x 1 "0" "0"
refused '.node.gpu_uuids = "all"' node.gpu_uuids "an inventory that is not a list is a 400"
refused '.node.gpu_uuids = [7]' node.gpu_uuids "an inventory entry that is not a string is a 400"
mk x 1 "0 1" "0 1"
refused '.node.gpu_count = 1' node.gpu_count "a gpu_count below the GPUs listed is a 400"
refused '.results[0].gpu_index = 1' 'results[0].gpu_index' "a result whose gpu_index is not its gpu_uuid's is a 400"
req GET "/v1/nodes/$host"
check "no refused report changed the node" 200 "(.gpus | length) == 9"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"
