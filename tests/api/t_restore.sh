#!/usr/bin/env bash
# The database goes back to an earlier point under a running daemon (a
# failover to a replica that lacked the last commits, a restore): the
# daemon's copies (fleet view, calibration, capacity weeks) then hold runs
# the database no longer has, and a cursor past the new history would
# never fetch some new ones. A snapshot xmin that went back makes each copy
# load whole (review s19a F5: a running daemon showed 42 GPUs where the
# database had 6, until restarted).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fleet_lib.sh"
fleet_database gsz_restore
start_daemon || { not_ok "daemon starts"; exit 1; }
tok=$(create_token "restore-$RANDOM" probe)
P=(-H "Authorization: Bearer $tok" -H 'Content-Type: application/json')
now=$(at '-1 minutes')
gpus() { # the fleet view's H100 GPUs and nodes
	req GET /v1/fleet
	jq -c '[.items[] | select(.gpu_type == "h100-sxm5-80gb") | .gpus, .nodes]' "$T/body"
}
data=$GSZ_PGDIR/data
mk rs-a "$now" '.synthetic = false' >"$T/a.json"
post "node a's run" "$T/a.json"
[ "$(gpus)" = "[8,1]" ] && ok "one node: 8 GPUs" || not_ok "one node: 8 GPUs" "$(gpus)"
# the point the database will go back to
"$TOP/deploy/dev/pg.sh" stop "$GSZ_PGDIR"
rm -rf "$T/backup" && cp -a "$data" "$T/backup"
"$TOP/deploy/dev/pg.sh" start "$GSZ_PGDIR" "$GSZ_PGPORT" >/dev/null
for h in rs-b rs-c rs-d; do
	mk "$h" "$now" '.synthetic = false' >"$T/$h.json"
	post "node $h's run" "$T/$h.json"
done
[ "$(gpus)" = "[32,4]" ] && ok "four nodes: 32 GPUs" || not_ok "four nodes: 32 GPUs" "$(gpus)"
# back to the earlier point: b, c and d are gone from the database
"$TOP/deploy/dev/pg.sh" stop "$GSZ_PGDIR"
rm -rf "$data" && cp -a "$T/backup" "$data"
"$TOP/deploy/dev/pg.sh" start "$GSZ_PGDIR" "$GSZ_PGPORT" >/dev/null
mk rs-e "$now" '.synthetic = false' >"$T/e.json"
post "node e's run after the restore" "$T/e.json"
got=$(gpus)
[ "$got" = "[16,2]" ] && ok "after the restore the running daemon shows what the database has: a and e, 16 GPUs" ||
	not_ok "after the restore the running daemon shows what the database has: a and e, 16 GPUs" "$got"
rm -rf "$T/backup"
stop_daemon && ok "clean exit" || not_ok "clean exit"
sanitizer_clean "no sanitizer reports"
