#!/usr/bin/env bash
# deploy/lint.sh - static checks of everything under deploy/ (called by
# `make lint`; also runs alone: deploy/lint.sh).
#
#   1. yamllint         every YAML file (rules in .yamllint)
#   2. shellcheck       the shell scripts (container entry point, Slurm)
#   3. systemd          `systemd-analyze verify` of the units (any message
#                       fails: verify exits 0 on unknown keys), and the
#                       sandbox's `systemd-analyze security` exposure
#   4. containers       hadolint when installed; otherwise (it is neither in
#                       Debian 12 nor a real npm package) a structural check:
#                       multi-stage, pinned bases, non-root USER, HEALTHCHECK,
#                       apt hygiene, COPY sources present and not ignored;
#                       then the build stage's make run on a copy of just
#                       the COPY'd files (the probe's with one CUDA arch;
#                       without nvcc only its #include "x" lines are checked)
#   5. kubernetes       deploy/lint/k8s-validate.mjs: JSON schemas from the
#                       npm package kubernetes-models + unknown-field check +
#                       the policy of docs/OPERATIONS.md (probes, drain
#                       timing, non-root, read-only root, resources, PDB...)
#   6. grafana          deploy/lint/grafana-check.mjs (panels, datasources,
#                       metric names against server/metrics.c, tables
#                       against migrations/), PromQL parsed by promtool
#   7. prometheus       `promtool check rules` of the alerting rules
#   8. slurm            bash -n and the #SBATCH contract (one task per node)
#
# PASS, FAIL or SKIP per check, then a summary; exit 1 when one fails. A
# tool that cannot be had is a SKIP (LINT_STRICT=1 makes it a failure).
# Debian tools are installed with apt-get when run as root; the npm
# packages (pinned in deploy/lint/package-lock.json) go to build/deploy-lint.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
strict=${LINT_STRICT:-0}
# shellcheck source=tests/lint_common.sh
. tests/lint_common.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/gsz-deploy-lint.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---------------------------------------------------------------------------
section "yamllint"
if ! need yamllint yamllint; then
	skip yamllint "not installed: apt-get install -y yamllint"
elif yamllint -c .yamllint -f parsable deploy; then
	pass yamllint "$(find deploy -name '*.yaml' -o -name '*.yml' | grep -c .) files"
else
	fail yamllint "findings above"
fi

# ---------------------------------------------------------------------------
section "shellcheck"
scripts=(deploy/lint.sh deploy/container/probe-loop.sh deploy/slurm/gpusizer-probe.sbatch
	deploy/slurm/submit-partition.sh deploy/tools/db-growth.sh)
if ! need shellcheck shellcheck; then
	skip shellcheck "not installed: apt-get install -y shellcheck"
