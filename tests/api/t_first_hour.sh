#!/usr/bin/env bash
# The first hour (issue 16): answers keep what was asked. A deadline picks
# the cheapest plan that meets it; meets_deadline only with a deadline;
# context overruns, low efficiency and diminishing returns are warned
# about; fine-tunes get their own default batch.
. "$(dirname "$0")/lib.sh"

start_daemon || { not_ok "daemon starts"; exit 1; }

job70='"model":"llama-2-70b","seq_len":4096,"train_tokens":2e12,"global_batch_size":1024,"gpu":"h100-sxm5-80gb","max_gpus":2048'

# --- item 1: compare keeps every constraint and warning -------------------------
req POST /v1/sizing/compare -d '{"training":{"model":"llama-2-70b","seq_len":4096,"train_tokens":2e12,"deadline_days":60,"max_gpus":512},"gpus":["h100-sxm5-80gb","l4-24gb","a100-sxm4-80gb"]}'
check "compare with a deadline: every row says meets_deadline and carries its warnings" 201 \
	'all(.rows[] | select(.ok); has("meets_deadline") and (.warnings | type == "array") and has("efficiency_basis"))'
check "a row that misses the deadline is never cheapest or fastest, and says it misses" 201 \
	'all(.rows[] | select(.ok and (.meets_deadline | not)); (.cheapest | not) and (.fastest | not) and (.verdict | contains("misses the 60-day deadline")))'
check "the L4 row misses it with the single answer's warnings (TP over PCIe)" 201 \
	'(.rows[] | select(.gpu == "l4-24gb")) as $l | ($l.meets_deadline | not) and ($l.warnings | length) > 0'
check "the verdict is chosen among rows that meet it, and says so" 201 \
	'(.verdict | startswith("among the GPU types that meet the 60-day deadline")) and ((.rows[] | select(.cheapest)) .meets_deadline)'
l4w=$(jq -c '.rows[] | select(.gpu == "l4-24gb") | .warnings' "$T/body")
echo "$l4w" | jq -e 'all(.[]; startswith("plan(s) ") | not)' >/dev/null &&
	ok "a compare row names no \"plan(s) N of the list\" it does not show" ||
	not_ok "a compare row names no plans of a list" "$l4w"
req POST /v1/sizing/training -d '{"model":"llama-2-70b","seq_len":4096,"train_tokens":2e12,"deadline_days":60,"max_gpus":512,"gpu":"l4-24gb"}'
# (less the sentence about the other plans of the list, which a row does
# not show: "plan(s) 3, 4, 5 of the list offload ...")
jq -e --argjson w "$l4w" '(.checks.warnings | map(select(startswith("plan(s) ") | not))) == $w and (.plans[0].meets_deadline | not)' "$T/body" >/dev/null &&
	ok "the compare row's warnings and verdict are those of sizing L4 alone" ||
	not_ok "the compare row agrees with sizing L4 alone" "row $l4w vs $(jq -c .checks.warnings "$T/body")"
req POST /v1/sizing/compare -d '{"training":{"model":"llama-2-70b","seq_len":4096,"train_tokens":2e12,"deadline_days":5,"max_gpus":64},"gpus":["h100-sxm5-80gb","a100-sxm4-80gb"]}'
check "no row meets the deadline: the verdict says so, and so does every row" 201 \
	'(.verdict | startswith("no GPU type meets the 5-day deadline")) and all(.rows[]; .verdict | test(": misses the 5-day deadline; "))'
req POST /v1/sizing/compare -d '{"inference":{"model":"llama-3-70b","weight_precision":"fp8","prompt_tokens":2048,"output_tokens":256,"requests_per_s":10,"tpot_ms":30,"ttft_ms":500},"gpus":["h100-sxm5-80gb","h200-sxm-141gb"]}'
check "inference compare with targets: cheapest meets them, the verdict says among which" 201 \
	'(.verdict | startswith("among the GPU types that meet the latency targets")) and all(.rows[] | select(.cheapest); .meets_targets)'
