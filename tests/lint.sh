#!/usr/bin/env bash
# lint.sh - `make lint`: static checks of the C code and the API contract.
#
#   1. clang-format   every tracked *.c *.h *.cu *.cuh matches .clang-format (clang-format 14)
#   2. cppcheck       server/ handlers/ storage/ engine/ lib/ (warning, performance, portability)
#   3. yamllint       openapi.yaml, the linter configs and deploy/ (rules in .yamllint)
#   4. redocly        `redocly lint openapi.yaml` (rules in .redocly.yaml)
#   5. spectral       `spectral lint openapi.yaml` (rules in .spectral.yaml)
#   6. static         SQL parameterised in storage/*.c (tests/sqlcheck.awk), libpq only in storage/,
#                     the include graph (server -> handlers -> engine/storage, lib/ below all),
#                     comments cite only files in the repository
#   7. contract       tests/contract.sh: the real daemon behind Prism, every answer checked against
#                     openapi.yaml (needs PostgreSQL and the Node tools)
#
# Each check prints PASS, FAIL or SKIP; the last lines are a summary. Exit status 1 when any check
# fails. A check whose tool cannot be had is a SKIP, not a failure (LINT_STRICT=1 makes it one):
# missing Debian tools are installed with apt-get when run as root, otherwise the command is
# printed; the Node tools (versions pinned in tools/package.json + tools/package-lock.json) are
# installed with `npm ci` on first use, and are skipped when npm or its registry is unreachable.
#
# Environment: LINT_STRICT=1 (SKIP fails too), LINT_VERBOSE=1 (show every clang-format diagnostic),
# LINT_NODE_DIR=DIR (where the Node tools are installed; see node_dir below).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2

strict=${LINT_STRICT:-0}
verbose=${LINT_VERBOSE:-0}
# shellcheck source=tests/lint_common.sh
. tests/lint_common.sh

# Tracked files matching the patterns that exist in the working tree (or every such file when
# this is not a git checkout).
source_files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -- "$@"
	else
		local args=() p
		for p in "$@"; do args+=(-o -name "$p"); done
		find . -path ./build -prune -o -path ./tools/node_modules -prune \
			-o -type f \( "${args[@]:1}" \) -print | sed 's|^\./||'
	fi | while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done
}

# ---------------------------------------------------------------------------------------------
section "clang-format"
cf=""
for c in clang-format-14 clang-format; do
	command -v "$c" >/dev/null 2>&1 && { cf=$c; break; }
done
if [ -z "$cf" ] && need clang-format clang-format; then cf=clang-format; fi
if [ -z "$cf" ]; then
	skip clang-format "not installed: apt-get install -y clang-format"