elif shellcheck -x -s bash deploy/lint.sh deploy/slurm/*.sbatch deploy/slurm/*.sh deploy/tools/*.sh &&
	shellcheck -s sh deploy/container/probe-loop.sh; then
	pass shellcheck "${#scripts[@]} scripts"
else
	fail shellcheck "findings above"
fi

# ---------------------------------------------------------------------------
section "systemd units"
if ! need systemd-analyze systemd; then
	skip systemd "systemd-analyze not installed"
else
	# verify insists that ExecStart= binaries exist: check copies whose
	# /usr/local/bin paths point at a stub instead.
	mkdir -p "$work/units" "$work/bin"
	printf '#!/bin/sh\nexit 0\n' >"$work/bin/stub"
	chmod 755 "$work/bin/stub"
	for f in deploy/systemd/*.service deploy/systemd/*.timer; do
		sed "s|/usr/local/bin/[a-z-]*|$work/bin/stub|g" "$f" >"$work/units/$(basename "$f")"
	done
	out=$(cd "$work/units" && systemd-analyze verify --man=no ./*.service ./*.timer 2>&1)
	rc=$?
	if [ $rc -ne 0 ] || [ -n "$out" ]; then
		printf '%s\n' "$out" | sed "s|$work/units/||g"
		fail systemd-verify "systemd-analyze verify reported the above"
	else
		pass systemd-verify "$(find deploy/systemd -name '*.service' -o -name '*.timer' | grep -c .) units"
	fi
	# Exposure 0 (sandboxed) .. 10 (none). The daemon has no reason to be
	# above 2; the probe needs the GPUs, NVML's /proc and /sys and the JIT.
	sec_ok=1
	for unit in gpusizerd.service:20 gpusizer-probe.service:40; do
		name=${unit%:*}
		max=${unit#*:}
		if ! exp=$(systemd-analyze security --offline=yes --threshold="$max" "deploy/systemd/$name" 2>&1); then
			sec_ok=0
			printf '%s\n' "$exp" | tail -n 1
		fi
		say "  $(printf '%s\n' "$exp" | grep -o 'Overall exposure level.*' | sed 's/ [^ ]*$//')"
	done
	if [ "$sec_ok" = 1 ]; then
		pass systemd-security "daemon <= 2.0, probe <= 4.0"
	else
		fail systemd-security "exposure above the threshold"
	fi
fi

# ---------------------------------------------------------------------------
section "container builds"
dockerfiles=(deploy/container/*.Dockerfile)
if command -v hadolint >/dev/null 2>&1; then
	if hadolint "${dockerfiles[@]}"; then pass hadolint; else fail hadolint "findings above"; fi
else
	say "hadolint: not packaged for Debian 12, and npm's \"hadolint\" only downloads the"
	say "GitHub binary (and needs Node >= 21): structural checks instead"
fi
# dockerfile_check FILE: prints one line per problem.
dockerfile_check() {
	local f=$1 ignore=$1.dockerignore
	local stages final a
	stages=$(grep -c '^FROM ' "$f")
	[ "$stages" -ge 2 ] || echo "$f: not a multi-stage build"
	grep '^FROM ' "$f" | grep -Eq ':latest|^FROM [^:$@ ]+( |$)' && echo "$f: a base image without a pinned tag"
	# Every ${ARG} a FROM uses has a default declared before the first FROM.
	for a in $(grep '^FROM ' "$f" | grep -o '[$][{][A-Z_]*[}]' | tr -d '{}$' | sort -u); do
		sed '/^FROM /,$d' "$f" | grep -q "^ARG $a=" || echo "$f: FROM uses \${$a} without a default"
	done
	# The final stage: everything after the last FROM.
	final=$(awk '/^FROM /{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' "$f")
	printf '%s' "$final" | grep -Eq '^USER +[1-9][0-9]*(:[0-9]+)?$' ||
		echo "$f: the final stage must switch to a numeric non-root USER"
	printf '%s' "$final" | grep -q '^HEALTHCHECK ' || echo "$f: the final stage has no HEALTHCHECK"
	printf '%s' "$final" | grep -Eq -- '-dev( |$)' && echo "$f: -dev packages in the final stage"
	grep -q '^ENTRYPOINT \[' "$f" || echo "$f: ENTRYPOINT must use the exec (JSON) form"
	# apt hygiene, per RUN instruction (continuation lines joined).
	sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$f" | grep '^RUN ' | while IFS= read -r run; do
		case $run in *"apt-get install"*)
			[[ $run == *"--no-install-recommends"* ]] || echo "$f: apt-get install without --no-install-recommends"
			[[ $run == *"apt-get update"* ]] || echo "$f: apt-get install without apt-get update in the same RUN"
			[[ $run == *"rm -rf /var/lib/apt/lists/*"* ]] || echo "$f: apt lists not removed in the same RUN"
			;;
		esac
	done
	# COPY sources (not --from) exist and are not excluded by the ignore file.
	[ -f "$ignore" ] || echo "$f: no $ignore"
	sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$f" | grep '^COPY ' | grep -v -- '--from=' |
		while read -r _ args; do
			# shellcheck disable=SC2086 # split the instruction's words
			set -- $args
			while [ $# -gt 1 ]; do
				src=${1%/}
				[ -e "$src" ] || echo "$f: COPY source $src does not exist"
				if [ -f "$ignore" ] && ! grep -qx "!$src/\\?" "$ignore"; then
					echo "$f: COPY source $src is excluded by $ignore"
				fi
				shift
			done
		done
	case $f in
	*gpusizerd*) grep -q '^ARG DEBIAN_IMAGE=debian:12' "$f" || echo "$f: the daemon must build on Debian 12" ;;
	*probe*) grep -q '^FROM nvidia/cuda:' "$f" || echo "$f: the probe must build on an NVIDIA CUDA image" ;;
	esac
}
problems=$(for f in "${dockerfiles[@]}"; do dockerfile_check "$f"; done)
if [ -n "$problems" ]; then
	printf '%s\n' "$problems"
	fail dockerfiles "findings above"
else
	pass dockerfiles "${#dockerfiles[@]} Dockerfiles: multi-stage, pinned, non-root, HEALTHCHECK, apt, context"
fi

# The build stage's make, run on a copy of exactly what the Dockerfile's
# COPY instructions (not --from, not to an absolute path: those are the
# final stage's) put under WORKDIR, less what the .dockerignore leaves out:
# a source folder missing from the COPY lines or the ignore file fails here
# (review s16b F1: lib/ was missing and no image could be built).
# dockerfile_context FILE DIR: fills DIR; prints one line per problem.
dockerfile_context() {
	local f=$1 dir=$2 ignore=$1.dockerignore dest src pat
	sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$f" | grep '^COPY ' | grep -v -- '--from=' |
		while read -r _ args; do
			# shellcheck disable=SC2086 # split the instruction's words
			set -- $args
			dest=${!#}
			case $dest in /*) continue ;; esac
			while [ $# -gt 1 ]; do
				src=${1%/}
				shift
				# An ignored source is not in the context (reported above).
				if [ ! -e "$src" ] || ! grep -qx "!$src/\\?" "$ignore" 2>/dev/null; then
					continue
				fi
				if [ -d "$src" ]; then
					mkdir -p "$dir/$dest" && cp -R "$src/." "$dir/$dest/"
				elif [[ $dest == */ || $dest == . ]]; then
					mkdir -p "$dir/$dest" && cp "$src" "$dir/$dest/"
				else
					mkdir -p "$(dirname "$dir/$dest")" && cp "$src" "$dir/$dest"
				fi
			done
		done
	# The ignore file's "**/NAME" lines drop build outputs at any depth.
	if [ -f "$ignore" ]; then
		grep '^\*\*/' "$ignore" | while read -r pat; do
			find "$dir" -name "${pat#\*\*/}" -type f -delete
		done
	fi
	# Every #include "x" of the copied sources resolves beside the file or
	# from the context's root (the Makefiles' -I. and -Iprobe).
	find "$dir" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) |
		while read -r src; do
			sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$src" |
				while read -r pat; do
					[ -f "$(dirname "$src")/$pat" ] || [ -f "$dir/$pat" ] ||
						echo "$f: ${src#"$dir"/} includes \"$pat\", which the COPY lines leave out"
				done
		done
}
for f in "${dockerfiles[@]}"; do
	name=$(basename "$f" .Dockerfile)
	ctx=$work/context-$name
	mkdir -p "$ctx"
	problems=$(dockerfile_context "$f" "$ctx")
	if [ -n "$problems" ]; then
		printf '%s\n' "$problems" | head -n 10
		[ "$(printf '%s\n' "$problems" | wc -l)" -le 10 ] || say "  ... and more"
		fail "context-$name" "the COPY'd files do not hold every header they include"
		continue
	fi
	# The build stage's RUN that calls make, as the image runs it (not the
	# apt-get one: its package list names make too).
	run=$(sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$f" | awk '/^FROM /{n++} n==1' |
		grep '^RUN ' | grep -v 'apt-get' | grep -E '(^RUN|&&) +make ' | sed 's/^RUN //')
	if [ -z "$run" ]; then
		fail "context-$name" "no RUN ... make in the build stage"
		continue
	fi
	case $name in
	*probe*)
		# No nvcc: the include check above is all that can be done here.
		if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
			skip "context-$name" "includes resolve; no nvcc to build (apt-get install -y nvidia-cuda-toolkit)"
			continue
		fi
		# One SASS arch (the image builds six) keeps the check short.
		envs=(PROBE_ARCHS=90)
		;;
	*) envs=() ;;
	esac
	# Not the caller's make's flags (jobserver, -s) nor CFLAGS: a bare build.
	if (cd "$ctx" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u CFLAGS "${envs[@]}" \
		timeout 900 bash -e -o pipefail -c "$run") >"$work/context-$name.log" 2>&1; then
		pass "context-$name" "the build stage's make succeeds on the COPY'd files alone"
	else
		tail -n 15 "$work/context-$name.log"
		fail "context-$name" "the build stage's make fails on the COPY'd files alone (a COPY or .dockerignore line missing?)"
	fi