req POST /v1/sizing/compare -d '{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"max_gpus":64},"gpus":["l4-24gb","rtx-4090-24gb"],"prices":{"rtx-4090-24gb":0.4}}'
check "a verdict naming an unmeasured GPU says its rate is datasheet x default" 201 \
	'(.verdict | contains("datasheet peak x a default efficiency, not a measurement")) and all(.rows[]; .efficiency_basis == "datasheet_only")'

# --- item 2: a deadline picks the cheapest plan that meets it -------------------
req POST /v1/sizing/training -d "{$job70,\"top\":16}"
check "without a deadline: the fastest plan first, no meets_deadline" 201 \
	'.assumptions.objective == "time" and ([.plans[] | has("meets_deadline")] | any | not) and (.assumptions | has("deadline") | not)'
fastest_gpus=$(jq '.plans[0].gpus' "$T/body")
fastest_cost=$(jq '.plans[0].cost' "$T/body")
req POST /v1/sizing/training -d "{$job70,\"deadline_days\":30,\"top\":16}"
check "with a deadline: objective cost, said in assumptions.deadline" 201 \
	'.assumptions.objective == "cost" and (.assumptions.deadline.ranking | contains("cheapest")) and .assumptions.deadline.days == 30'
check "with a deadline: the first plan meets it and is the cheapest that does" 201 \
	'.plans[0].meets_deadline and .plans[0].days <= 30 and ([.plans[] | select(.meets_deadline) | .cost] | min) == .plans[0].cost'
# Cost ties between GPU counts (same MFU) go to the faster plan, so the
# first plan may keep the fastest's GPUs; fewer GPUs must meet the deadline
# at no more cost.
jq -e --argjson f "$fastest_gpus" --argjson c "$fastest_cost" '.plans[0].cost <= $c and
	([.plans[] | select(.meets_deadline and .gpus < $f and .cost <= $c)] | length > 0)' "$T/body" >/dev/null &&
	ok "the cheapest plan that meets the deadline costs no more than the fastest, and fewer GPUs than the fastest ($fastest_gpus) meet it as cheaply" ||
	not_ok "the deadline plans: no more than the fastest's cost, fewer GPUs as cheap" "$(jq -c '[.plans[] | {gpus, days, cost, meets_deadline}]' "$T/body")"
req POST /v1/sizing/training -d "{$job70,\"deadline_days\":30,\"objective\":\"time\"}"
check "an explicit objective is kept with a deadline" 201 \
	'.assumptions.objective == "time" and (.assumptions.deadline.ranking | contains("objective"))'
# A deadline no plan meets: the plan that misses it least, not the cheapest.
req POST /v1/sizing/training -d '{"model":"llama-2-70b","seq_len":4096,"train_tokens":2e12,"global_batch_size":1024,"gpu":"h100-sxm5-80gb","max_gpus":64,"deadline_days":10,"top":16}'
check "a missed deadline: the fastest plan first, warned" 201 \
	'(.plans[0].meets_deadline | not) and .plans[0].days == ([.plans[].days] | min) and (.checks.warnings | map(test("no plan meets")) | any)'

# --- item 5: context overruns are warned about -----------------------------------
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":32768,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64}'
check "seq_len past the model's context: a warning saying what was assumed" 201 \
	'.checks.warnings | map(test("exceeds the model.s context length \\(4096\\)")) | any'
req POST /v1/sizing/inference -d '{"model":"llama-3-70b","prompt_tokens":100000,"output_tokens":200,"gpu":"h100-sxm5-80gb"}'
check "a 100k-token prompt past the context: a warning" 201 \
	'.warnings | map(test("exceed the model.s context")) | any'
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64}'
check "within the context: no such warning" 201 \
	'.checks.warnings | map(test("context")) | any | not'

