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

# mk FILE HOURS_AGO "MEASURED" "INVENTORY|null" [HOST [SYNTHETIC]]: a
# report of HOST ($host) started HOURS_AGO hours ago (negative: ahead)
# measuring GPUs MEASURED (numbers: uuid u N, index in the list's order)
# with node.gpu_uuids the GPUs INVENTORY (or null)
mk() {
	local at inv=null m
	at=$(date -u -d "$((-$2)) hours" +%Y-%m-%dT%H:%M:%S.000Z)
	m=$(for n in $3; do u "$n"; echo; done | jq -R . | jq -sc .)
	[ "$4" != null ] && inv=$(for n in $4; do u "$n"; echo; done | jq -R . | jq -sc .)
	jq -c --arg at "$at" --arg r "$(cat /proc/sys/kernel/random/uuid)" --arg h "${5:-$host}" \
		--arg name "$name" --argjson m "$m" --argjson inv "$inv" --argjson syn "${6:-false}" '
		.synthetic = $syn | .run_id = $r | .node.hostname = $h
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
refused '.node.gpu_uuids = [7]' 'node.gpu_uuids[0]' "an inventory entry that is not a string is a 400 naming it"
refused '.node.gpu_uuids = []' node.gpu_uuids "an empty inventory is a 400 (it would remove every GPU)"
refused '.node.nvml_available = false' node.gpu_uuids "an inventory beside nvml_available false is a 400"
refused '.node.gpu_count = 1.5' node.gpu_count "a gpu_count of 1.5 is a 400"
jq '.node.gpu_count = 1.5' "$T/x.json" >"$T/x2.json"
req POST /v1/benchmarks "${P[@]}" --data-binary @"$T/x2.json"
jq -e '[.errors[] | select(.field == "node.gpu_count")] | length == 1' "$T/body" >/dev/null &&
	ok "... named once, by its own rule" || not_ok "... named once, by its own rule" "$(body)"
mk x 1 "0 1" "0 1"
refused '.node.gpu_count = 1' node.gpu_count "a gpu_count below the GPUs listed is a 400"
refused '.results[0].gpu_index = 1' 'results[0].gpu_index' "a result whose gpu_index is not its gpu_uuid's is a 400"
req GET "/v1/nodes/$host"
check "no refused report changed the node" 200 "(.gpus | length) == 9"

# present HOST "GPUS" "REMOVED" NAME: the node lists exactly these
present() {
	local g r
	g=$(for n in $2; do u "$n"; echo; done | jq -R . | jq -sc 'sort')
	r=$(for n in $3; do u "$n"; echo; done | jq -R . | jq -sc 'sort')
	req GET "/v1/nodes/$1"
	check "$4" 200 "([.gpus[].uuid] | sort) == $g and ([.removed_gpus[].uuid] | sort) == $r"
}
# a synthetic report's inventory removes nothing (review s25a F4)
h2=$host-syn
mk s1 10 "20 21 22" "20 21 22" "$h2"; post s1
mk s2 9 "20" "20" "$h2" true; post s2
check "a synthetic report with an inventory is stored" 201
present "$h2" "20 21 22" "" "a synthetic report's inventory removes no real GPU"
# a node clock a day ahead does not freeze the inventory (s25a F3)
h3=$host-skew
mk k1 2 "30 31 32" "30 31 32" "$h3"; post k1
mk k2 -20 "30 31" "30 31" "$h3"; post k2
check "a report dated 20 hours ahead is stored" 201
present "$h3" "30 31" "32" "its inventory counts from its arrival"
sleep 1.1 # a second after the skewed report arrived (its started_at counts from then)
mk k3 0 "30 31 32" "30 31 32" "$h3"; post k3
present "$h3" "30 31 32" "" "the next correct report, measuring GPU 32, brings it back"
# an older report sent late moves no GPU back and adds none the newest
# inventory leaves out (s25a F5)
ha=$host-ma hb=$host-mb
mk m1 5 "40 41 42 43" "40 41 42 43" "$ha"; post m1
mk m2 4 "40 41 42 43" "40 41 42 43" "$ha"
mk m3 3 "40 41 42" "40 41 42" "$ha"; post m3
mk m4 2 "50 51 43" "50 51 43" "$hb"; post m4
post m2
check "the spooled older report of the first node is stored" 201
present "$ha" "40 41 42" "" "the GPU moved to the second node is not moved back"
present "$hb" "50 51 43" "" "... and stays on the second node"
# a GPU removed from its node and then measured on a node without an
# inventory (an older probe there) counts on that node (review s25d V1)
mk vx1 4 "45 46" "45 46" "$host-vx"; post vx1
mk vx2 3 "45" "45" "$host-vx"; post vx2
present "$host-vx" "45" "46" "GPU 46 pulled from its node"
mk vy 2 "46" null "$host-vy"; post vy
check "a report without an inventory measuring GPU 46 on another node is stored" 201
present "$host-vy" "46" "" "... and GPU 46 counts there"
present "$host-vx" "45" "" "... and no longer on the node it left"
hw=$host-w
mk w1 2 "60 61 62" "60 61 62" "$hw"
mk w2 1 "60 61" "60 61" "$hw"; post w2
jq '.node.driver_version = "old-driver"' "$T/w1.json" >"$T/w1b.json"; post w1b
check "an older report arriving after the newest is stored" 201
present "$hw" "60 61" "62" "it adds no GPU the newest inventory leaves out"
req GET "/v1/nodes/$hw"
check "the node's facts are its newest report's (s25a F9)" 200 \
	'.driver_version != "old-driver" and (.node.gpu_uuids | length) == 2'
# a large inventory in a small compact body counts (s25a F6: it had been
# dropped when the request's scratch space ran out)
hbig=$host-big
mk g1 3 "$(seq -s ' ' 100 199)" "$(seq -s ' ' 100 199)" "$hbig"; post g1
mk g2 2 "100" "$(seq -s ' ' 100 198)" "$hbig"; post g2
check "a one-GPU report with a 99-GPU inventory is stored" 201
req GET "/v1/nodes/$hbig"
check "... and its inventory counts: GPU 199 removed" 200 \
	"(.gpus | length) == 99 and [.removed_gpus[].uuid] == [\"$(u 199)\"]"
# reports of one node that race end as if sent one after the other (s25a
# F1, F2): 12 nodes, each a --devices 2 run and a newer --devices 0 run
# whose inventory drops GPU 2, posted at once
: >"$T/race.codes"
for i in $(seq 1 12); do
	mk "r0-$i" 3 "7$i 8$i 9$i" "7$i 8$i 9$i" "$host-race$i"; post "r0-$i"
	mk "ra-$i" 2 "9$i" "7$i 8$i 9$i" "$host-race$i"
	mk "rb-$i" 1 "7$i" "7$i 8$i" "$host-race$i"
done
pids=()
for i in $(seq 1 12); do
	for f in "ra-$i" "rb-$i"; do
		curl -s -o /dev/null -w '%{http_code}\n' -X POST "$GSZ_URL/v1/benchmarks" "${P[@]}" \
			--data-binary @"$T/$f.json" >>"$T/race.codes" &
		pids+=($!)
	done
done
wait "${pids[@]}" # not the daemon's
[ "$(sort -u "$T/race.codes")" = 201 ] && ok "24 racing reports: every one 201 (no deadlock)" ||
	not_ok "24 racing reports: every one 201 (no deadlock)" "$(sort "$T/race.codes" | uniq -c)"
bad=0
for i in $(seq 1 12); do
	req GET "/v1/nodes/$host-race$i"
	jq -e --arg g "$(u "9$i")" '([.removed_gpus[].uuid] == [$g]) and (.gpus | length) == 2' "$T/body" >/dev/null || bad=$((bad + 1))
done
[ "$bad" = 0 ] && ok "... and every node ends as if they came in order (GPU 2 removed)" ||
	not_ok "... and every node ends as if they came in order (GPU 2 removed)" "$bad of 12 not"
# the deterministic form of that race (review s25b G1): an in-flight
# ingest (here a psql session) holds GPU 2's row while an older report
# pulls GPU 2 and a newer one lists it again; each reconciliation reads
# the inventory only after the one before it committed
psqlbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)/psql
hr=$host-lock
mk l0 3 "0 1 2" "0 1 2" "$hr"; post l0
mk l1 2 "0 1" "0 1" "$hr"
mk l2 1 "0" "0 1 2" "$hr"
"$psqlbin" "$DATABASE_URL" -Atq -v ON_ERROR_STOP=1 >"$T/lock.out" 2>&1 <<SQL &
BEGIN;
SELECT 1 FROM node_gpus WHERE uuid = '$(u 2)' FOR UPDATE;
SELECT pg_sleep(2);
COMMIT;
SQL
holder=$!
sleep 0.5
curl -s -o "$T/l1.out" -w '%{http_code}' -X POST "$GSZ_URL/v1/benchmarks" "${P[@]}" \
	--data-binary @"$T/l1.json" >"$T/l1.code" &
older=$!
sleep 0.5
post l2
wait "$older" "$holder"
[ "$(cat "$T/l1.code")" = 201 ] && ok "the older report, held up behind a row lock, is stored" ||
	not_ok "the older report, held up behind a row lock, is stored" "$(cat "$T/l1.code" "$T/l1.out")"
present "$hr" "0 1 2" "" "... and the newest inventory stands (GPU 2 counted)"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"
