#!/usr/bin/env bash
# run.sh - `make run`: gpusizerd in the foreground on http://127.0.0.1:8080.
#
# Without DATABASE_URL, a private PostgreSQL cluster lives under ./var/pg
# (created once, reused by later runs). Ctrl-C stops the daemon (it drains
# in-flight requests), then the cluster if this run started it. A second
# `make run` in the same checkout while one runs is refused before it
# touches the cluster or var/database_url (var/run.pid names the first).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
bin=${BUILD:-build}/gpusizerd
pgdir=""
own_pid="" # this run wrote var/run.pid (and var/database_url)
own_pg=""  # this run started the private cluster

if [ -z "${DATABASE_URL:-}" ]; then
	pgdir=$top/var/pg
	# PostgreSQL runs as "postgres" when we are root; it must reach ./var.
	if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$top" 2>/dev/null; then
		pgdir=/var/tmp/gpusizer-$(printf '%s' "$top" | cksum | cut -d' ' -f1)/pg
		echo "run: postgres cannot reach $top; using $pgdir for the private cluster" >&2
	fi
	# One `make run` per checkout owns the private cluster: var/run.pid,
	# made with noclobber, names it while it lives.
	mkdir -p "$top/var"
	owner=$top/var/run.pid
	if ! (set -C && printf '%s\n' "$$" >"$owner") 2>/dev/null; then
		pid=$(cat "$owner" 2>/dev/null || true)
		if [ -n "$pid" ] && ps -o args= -p "$pid" 2>/dev/null | grep -q 'deploy/dev/run\.sh'; then
			echo "run: another make run (pid $pid) already serves this checkout with its private PostgreSQL ($pgdir)." >&2
			echo "run: stop it first (Ctrl-C in its terminal), or run this one from another checkout or with DATABASE_URL set." >&2
			exit 1
		fi
		# Left by a run that was killed. Its daemon may outlive it (kill -9
		# of run.sh does not reach the child): one still serving from this
		# checkout holds the cluster and the port (review s16c F14).
		for p in $(ps -eo pid=,comm= | awk '$2 == "gpusizerd" {print $1}'); do
			if [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$(pwd -P)" ]; then
				echo "run: a gpusizerd (pid $p) left by a killed make run still serves this checkout ($pgdir)." >&2
				echo "run: stop it first (kill $p), then make run again." >&2
				exit 1
			fi
		done
		printf '%s\n' "$$" >"$owner"
	fi
	own_pid=1
	if deploy/dev/pg.sh status "$pgdir"; then
		echo "run: reusing the PostgreSQL already running at $pgdir; it stays up on exit (deploy/dev/pg.sh stop $pgdir stops it)" >&2
	else
		own_pg=1
	fi
	DATABASE_URL=$(deploy/dev/pg.sh start "$pgdir" "${GPUSIZER_PG_PORT:-54329}")
	export DATABASE_URL
	# The CLI run from this checkout (build/gpusizerd token ...) finds the
	# private database here while this runs; removed on exit.
	printf '%s\n' "$DATABASE_URL" >"$top/var/database_url"
	echo "run: private PostgreSQL at $pgdir" >&2
	# The private development database is where make demo's synthetic
	# nodes go: they count in its fleet figures (a real DATABASE_URL keeps
	# the default, which leaves synthetic reports out).
	set -- --fleet-synthetic "$@"
	echo "run: synthetic reports (make demo) count in this database's fleet figures" >&2
	echo "run: build/gpusizerd token ... finds it (var/database_url); elsewhere: export DATABASE_URL='$DATABASE_URL'" >&2
fi

# Only what this run made: a refused second run returns before own_pid is
# set, so it leaves the first run's cluster, database_url and run.pid alone.
# shellcheck disable=SC2317 # called by the EXIT trap
stop_pg() {
	[ -n "$own_pid" ] || return 0
	rm -f "$top/var/database_url" "$top/var/run.pid"
	[ -z "$own_pg" ] || deploy/dev/pg.sh stop "$pgdir"
	true
}
trap stop_pg EXIT

export GPUSIZER_MIGRATIONS_DIR=${GPUSIZER_MIGRATIONS_DIR:-$top/migrations}
export GPUSIZER_OPENAPI_FILE=${GPUSIZER_OPENAPI_FILE:-$top/openapi.yaml}
# The daemon runs as a child this script waits for, in a session of its
# own, and gets each signal the script gets, once: INT as INT (Ctrl-C
# drains, a second exits at once), QUIT as QUIT (Ctrl-\), TERM and HUP as
# TERM (kill; a closed terminal where an interactive shell leads the
# session: with make itself leading it, as `ssh -t host make run` does,
# the hangup reaches make alone, which passes nothing on, as before review
# s23a; review s23e F7); the EXIT trap stops PostgreSQL only after
# the daemon has exited. Until review s23a F1 a TERM or HUP to the script
# stopped the cluster and left the daemon serving 503s; in the script's
# process group, a TERM to the whole group (timeout, kill -- -PGID) reached
# the daemon twice, and the second skipped the drain (review s23d F2).
# setsid execs in place (the subshell leads no process group), so $! is
# the daemon; the subshell resets INT and QUIT, which a script's
# background jobs start with ignored.
(
	trap - INT QUIT
	exec setsid "$bin" serve --listen "${GPUSIZER_LISTEN:-127.0.0.1:8080}" "$@"
) &
daemon=$!
# shellcheck disable=SC2317 # called by the traps
pass() { kill -"$1" "$daemon" 2>/dev/null || true; }
trap 'pass INT' INT
trap 'pass QUIT' QUIT
trap 'pass TERM' TERM HUP
rc=0
while :; do
	wait "$daemon" && rc=0 || rc=$?
	kill -0 "$daemon" 2>/dev/null || break # a trap ended the wait
done
exit "$rc"