# --- item 6: silly plans are warned about ------------------------------------------
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":2e12,"gpu":"h100-sxm5-80gb","max_gpus":1000000}'
check "a million GPUs for a 7B: low efficiency warned with the MFU" 201 \
	'.plans[0].mfu < 0.2 and (.checks.warnings | map(test("low efficiency: MFU")) | any)'
check "and diminishing returns with both GPU counts" 201 \
	'.checks.warnings | map(test("diminishing returns: [0-9]+ GPUs run [0-9.]+x as fast as [0-9]+")) | any'
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":2e12,"gpu":"h100-sxm5-80gb","max_gpus":64}'
check "a sensible job: neither warning" 201 \
	'.checks.warnings | map(test("low efficiency|diminishing")) | any | not'
req POST /v1/sizing/training -d '{"model":"llama-3-70b","seq_len":4096,"train_tokens":1e8,"method":"qlora","gpu":"h100-sxm5-80gb","max_gpus":64}'
check "a QLoRA fine-tune gets 16 sequences by default, said in assumptions" 201 \
	'.global_batch_size == 16 and (.assumptions.global_batch | contains("fine-tuning default"))'
req POST /v1/sizing/training -d '{"model":"llama-3-70b","seq_len":4096,"train_tokens":1e8,"method":"qlora","global_batch_size":64,"gpu":"h100-sxm5-80gb","max_gpus":64}'
check "a given batch is kept and no default is claimed" 201 \
	'.global_batch_size == 64 and (.assumptions | has("global_batch") | not)'
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64}'
check "pre-training keeps the ~4M-token default" 201 \
	'.global_batch_size == 1024 and (.assumptions.global_batch | contains("4M tokens"))'

# --- item 3: recommendations remember the request ----------------------------------
sfx=$RANDOM$RANDOM
req POST /v1/sizing/inference -d '{"model":"Llama-3-70B","weight_precision":"fp8","prompt_tokens":2048,"output_tokens":256,"requests_per_s":20,"tpot_ms":40,"ttft_ms":1500,"gpu":"h100","top":null}'
check "inference: the answer keeps the normalised request (rate, tokens, targets, catalog names, defaults, no nulls)" 201 \
	'.request == {"model":"llama-3-70b","weight_precision":"fp8","prompt_tokens":2048,"output_tokens":256,"requests_per_s":20,"tpot_ms":40,"ttft_ms":1500,"gpu":"h100-sxm5-80gb","serving":"vllm","kv_cache_precision":"fp16","top":5,"calibration":"auto"}'
cp "$T/body" "$T/inf1.json"
req GET "$(header Location)"
check "GET of the recommendation returns the same request" 200 '.request.requests_per_s == 20 and .request.ttft_ms == 1500'
# (calibration datasheet: other suites' probe reports must not move the answer between the two)
req POST /v1/sizing/training -d '{"model":"llama2-70b","seq_len":4096,"train_tokens":2e12,"deadline_days":30,"gpu":"H100","max_gpus":2048,"calibration":"datasheet"}'
check "training: the request keeps train_tokens, deadline_days and the defaults applied" 201 \
	'.request.train_tokens == 2e12 and .request.deadline_days == 30 and .request.objective == "cost" and .request.precision == "bf16" and .request.model == "llama-2-70b"'
jq -c '.plans' "$T/body" >"$T/plans1.json"
jq -c '.request' "$T/body" >"$T/req1.json"
req POST /v1/sizing/training -d @"$T/req1.json"
jq -c '.plans' "$T/body" >"$T/plans2.json"
cmp -s "$T/plans1.json" "$T/plans2.json" && jq -e --slurpfile r "$T/req1.json" '.request == $r[0]' "$T/body" >/dev/null &&
	ok "the stored request replays to the same plans and the same request" ||
	not_ok "the stored request replays to the same plans" "$(head -c 200 "$T/plans2.json")"
