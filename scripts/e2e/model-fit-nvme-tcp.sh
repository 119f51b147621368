#!/usr/bin/env bash
# Evidence for `dpperf model fit --profile` on the NVMe/TCP path: boots the
# guest of nvme-tcp-qemu.sh (same kernel, target and setup) with the steps
# of model-fit-nvme-tcp.steps, which profile 4 KiB random reads at iodepth
# 1, 2, 4 and 8; then, on the host, fits the path's model on one load (and
# on two) and checks it against the others with `--check`. Writes the
# profiles and a dated markdown report into OUT (default docs/evidence).
# With --no-boot it writes the report from the profiles of the last boot.
# Part of `make evidence`, never of `make test`: it measures.
set -euo pipefail
boot=1
if [ "${1:-}" = --no-boot ]; then boot=0; shift; fi
out=${1:-docs/evidence}
work=${WORK:-build/nvme-tcp}
dir=$work/model-fit
mkdir -p "$out"
here=$(dirname "$0")
if [ $boot = 1 ]; then
  rm -rf "$dir"
  uptime > "$work/model-fit-load-before"
  WORK=$work bash "$here/nvme-tcp-qemu.sh" --steps "$here/model-fit-nvme-tcp.steps" "$dir"
  uptime > "$work/model-fit-load-after"
fi
load_before=$(cat "$work/model-fit-load-before"); load_after=$(cat "$work/model-fit-load-after")
bin=bin/dpperf; [ -x $bin ] || go build -o $bin ./cmd/dpperf
for d in 1 2 4 8 1-again; do [ -s "$dir/qd$d.json" ] || { echo "model-fit-nvme-tcp: no profile $dir/qd$d.json" >&2; exit 1; }; done

# row FIT CHECK [FLAGS]: one line of the summary table: the whole path's
# measured and predicted mean latency, the error, and the largest ρ.
row() {
  local fit=$1 check=$2; shift 2
  local files; files=$(echo "$fit" | sed -E "s#qd([0-9]+(-again)?)#$dir/qd\1.json#g")
  "$bin" model fit --profile "$files" --check "$dir/$check.json" --json "$@" | jq -r --arg fit "$fit" --arg check "$check" --arg flags "$*" '
    (.stages | map(select(.queue == "split-fcfs")) | map(.name + " " + (.parallelism | tostring)) | join(", ")) as $eng
    | .check.rows[-1] as $e
    | "| \($fit) | \($check) | \($flags | if . == "" then "(default)" else . end) | \($eng) | \($e.measured_s * 1e3 * 1000 | round / 1000) ms | "
      + (if $e.model_s == null then "saturated | - " else "\($e.model_s * 1e3 * 1000 | round / 1000) ms | \($e.relative_error * 1000 | round / 10)% " end)
      + "| \($e.rho * 1000 | round / 1000) |"'
}
# full FIT CHECK [FLAGS]: the text report of one check.
full() {
  local fit=$1 check=$2; shift 2
  local files; files=$(echo "$fit" | sed -E "s#qd([0-9]+(-again)?)#$dir/qd\1.json#g")
  echo; echo "### fit on $fit, check $check${*:+ ($*)}"; echo; echo '```'
  "$bin" model fit --profile "$files" --check "$dir/$check.json" "$@" | sed "s#$dir/##g"
  echo '```'
}

day=$(date +%Y-%m-%d)
report="$out/model-fit-nvme-tcp-$day.md"
{
  echo "# Model fitted to profiles of the NVMe/TCP path ($day)"
  echo
  echo "fio 4 KiB random reads (libaio, direct, 1000 requests per load) of an NVMe/TCP namespace inside a"
  echo "qemu guest (software emulation, one vCPU; Linux $(ls "$work/kernel/lib/modules"); target: nvmet-tcp on"
  echo "127.0.0.1 over null_blk with four tags and 3 ms timer completions), profiled with"
  echo "\`dpperf profile run --path nvme-tcp --collector bpf\` at iodepth 1, 2, 4 and 8, then 1 again"
  echo "(\`scripts/e2e/model-fit-nvme-tcp.sh\`). The path's model is fitted with"
  echo "\`dpperf model fit --profile A.json[,B.json] --check C.json\` and checked at the other loads."
  echo
  echo "Host: $(nproc) CPUs, shared with other work. Load before the guest booted: \`$load_before\`;"
  echo "after it finished: \`$load_after\`."
  echo
  echo "## Profiles"
  echo
  echo "| iodepth | IOPS | requests in flight | mean latency | target-device |"
  echo "|---|---|---|---|---|"
  for d in 1 2 4 8 1-again; do
    jq -r --arg d "$d" '.groups[0] as $g | ($g.stages[] | select(.name == "target-device")) as $t
      | "| \($d) | \($g.iops * 10 | round / 10) | \($g.occupancy * 100 | round / 100) | \($g.latency.mean_ns / 1e4 | round / 100) ms | \($t.latency.mean_ns / 1e4 | round / 100) ms |"' "$dir/qd$d.json"
  done
  echo
  echo "## Whole path: predicted against measured mean latency"
  echo
  echo "ρ is the largest station utilisation of the model at the checked load; engines (default):"
  echo "estimated from one profile by Little's law, fitted to two (docs/model.md). null_blk has four tags."
  echo
  echo "| fitted on | checked at | flags | split stages: engines | measured | model | error | ρ |"
  echo "|---|---|---|---|---|---|---|---|"
  for c in qd2 qd4 qd8; do row qd1 $c; done
  for c in qd1 qd1-again qd2 qd4; do row qd8 $c; done
  for c in qd1 qd1-again qd2 qd4; do row qd8 $c --parallelism 1; done
  for c in qd1 qd1-again qd2 qd4; do row qd8 $c --parallelism 4; done
  for c in qd1 qd1-again qd2 qd8; do row qd4 $c; done
  for c in qd2 qd4; do row qd1,qd8 $c; done
  for c in qd2 qd4; do row qd1-again,qd8 $c; done
  row qd1 qd1-again
  echo
  echo "## Per stage"
  for c in qd1 qd2 qd4; do full qd8 $c; done
  for c in qd2 qd8; do full qd1 $c; done
  full qd1,qd8 qd4
} > "$report"
for d in 1 2 4 8 1-again; do cp "$dir/qd$d.json" "$out/model-fit-nvme-tcp-$day-qd$d.json"; done
echo "wrote $report" >&2
