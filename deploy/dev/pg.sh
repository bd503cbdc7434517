#!/usr/bin/env bash
# pg.sh - a private PostgreSQL cluster for development and tests.
#
#   pg.sh start DIR [PORT]   initdb DIR/data once, start it on a unix socket in
#                            DIR (no TCP), create database "gpusizer", and print
#                            the libpq conninfo on stdout
#   pg.sh stop DIR           fast shutdown
#   pg.sh status DIR         exit 0 when the cluster in DIR runs, non-zero when not
#   pg.sh restart DIR        stop then start (used by the database-restart test)
#   pg.sh createdb DIR PORT NAME   an extra database (tests)
#   pg.sh psql DIR PORT DB SQL     one statement through psql (tests)
#
# PostgreSQL refuses to run as root, so as root the cluster runs as the
# "postgres" system user (created by Debian's postgresql package) and DIR is
# handed to it; otherwise it runs as the calling user.
set -euo pipefail

cmd=${1:?usage: pg.sh start|stop|status|restart DIR [PORT]}
dir=${2:?usage: pg.sh start|stop|status|restart DIR [PORT]}
port=${3:-54329}

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bindir/initdb" ] || { echo "pg.sh: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

if [ "$(id -u)" = 0 ]; then
	pguser=postgres
	as_pg() { runuser -u postgres -- "$@"; }
else
	pguser=$(id -un)
	as_pg() { "$@"; }
fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if [ "$(id -u)" = 0 ]; then
	chown "$pguser" "$dir"
	chmod 700 "$dir"
	if ! as_pg test -x "$dir"; then
		echo "pg.sh: user $pguser cannot reach $dir (a parent directory is not searchable)" >&2
		exit 1
	fi
fi

case $cmd in
start)
	if [ ! -f "$dir/data/PG_VERSION" ]; then
		as_pg "$bindir/initdb" -D "$dir/data" -A trust -U "$pguser" \
			--no-sync -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
			{ cat "$dir/initdb.log" >&2; exit 1; }
	fi
	if ! as_pg "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
		as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 \
			-o "-k $dir -p $port -c listen_addresses='' -c fsync=on" \
			start >/dev/null || { tail -n 20 "$dir/postgres.log" >&2; exit 1; }
	fi
	if ! as_pg "$bindir/psql" -h "$dir" -p "$port" -U "$pguser" -d postgres -Atqc \
		"SELECT 1 FROM pg_database WHERE datname = 'gpusizer'" | grep -q 1; then
		as_pg "$bindir/createdb" -h "$dir" -p "$port" -U "$pguser" gpusizer
	fi
	echo "host=$dir port=$port dbname=gpusizer user=$pguser"
	;;
stop)
	if [ -f "$dir/data/PG_VERSION" ]; then
		as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	fi
	;;
status)
	as_pg "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
	;;
restart)
	"$0" stop "$dir"
	"$0" start "$dir" "$port"
	;;
createdb)
	# pg.sh createdb DIR PORT NAME: an extra empty database (tests)
	name=${4:?usage: pg.sh createdb DIR PORT NAME}
	as_pg "$bindir/createdb" -h "$dir" -p "$port" -U "$pguser" "$name"
	echo "host=$dir port=$port dbname=$name user=$pguser"
	;;
psql)
	# pg.sh psql DIR PORT DBNAME SQL: run one statement (tests)
	as_pg "$bindir/psql" -h "$dir" -p "$port" -U "$pguser" -d "${4:?}" -v ON_ERROR_STOP=1 -Atqc "${5:?}"
	;;
*)
	echo "pg.sh: unknown command $cmd" >&2
	exit 2
	;;
esac