# The same job spelled another way is the same request.
req POST /v1/sizing/training -d '{"max_gpus":2048,"gpu":"h100-sxm5-80gb","deadline_days":30,"train_tokens":2000000000000,"seq_len":4096,"model":"llama-2-70b","precision":"bf16","objective":null,"calibration":"datasheet"}'
jq -e --slurpfile r "$T/req1.json" '.request == $r[0]' "$T/body" >/dev/null &&
	ok "the same job in another order and spelling normalises to the same request" ||
	not_ok "the same job normalises to the same request" "$(jq -c .request "$T/body")"
req GET "/v1/recommendations?kind=training&gpu=h100&model=llama2-70b&limit=3"
check "the list filters by kind, GPU and model (names forgive) and shows each request" 200 \
	'(.items | length) == 3 and all(.items[]; .kind == "training" and .gpu == "h100-sxm5-80gb" and .model == "llama-2-70b" and .request.train_tokens == 2e12)'
req POST /v1/sizing/compare -d '{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"max_gpus":16},"gpus":["a100","h100"]}'
check "compare keeps the normalised job and the catalog's GPU names" 201 \
	'.request.gpus == ["a100-sxm4-80gb","h100-sxm5-80gb"] and .request.training.objective == "time" and .request.training.model == "llama-2-7b"'
req GET "/v1/recommendations?kind=compare&gpu=a100&limit=1"
lc=$(jq -r '.items[0].created_at' "$T/body")
lid=$(jq -r '.items[0].id' "$T/body")
[[ $lc =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]] &&
	[ "$(curl -s "$GSZ_URL/v1/recommendations/$lid" | jq -r --arg l "$lc" '(.created_at | fromdateiso8601) - ($l | fromdateiso8601) | fabs <= 1')" = true ] &&
	ok "the list's created_at has the answer's form (UTC, seconds, Z) and time ($lc)" ||
	not_ok "the list's created_at has the answer's form" "$lc"
req GET "/v1/recommendations?kind=compare&gpu=a100&limit=1"
check "a compare is found by one of its GPUs" 200 '(.items | length) == 1 and .items[0].request.gpus[0] == "a100-sxm4-80gb"'

# --- item 4: names forgive ---------------------------------------------------------
for g in h100 H100-SXM5-80GB rtx4090 "RTX%204090" h100-sxm5 H100-SXM5; do
	req GET "/v1/gpus/$g"
	check "GET /v1/gpus/$g answers the catalog entry" 200 '.name | test("^(h100-sxm5-80gb|rtx-4090-24gb)$")'
done
req GET /v1/gpus/a100-sxm4
check "the leading words of one entry find it (a100-sxm4: the 80 GB and the 40 GB share them, so none)" 404 '.errors[0].did_you_mean | length >= 1'
req GET /v1/gpus/h1000
check_problem "an unknown GPU is a 404 naming name" 404 name
check "and says did you mean, H100 parts first" 404 \
	'(.errors[0].did_you_mean | length) == 3 and (.errors[0].did_you_mean | all(startswith("h100"))) and (.errors[0].message | contains("did you mean"))'
for m in llama-3-405b llama2-70b LLAMA-3-8B; do
	req GET "/v1/models/$m"
	check "GET /v1/models/$m answers the preset" 200 '.name | test("^(llama-3.1-405b|llama-2-70b|llama-3-8b)$")'
done
req GET /v1/models/lama-3-8b
check "an unknown preset: did you mean llama-3-8b first" 404 '.errors[0].did_you_mean[0] == "llama-3-8b"'
req POST /v1/sizing/training -d '{"model":"llama2-70b","seq_len":4096,"train_tokens":1e11,"gpu":"H100","max_gpus":64}'
check "sizing with forgiving names answers with the catalog's names" 201 \
	'.model.name == "llama-2-70b" and .gpu == "h100-sxm5-80gb"'