done

# ---------------------------------------------------------------------------
section "node tools (kubernetes-models, yaml)"
node_dir=build/deploy-lint
node_ok=0
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	need node nodejs >/dev/null
	need npm npm >/dev/null
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	skip node-tools "node/npm not installed (apt-get install -y nodejs npm)"
else
	mkdir -p "$node_dir"
	stamp=$node_dir/node_modules/.gpusizer-lock
	if [ -f "$stamp" ] && cmp -s deploy/lint/package-lock.json "$stamp"; then
		node_ok=1
	else
		cp deploy/lint/package.json deploy/lint/package-lock.json "$node_dir/"
		if ! timeout 20 npm ping >/dev/null 2>&1; then
			skip node-tools "the npm registry is unreachable; cannot install deploy/lint/package.json"
		elif npm_ci "$node_dir" 300; then
			cp deploy/lint/package-lock.json "$stamp"
			node_ok=1
		else
			tail -n 20 "$node_dir/npm-ci.log"
			fail node-tools "npm ci failed (log: $node_dir/npm-ci.log)"
		fi
	fi
fi

# ---------------------------------------------------------------------------
section "kubernetes manifests"
if [ "$node_ok" = 1 ]; then
	# The validator resolves its packages from beside itself.
	cp deploy/lint/k8s-validate.mjs "$node_dir/"
	if node "$node_dir/k8s-validate.mjs" deploy/k8s; then
		pass kubernetes "schema (kubernetes-models $(node -p "require('./$node_dir/node_modules/kubernetes-models/package.json').version")), unknown fields, policy"
	else
		fail kubernetes "findings above"
	fi
