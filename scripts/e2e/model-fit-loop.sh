#!/usr/bin/env bash
# Evidence for `dpperf model fit --profile`: profiles fio 4 KiB random reads
# on a fresh loop device at iodepth 1 and 32, fits the block path's model
# on each profile and predicts the other's latency, and fits on both.
# Writes the profiles and a dated markdown report into OUT (default
# docs/evidence). Needs root, fio and losetup. Part of `make evidence`,
# never of `make test`: it measures.
set -euo pipefail

out=${1:-docs/evidence}
mkdir -p "$out"
source "$(dirname "$0")/loop.sh"
# loop.sh made $work (removed on exit with the loop device).

prof() { # name, iodepth
  "$bin" profile run --dev "$dev" --json -o "$work/$1.json" -- \
    fio --name=a --filename="$loop" --rw=randread --bs=4k --iodepth="$2" --ioengine=libaio --direct=1 --time_based --runtime=3 --output=/dev/null >/dev/null
}
prof qd1 1
prof qd32 32

day=$(date +%Y-%m-%d)
report="$out/model-fit-loop-$day.md"
{
  echo "# Model fitted to profiles of a loop device ($day)"
  echo
  echo "fio 4 KiB random reads on a loop device ($(uname -r), $(nproc) CPUs), profiled at iodepth 1 and 32"
  echo "with \`dpperf profile run\`; the block path's model fitted on one profile and checked at the other's"
  echo "load with \`dpperf model fit --profile A.json --check B.json\` (split stages: --parallelism D; auto: estimated from the profile)."
  for d in auto 1 2; do
    echo; echo "## fit on iodepth 1, predict iodepth 32 (--parallelism $d)"; echo; echo '```'
    "$bin" model fit --profile "$work/qd1.json" --parallelism "$d" --check "$work/qd32.json"
    echo '```'
    echo; echo "## fit on iodepth 32, predict iodepth 1 (--parallelism $d)"; echo; echo '```'
    "$bin" model fit --profile "$work/qd32.json" --parallelism "$d" --check "$work/qd1.json"
    echo '```'
  done
  echo; echo "## fit on both"; echo; echo '```'
  "$bin" model fit --profile "$work/qd1.json,$work/qd32.json" --check "$work/qd32.json"
  echo '```'
} > "$report"
cp "$work/qd1.json" "$out/model-fit-loop-$day-qd1.json"
cp "$work/qd32.json" "$out/model-fit-loop-$day-qd32.json"
echo "wrote $report" >&2