req GET "$(header Location)"
check "the stored recommendation has the catalog's names too" 200 '.model.name == "llama-2-70b" and .gpu == "h100-sxm5-80gb"'
req POST /v1/sizing/training -d '{"model":"llama-2-70b","seq_len":4096,"train_tokens":1e11,"gpu":"h10","max_gpus":64}'
check_problem "sizing with an unknown GPU: 400 naming gpu" 400 gpu
check "with did_you_mean" 400 '.errors[0].did_you_mean | length == 3'
req POST /v1/sizing/compare -d '{"training":{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"max_gpus":16},"gpus":["h100","a100"]}'
check "compare with short names: rows and verdict carry the catalog's names" 201 \
	'([.rows[].gpu] | sort) == ["a100-sxm4-80gb", "h100-sxm5-80gb"] and (.verdict | contains("-80gb"))'
req GET /v1/gpus/
check "a trailing slash answers like /v1/gpus" 200 '.items | length > 10'
req GET /v1/models/
check "and /v1/models/ like /v1/models" 200 '.items | length > 10'

# --- item 11: every catalog entry states the basis of its efficiency --------------
req GET /v1/gpus
check "every catalog entry has an efficiency basis; a fraction exactly when measured or sibling" 200 \
	'[.items[] | (.efficiency_basis | IN("measured", "sibling", "vendor_claim", "datasheet_only")) and ((.gemm_peak_fraction != null) == (.efficiency_basis != "datasheet_only")) and (.efficiency_basis == "datasheet_only" or (.efficiency_source | length) > 0)] | all'
req GET /v1/gpus/mi300x-192gb
check "MI300X: its own measured fraction (0.514) with the source" 200 \
	'.gemm_peak_fraction == 0.514 and .efficiency_basis == "measured" and (.efficiency_source | contains("MAMF"))'
req POST /v1/sizing/training -d '{"model":"llama-2-70b","seq_len":4096,"train_tokens":1e11,"gpu":"mi300x-192gb","max_gpus":64}'
check "sizing on MI300X uses 0.75 x 0.514/0.869 and says what it rests on" 201 \
	'.basis.gemm_tflops.efficiency == 0.444 and .basis.gemm_tflops.efficiency_basis == "measured"'
mi=$(jq '.basis.gemm_tflops.value' "$T/body")
req POST /v1/sizing/training -d '{"model":"llama-2-70b","seq_len":4096,"train_tokens":1e11,"gpu":"h100-sxm5-80gb","max_gpus":64}'
jq -e --argjson mi "$mi" '.basis.gemm_tflops.value > $mi' "$T/body" >/dev/null &&
	ok "MI300X's achieved GEMM rate is below H100's ($mi < $(jq '.basis.gemm_tflops.value' "$T/body"))" ||
	not_ok "MI300X's achieved GEMM rate is below H100's" "mi300x $mi, h100 $(jq -c '.basis.gemm_tflops' "$T/body")"
