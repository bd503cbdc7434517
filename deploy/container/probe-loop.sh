#!/bin/sh
# probe-loop.sh - entry point of the gpusizer-probe image.
#
#   gpusizer-probe-loop loop          measure and report every
#                                     $GPUSIZER_PROBE_INTERVAL seconds
#   gpusizer-probe-loop healthcheck   exit 0 while the loop is alive
#   gpusizer-probe-loop ARGS...       gpusizer-probe ARGS... (one run)
#
# Environment: GPUSIZER_URL (required for loop), GPUSIZER_TOKEN_FILE,
# GPUSIZER_STATE_DIR (spool/ for undelivered reports, last-report.json,
# the health stamp), GPUSIZER_PROBE_INTERVAL (seconds, default 86400),
# GPUSIZER_PROBE_ARGS (default --quick), GPUSIZER_PROBE_WHEN_BUSY (1: run
# even when other processes use the GPUs; default 0: skip that round).
set -u
probe=${GPUSIZER_PROBE:-/usr/local/bin/gpusizer-probe}
interval=${GPUSIZER_PROBE_INTERVAL:-86400}
state=${GPUSIZER_STATE_DIR:-/var/lib/gpusizer-probe}
stamp=$state/.last-attempt

case ${1:-} in
healthcheck)
	[ -f "$stamp" ] || exit 1
	age=$(($(date +%s) - $(stat -c %Y "$stamp")))
	[ "$age" -lt $((2 * interval + 3600)) ]
	exit
	;;
loop) ;;
*) exec "$probe" "$@" ;;
esac

: "${GPUSIZER_URL:?set GPUSIZER_URL to the service, e.g. http://gpusizer.gpusizer.svc}"
token=${GPUSIZER_TOKEN_FILE:-/run/secrets/probe.token}
[ -r "$token" ] || { echo "probe-loop: cannot read the token file $token" >&2; exit 64; }
mkdir -p "$state" || exit 73
child=""
# SIGTERM (pod deletion, docker stop) ends the wait or the running probe.
trap '[ -n "$child" ] && kill -TERM "$child" 2>/dev/null; exit 0' TERM INT
while :; do
	touch "$stamp"
	busy=""
	if [ "${GPUSIZER_PROBE_WHEN_BUSY:-0}" != 1 ] && command -v nvidia-smi >/dev/null 2>&1; then
		busy=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | head -n 1)
	fi
	if [ -n "$busy" ]; then
		echo "probe-loop: GPUs in use by other processes; skipping this round" >&2
	else
		# shellcheck disable=SC2086 # GPUSIZER_PROBE_ARGS is a word list
		"$probe" ${GPUSIZER_PROBE_ARGS:---quick} \
			--server "$GPUSIZER_URL" --token-file "$token" \
			--spool-dir "$state/spool" --output "$state/last-report.json" &
		child=$!
		rc=0
		wait "$child" || rc=$?
		child=""
		echo "probe-loop: gpusizer-probe exited $rc; next run in ${interval}s" >&2
	fi
	# sleep in the background so SIGTERM ends the wait at once
	sleep "$interval" &
	child=$!
	wait "$child" || true
	child=""
done
