#!/usr/bin/env bash
# run.sh - `make run`: gpusizerd in the foreground on http://127.0.0.1:8080.
#
# Without DATABASE_URL, a private PostgreSQL cluster lives under ./var/pg
# (created once, reused by later runs). Ctrl-C stops the daemon (it drains
# in-flight requests), then the cluster.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
bin=${BUILD:-build}/gpusizerd
pgdir=""

if [ -z "${DATABASE_URL:-}" ]; then
	pgdir=$top/var/pg
	# PostgreSQL runs as "postgres" when we are root; it must reach ./var.
	if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$top" 2>/dev/null; then
		pgdir=/var/tmp/gpusizer-$(printf '%s' "$top" | cksum | cut -d' ' -f1)/pg
		echo "run: postgres cannot reach $top; using $pgdir for the private cluster" >&2
	fi
	DATABASE_URL=$(deploy/dev/pg.sh start "$pgdir" "${GPUSIZER_PG_PORT:-54329}")
	export DATABASE_URL
	# The CLI run from this checkout (build/gpusizerd token ...) finds the
	# private database here while this runs; removed on exit.
	mkdir -p "$top/var"
	printf '%s\n' "$DATABASE_URL" >"$top/var/database_url"
	echo "run: private PostgreSQL at $pgdir" >&2
	# The private development database is where make demo's synthetic
	# nodes go: they count in its fleet figures (a real DATABASE_URL keeps
	# the default, which leaves synthetic reports out).
	set -- --fleet-synthetic "$@"
	echo "run: synthetic reports (make demo) count in this database's fleet figures" >&2
	echo "run: build/gpusizerd token ... finds it (var/database_url); elsewhere: export DATABASE_URL='$DATABASE_URL'" >&2
fi

stop_pg() {
	[ -n "$pgdir" ] || return 0
	rm -f "$top/var/database_url"
	deploy/dev/pg.sh stop "$pgdir"
	true
}
trap stop_pg EXIT
trap ':' INT # a handler (not SIG_IGN, which the daemon would inherit): the daemon gets Ctrl-C too and drains itself

export GPUSIZER_MIGRATIONS_DIR=${GPUSIZER_MIGRATIONS_DIR:-$top/migrations}
export GPUSIZER_OPENAPI_FILE=${GPUSIZER_OPENAPI_FILE:-$top/openapi.yaml}
"$bin" serve --listen "${GPUSIZER_LISTEN:-127.0.0.1:8080}" "$@" || rc=$?
exit "${rc:-0}"