req POST /v1/sizing/training -d '{"model":"llama-2-7b","seq_len":4096,"train_tokens":1e11,"gpu":"l4-24gb","max_gpus":64}'
check "an unmeasured part says datasheet_only" 201 '.basis.gemm_tflops.efficiency_basis == "datasheet_only"'
adm=$(create_token "first-hour-admin-$RANDOM$RANDOM" admin)
curl -s "$GSZ_URL/v1/gpus/l4-24gb" | jq '.gemm_peak_fraction = 0.7' >"$T/l4.json"
req PUT /v1/gpus/l4-24gb -H "Authorization: Bearer $adm" -d @"$T/l4.json"
check_problem "a fraction without a basis is a 400 naming efficiency_basis" 400 efficiency_basis
jq '.efficiency_basis = "measured" | .gemm_peak_fraction = null' "$T/l4.json" >"$T/l4b.json"
req PUT /v1/gpus/l4-24gb -H "Authorization: Bearer $adm" -d @"$T/l4b.json"
check_problem "a basis without a fraction is a 400 naming gemm_peak_fraction" 400 gemm_peak_fraction
# a GPU added without efficiency_source or notes reads them back as "": GET,
# edit, PUT back must work for it as for the seeded ones (hostile review)
req PUT /v1/gpus/rt-example-48gb -H "Authorization: Bearer $adm" -d '{"display_name":"Example GPU 48GB","vendor":"Example","architecture":"Demo","memory_gib":48,"memory_bandwidth_gbps":864,"intra_node_link":"pcie","intra_node_gbps":32,"bf16_tflops":181,"source":"vendor datasheet, 2025"}'
check "a GPU added without notes or efficiency_source is created" 201 '.efficiency_source == "" and .notes == ""'
curl -s "$GSZ_URL/v1/gpus/rt-example-48gb" | jq '.price_per_gpu_hour = 2.1' >"$T/rt.json"
req PUT /v1/gpus/rt-example-48gb -H "Authorization: Bearer $adm" -d @"$T/rt.json"
check "its GET body, edited, PUTs back (\"\" accepted where a GET returns it)" 200 '.price_per_gpu_hour == 2.1 and .notes == ""'
req PUT /v1/gpus/rt-example-48gb -H "Authorization: Bearer $adm" -d "$(jq -c '.source = ""' "$T/rt.json")"
check_problem "a required source stays non-empty" 400 source
for cc in abc 9 9. .0 "9.0x" "9,0"; do
	req PUT /v1/gpus/rt-example-48gb -H "Authorization: Bearer $adm" -d "$(jq -c --arg cc "$cc" '.compute_capability = $cc' "$T/rt.json")"
	check_problem "compute_capability \"$cc\": 400 naming it (it passed as a non-NVIDIA part)" 400 compute_capability
done
req PUT /v1/gpus/rt-example-48gb -H "Authorization: Bearer $adm" -d "$(jq -c '.compute_capability = "12.0"' "$T/rt.json")"
check "compute_capability \"12.0\": stored" 200 '.compute_capability == "12.0"'
# pcie_width: lanes, a power of two (the rule table's JV_POW2)
for w in 0 3 12 32 6.0 '"8"'; do
	req PUT /v1/gpus/rt-example-48gb -H "Authorization: Bearer $adm" -d "$(jq -c --argjson w "$w" '.pcie_width = $w' "$T/rt.json")"
	check_problem "pcie_width $w: 400 naming it" 400 pcie_width
done
req PUT /v1/gpus/rt-example-48gb -H "Authorization: Bearer $adm" -d "$(jq -c '.pcie_width = 8.0' "$T/rt.json")"
check "pcie_width 8.0: stored as 8" 200 '.pcie_width == 8'

# --- item 7: the token CLI finds the database `make run` left ---------------------
mkdir -p "$T/checkout/var"
printf '%s\n' "$DATABASE_URL" >"$T/checkout/var/database_url"
tname=first-hour-$RANDOM$RANDOM
if (cd "$T/checkout" && env -u DATABASE_URL "$GSZ_BIN" token create --name "$tname" --scopes probe >"$T/tok.out" 2>"$T/tok.err") &&
	grep -q '^gsz_' "$T/tok.out" && grep -q 'using the database of `make run`' "$T/tok.err"; then
	ok "token create without DATABASE_URL uses var/database_url and says so"
else
	not_ok "token create without DATABASE_URL uses var/database_url" "$(cat "$T/tok.err")"
fi
(cd "$T/checkout" && env -u DATABASE_URL "$GSZ_BIN" token list 2>/dev/null) | grep -q "^$tname " &&
	ok "token list finds it the same way" || not_ok "token list finds it the same way"
(cd "$T" && env -u DATABASE_URL "$GSZ_BIN" token list >/dev/null 2>"$T/nodb.err")
grep -q 'no database: set DATABASE_URL' "$T/nodb.err" &&
	ok "without either, the CLI says how to give a database" || not_ok "without either, the CLI says how" "$(cat "$T/nodb.err")"