else
	cf_version=$("$cf" --version | grep -o 'version [0-9][0-9.]*' | head -n 1)
	case $cf_version in
	"version 14."*) ;;
	*) say "note: .clang-format is pinned to clang-format 14; this is $cf_version" ;;
	esac
	mapfile -t cfiles < <(source_files '*.c' '*.h' '*.cu' '*.cuh')
	bad=()
	for f in "${cfiles[@]}"; do
		if ! out=$("$cf" --dry-run -Werror "$f" 2>&1); then
			n=$(printf '%s\n' "$out" | grep -c 'error:')
			bad+=("$f")
			say "  $f: $n place(s) not clang-formatted"
			[ "$verbose" = 1 ] && printf '%s\n' "$out" | sed 's/^/    /'
		fi
	done
	if [ ${#bad[@]} -eq 0 ]; then
		pass clang-format "${#cfiles[@]} files"
	else
		say "  see one file's diff: $cf FILE | diff -u FILE -; fix all: make format"
		fail clang-format "${#bad[@]} of ${#cfiles[@]} files"
	fi
fi

# ---------------------------------------------------------------------------------------------
section "cppcheck"
# Suppressed checks (genuine false positives only; say why):
#   varFuncNullUB  log_event(level, msg, key, value, ..., NULL): a NULL sentinel ends the variadic
#                  key/value list, as with execl(3). In C with glibc, NULL is ((void *)0), and
#                  va_arg(ap, const char *) may read a void * (C11 7.16.1.1p2), so there is no UB
#                  on the platforms we build for. (The warning is about C++/platforms where NULL is
#                  a plain 0.)
# A one-off false positive is suppressed in the code with `// cppcheck-suppress <id>` on the line
# before (--inline-suppr), with a comment saying why.
cppcheck_dirs=()
for d in server handlers storage engine lib; do [ -d "$d" ] && cppcheck_dirs+=("$d"); done
if ! need cppcheck cppcheck; then
	skip cppcheck "not installed: apt-get install -y cppcheck"
elif [ ${#cppcheck_dirs[@]} -eq 0 ]; then
	skip cppcheck "no source directories"
else
	say "$(cppcheck --version), over ${cppcheck_dirs[*]}"
	if cppcheck --enable=warning,performance,portability --error-exitcode=1 --inline-suppr -q \
		--suppress=varFuncNullUB -I. "${cppcheck_dirs[@]}"; then
		pass cppcheck
	else
		fail cppcheck "findings above"
	fi
fi

# ---------------------------------------------------------------------------------------------
section "yamllint"
yaml_targets=()
for f in openapi.yaml .yamllint .redocly.yaml .spectral.yaml; do [ -f "$f" ] && yaml_targets+=("$f"); done
[ -d deploy ] && yaml_targets+=(deploy) # yamllint finds *.yaml/*.yml inside, minus .yamllint's ignore
if ! need yamllint yamllint; then
	skip yamllint "not installed: apt-get install -y yamllint"
elif [ ${#yaml_targets[@]} -eq 0 ]; then
	skip yamllint "no YAML files"
elif yamllint -c .yamllint -f parsable "${yaml_targets[@]}"; then
	pass yamllint "${yaml_targets[*]}"
else
	fail yamllint "findings above"
fi

# ---------------------------------------------------------------------------------------------
section "OpenAPI (redocly, spectral)"
# Where `npm ci` installs the pinned tools: tools/node_modules once .gitignore ignores it,
# otherwise build/tools/node_modules (build/ is ignored), so that the 80 MB of Node modules can
# never be committed by accident.
node_dir=${LINT_NODE_DIR:-}
if [ -z "$node_dir" ]; then
	if git check-ignore -q tools/node_modules 2>/dev/null; then
		node_dir=tools
	else
		node_dir=build/tools
	fi
fi
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1 \
	SCARF_ANALYTICS=false npm_config_update_notifier=false npm_config_fund=false \
	npm_config_audit=false
node_ok=1
if [ ! -f tools/package.json ] || [ ! -f tools/package-lock.json ]; then
	fail node-tools "tools/package.json or tools/package-lock.json is missing"
	node_ok=0
elif ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
	skip redocly "npm/node not installed (apt-get install -y npm)"
	skip spectral "npm/node not installed"
	node_ok=0
else
	mkdir -p "$node_dir"
	if [ "$node_dir" != tools ]; then
		cp tools/package.json tools/package-lock.json "$node_dir/"
	fi
	stamp=$node_dir/node_modules/.gpusizer-lock
	if [ ! -x "$node_dir/node_modules/.bin/redocly" ] || ! cmp -s tools/package-lock.json "$stamp"; then
		if ! timeout 20 npm ping >/dev/null 2>&1; then
			skip redocly "the npm registry is unreachable; cannot install tools/package.json"
			skip spectral "the npm registry is unreachable"
			node_ok=0
		else
			say "npm ci --prefix $node_dir ($(node --version), npm $(npm --version 2>/dev/null))"
			if npm_ci "$node_dir" 600; then
				cp tools/package-lock.json "$stamp"
			else
				tail -n 20 "$node_dir/npm-ci.log" | sed 's/^/  /'
				fail node-tools "npm ci failed (log: $node_dir/npm-ci.log)"
				node_ok=0
			fi
		fi
	fi
fi
if [ "$node_ok" = 1 ]; then
	bin=$node_dir/node_modules/.bin
	# Redocly prints a boxed Node.js deprecation notice on Node 20; drop the box, keep the rest.
	out=$("$bin/redocly" lint --config .redocly.yaml --format=stylish openapi.yaml 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -v '[║╔╚]' | sed '/^[[:space:]]*$/d'
	if [ $rc -eq 0 ]; then
		pass redocly "$("$bin/redocly" --version 2>/dev/null | tail -n 1)"
	else
		fail redocly "findings above"
	fi
	if [ -x "$bin/spectral" ]; then
		if "$bin/spectral" lint --ruleset .spectral.yaml --fail-severity error openapi.yaml; then
			pass spectral "$("$bin/spectral" --version 2>/dev/null)"
		else
			fail spectral "findings above"
		fi
	else
		skip spectral "not in tools/package.json"
	fi
fi

# ---------------------------------------------------------------------------------------------
section "static (SQL parameterised, libpq only in storage/, the include graph, citations in the repository)"
# tests/sqlcheck.awk states the SQL rules. It must catch what it is for: a file planted with six
# violations (and one good call) is checked first, so a checker that has stopped seeing anything
# fails here rather than passing every file.
static_tmp=$(mktemp -d "${TMPDIR:-/tmp}/gsz-lint.XXXXXX")
cat >"$static_tmp/planted.c" <<'C'
#define COLS "a, b"
static enum store_status f(struct db_pool *pool, const char *name)
{
	char sql[256];
	const char *params[1] = {name};
	snprintf(sql, sizeof(sql), "SELECT * FROM gpus WHERE name = '%s'", name);
	db_exec(pool, sql, 0, NULL, 1, &r, e);
	db_exec(pool, "SELECT " COLS " FROM t WHERE a = $1 AND b = $2", 1, params, 1, &r, e);
	strcat(sql, " LIMIT 1");
	PQexec(c, sql);
	db_exec(pool, "SELECT $1", n, params, 1, &r, e);
	db_exec(pool, "SELECT " COLS " FROM t WHERE a = $1", 1, params, 1, &r, e);
	return 0;
}
C
planted=$(awk -f tests/sqlcheck.awk "$static_tmp/planted.c" | wc -l)
rm -rf "$static_tmp"
viol=""
for f in storage/*.c; do
	viol="$viol$(awk -f tests/sqlcheck.awk "$f")"
done
calls=$(cat storage/*.c | grep -cE '(db_exec|PQexecParams|PQexec)[[:space:]]*\(')
if [ "$planted" != 6 ]; then
	fail sql-parameterised "tests/sqlcheck.awk finds $planted of the 6 planted violations"
elif [ -n "$viol" ]; then
	printf '%s\n' "$viol" | sed 's/^/  /'
	fail sql-parameterised "findings above"
else
	pass sql-parameterised "$calls call sites in storage/*.c"
fi
# libpq's header or calls anywhere in the daemon outside storage/ (headers included: a handler
# that includes a header that includes libpq-fe.h is caught at that header).
outside=$(grep -lE 'libpq-fe\.h|PQexec|PQprepare|PQsendQuery|PGconn|PGresult' \
	server/*.[ch] handlers/*.[ch] engine/*.[ch] 2>/dev/null)
if [ -z "$outside" ]; then
	pass libpq-only-in-storage
else
	printf '  %s\n' $outside
	fail libpq-only-in-storage "libpq outside storage/ (above)"
fi
# The include graph: server -> handlers -> engine / storage, with lib/ below all. Each layer's
# project includes ("dir/file.h") may name only the layers below it; engine/ includes only itself
# (its own headers by bare name); storage/ may name the engine's types (its sibling); lib/
# includes only lib/ and system headers, none of the libraries the daemon links (jansson,
# libmicrohttpd, libpq, libcurl). handlers/ may read the probe's shared vocabulary,
# probe/contract.h, and nothing else of the probe.
# include_violations DIR: "file:line: include" for each include DIR's files may not have.
include_violations() {
	local dir=$1 allowed exact='^$'
	case $dir in
	lib) allowed='lib' ;;
	engine) allowed='engine' ;;
	storage) allowed='storage|lib|engine' ;;
	handlers) allowed='handlers|engine|storage|lib' exact='probe/contract\.h' ;;
	server) allowed='server|handlers|engine|storage|lib' ;;
	*) return 0 ;;
	esac
	find "$dir" -name '*.[ch]' -print | sort | while IFS= read -r f; do
		grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
			grep -vE "#[[:space:]]*include[[:space:]]*\"(($allowed)/[^\"]*|$exact|[^/\"]+)\"" |
			sed "s|^|$f:|"
		if [ "$dir" = engine ]; then
			grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' "$f" |
				grep -vE '"engine/' | sed "s|^|$f:|"
		fi
		if [ "$dir" = lib ]; then
			grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*<(jansson|microhttpd|libpq-fe|curl/)' "$f" |
				sed "s|^|$f:|"
		fi
	done
}
# Planted first, as for the SQL check: a lib/ file that includes a handler and jansson, and a
# storage/ file that includes a handler, must give three findings (their good includes none).
inc_tmp=$(mktemp -d "${TMPDIR:-/tmp}/gsz-inc.XXXXXX")
mkdir -p "$inc_tmp/lib" "$inc_tmp/storage"
printf '#include <stdio.h>\n#include "lib/sbuf.h"\n#include "handlers/jsonv.h"\n#include <jansson.h>\n' >"$inc_tmp/lib/bad.c"
printf '#include "storage/db.h"\n#include "lib/sbuf.h"\n#include "handlers/api.h"\n' >"$inc_tmp/storage/bad.c"
planted_inc=$( (cd "$inc_tmp" && include_violations lib && include_violations storage) | wc -l)
rm -rf "$inc_tmp"
inc_viol=$(for d in lib engine storage handlers server; do include_violations "$d"; done)
if [ "$planted_inc" != 3 ]; then
	fail include-graph "the check finds $planted_inc of the 3 planted violations"
elif [ -n "$inc_viol" ]; then
	printf '  %s\n' "$inc_viol"
	fail include-graph "includes against server -> handlers -> engine/storage -> lib (above)"
else
	pass include-graph "server -> handlers -> engine/storage, lib/ below all"
fi
# Comments cite only files in the repository: SIZING.md, SERVICE.md and DESIGN.md are the
# maintainers' notes outside it (docs/MODEL.md and docs/RELIABILITY.md restate what the code
# rests on).
# tests/api/t_basic.sh names them as text the catalog must not cite; this file names them here.
cited=$(source_files '*.c' '*.h' '*.cu' '*.cuh' '*.sh' '*.mk' '*.awk' Makefile |
	grep -vE '^tests/(api/t_basic|lint)\.sh$' | xargs grep -lE '(SIZING|SERVICE|DESIGN)\.md' 2>/dev/null)
if [ -z "$cited" ]; then
	pass citations "no code comment cites SIZING.md, SERVICE.md or DESIGN.md"
else
	printf '  %s\n' $cited
	fail citations "code citing SIZING.md, SERVICE.md or DESIGN.md (above): cite the public source or docs/"
fi

# ---------------------------------------------------------------------------------------------
section "contract (tests/contract.sh: gpusizerd behind a validating Prism proxy)"
out=$(LINT_NODE_DIR=$node_dir tests/contract.sh 2>&1)
rc=$?
if [ "$verbose" = 1 ]; then
	printf '%s\n' "$out"
else
	printf '%s\n' "$out" | grep -v '^ok ' # failures, their violations and the summary
fi
if skip_line=$(printf '%s\n' "$out" | grep -m 1 '^1\.\.0 # SKIP'); then
	skip contract "${skip_line#1..0 # SKIP contract: }"
elif [ $rc -eq 0 ]; then
	pass contract "$(printf '%s\n' "$out" | grep -m 1 '^# contract:' | sed 's/^# contract: //')"
else
	fail contract "$(printf '%s\n' "$out" | grep -m 1 '^# contract:' | sed 's/^# contract: //')"
fi

# ---------------------------------------------------------------------------------------------
lint_summary lint