else
	skip kubernetes "needs the node tools above (kubectl cannot validate offline)"
fi

# ---------------------------------------------------------------------------
section "grafana dashboard"
dash=deploy/grafana/dashboards/gpusizer.json
if ! command -v node >/dev/null 2>&1; then
	skip grafana "node not installed"
elif ! jq -e . "$dash" >/dev/null 2>&1 && ! node -e "JSON.parse(require('fs').readFileSync('$dash'))"; then
	fail grafana "$dash is not valid JSON"
elif node deploy/lint/grafana-check.mjs "$dash" "$work/dashboard-rules.yaml"; then
	pass grafana "structure, datasources, metrics and tables"
	if need promtool prometheus; then
		if promtool check rules "$work/dashboard-rules.yaml" >"$work/promtool.out" 2>&1; then
			pass grafana-promql "$(grep -o '[0-9]* rules found' "$work/promtool.out") parsed by $(promtool --version 2>&1 | head -n 1 | cut -d' ' -f1-3)"
		else
			sed 's|^|  |' "$work/promtool.out"
			fail grafana-promql "promtool rejects a dashboard query"
		fi
	else
		skip grafana-promql "promtool not installed (apt-get install -y prometheus)"
	fi
else
	fail grafana "findings above"
fi
for f in deploy/grafana/provisioning/*/*.yaml; do
	[ -f "$f" ] || continue
	grep -q '^apiVersion: 1$' "$f" || { fail grafana-provisioning "$f: no apiVersion: 1"; continue; }
done
if grep -q "path: /var/lib/grafana/dashboards" deploy/grafana/provisioning/dashboards/gpusizer.yaml &&
	grep -q 'type: grafana-postgresql-datasource' deploy/grafana/provisioning/datasources/gpusizer.yaml; then
	pass grafana-provisioning "datasources and dashboard provider"
else
	fail grafana-provisioning "provider path or datasource type missing"
fi

# ---------------------------------------------------------------------------
section "prometheus rules"
if need promtool prometheus; then
	if promtool check rules deploy/prometheus/*.yaml; then pass prometheus-rules; else fail prometheus-rules "findings above"; fi
else
	skip prometheus-rules "promtool not installed (apt-get install -y prometheus)"
fi

# ---------------------------------------------------------------------------
section "slurm"
sb=deploy/slurm/gpusizer-probe.sbatch
sproblems=""
bash -n "$sb" || sproblems="$sproblems syntax;"
grep -q '^#SBATCH --ntasks-per-node=1$' "$sb" || sproblems="$sproblems no --ntasks-per-node=1;"
grep -q '^#SBATCH --exclusive$' "$sb" || sproblems="$sproblems not --exclusive;"
grep -q -- '--token-file' "$sb" || sproblems="$sproblems no --token-file;"
grep -q '^srun .*--ntasks-per-node=1' "$sb" || sproblems="$sproblems srun is not one task per node;"
awk '/^#SBATCH/ && seen {bad=1} !/^#/ && NF {seen=1} END {exit bad}' "$sb" ||
	sproblems="$sproblems an #SBATCH line after the first command (sbatch ignores it);"
if [ -z "$sproblems" ]; then pass slurm "one task per node, exclusive, token file"; else fail slurm "$sproblems"; fi

# ---------------------------------------------------------------------------
lint_summary "deploy lint"