# --- make run owns its checkout: a second run is refused, and so is one
# beside the daemon a killed run left (review s16b F3, s16c F14). A copy of
# run.sh in a scratch checkout; "gpusizerd" there is sleep under that name,
# so no cluster is started when a guard fails to refuse.
co=$T/co
mkdir -p "$co/deploy/dev" "$co/build" "$co/var"
cp "$TOP/deploy/dev/run.sh" "$TOP/deploy/dev/pg.sh" "$co/deploy/dev/"
cp "$(command -v sleep)" "$co/build/gpusizerd"
bash -c 'sleep 60; :' deploy/dev/run.sh &
live=$!
printf '%s\n' "$live" >"$co/var/run.pid"
env -u DATABASE_URL "$co/deploy/dev/run.sh" >"$T/run2.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "another make run (pid $live)" "$T/run2.out" && [ "$(cat "$co/var/run.pid")" = "$live" ] &&
	ok "a second make run is refused and leaves the first one's run.pid" ||
	not_ok "a second make run is refused (rc $rc)" "$(cat "$T/run2.out")"
kill "$live" 2>/dev/null
(cd "$co" && exec build/gpusizerd 60) &
orphan=$!
env -u DATABASE_URL "$co/deploy/dev/run.sh" >"$T/run3.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "gpusizerd (pid $orphan) left by a killed make run" "$T/run3.out" &&
	[ "$(cat "$co/var/run.pid")" = "$live" ] && [ ! -e "$co/var/database_url" ] &&
	ok "a make run beside a killed run's daemon is refused, naming it" ||
	not_ok "a make run beside a killed run's daemon is refused (rc $rc)" "$(cat "$T/run3.out")"
kill "$orphan" 2>/dev/null
wait "$live" "$orphan" 2>/dev/null
# A TERM or HUP to make run (a closed terminal, a dropped ssh session)
# reaches the daemon once, as TERM, and the script waits for its drain
# (review s23a F1: the script stopped its cluster and left the daemon
# serving 503s), also when the TERM goes to make run's whole process group
# (timeout, kill -- -PGID; review s23d F2: the daemon got it twice, and the
# second skipped the drain). The "daemon" here writes down each TERM it
# gets and lingers 0.5 s after the first; DATABASE_URL set, so no cluster.
cat >"$co/build/gpusizerd" <<'FAKE'
#!/usr/bin/env bash
got=""
trap 'echo TERM >>var/fake.sig; got=1' TERM
while [ -z "$got" ]; do sleep 0.1; done
sleep 0.5
exit 0
FAKE
chmod +x "$co/build/gpusizerd"
for how in TERM HUP TERM-group; do
	rm -f "$co/var/fake.sig"
	DATABASE_URL=postgres://unused setsid "$co/deploy/dev/run.sh" >"$T/run4.out" 2>&1 &
	rs=$!
	for _ in $(seq 1 50); do
		pgrep -f "$co/build/gpusizerd serve" >/dev/null && break
		sleep 0.1
	done
	sleep 0.3 # its trap set
	case $how in
	TERM-group) kill -TERM -- -"$rs" ;;
	*) kill -"$how" "$rs" ;;
	esac
	for _ in $(seq 1 50); do
		kill -0 "$rs" 2>/dev/null || break
		sleep 0.1
	done
	if ! kill -0 "$rs" 2>/dev/null && [ "$(cat "$co/var/fake.sig" 2>/dev/null)" = TERM ] &&
		! pgrep -f "$co/build/gpusizerd serve" >/dev/null; then
		ok "$how to make run reaches the daemon once as TERM, and the script waits for it"
	else
		not_ok "$how to make run reaches the daemon once as TERM" "$(cat "$T/run4.out"; cat "$co/var/fake.sig" 2>/dev/null)"
		pkill -f "$co/build/gpusizerd serve"
	fi
	wait "$rs" 2>/dev/null
done

stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"
