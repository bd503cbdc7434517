#!/bin/bash
# submit-partition.sh - probe every usable node of a partition, one job per
# node, so that each node is measured as soon as it is free (one job over
# N nodes would wait until all N are free at once).
#
#   submit-partition.sh PARTITION [extra sbatch options...]
#
# Run it daily from cron on a login node, as the account that owns the
# probe token (crontab -e):
#   0 2 * * * GPUSIZER_URL=https://gpusizer.example.internal /opt/gpusizer/deploy/slurm/submit-partition.sh gpu
# Each job gives up at --deadline (before the next day's round) if its node
# stays busy, and runs at low priority (--nice) so it never jumps the queue.
set -euo pipefail
part=${1:?usage: submit-partition.sh PARTITION [sbatch options...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
: "${GPUSIZER_URL:?set GPUSIZER_URL}"
# Nodes that can run jobs now or later (not down, drained or failing).
mapfile -t nodes < <(sinfo -h -p "$part" -N -t idle,mixed,allocated,completing -o %N | sort -u)
[ "${#nodes[@]}" -gt 0 ] || { echo "submit-partition: no usable node in $part" >&2; exit 1; }
for n in "${nodes[@]}"; do
	sbatch --parsable -p "$part" -w "$n" -N 1 --nice=1000 --deadline=now+20hours \
		--job-name="gpusizer-probe-$n" "$@" "$here/gpusizer-probe.sbatch"
done | paste -sd' ' | sed "s/^/submitted ${#nodes[@]} job(s): /"
