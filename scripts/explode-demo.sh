#!/usr/bin/env bash
# Path explosion under a time limit: `dpperf bound --stream` on
# explode_pairs (64 branches, more than 10^15 shortest refuted prefixes)
# for DURATION, then a summary of the streamed bounds, the paths checked per
# second, and the peak memory: dpperf's own (VmHWM) and that of dpperf with
# its solver processes (their summed RSS, sampled every 2 s). The stream
# is kept in OUT.
#
#   scripts/explode-demo.sh [BIN] [OBJECT] [DURATION] [OUT]
set -euo pipefail

bin=${1:-bin/dpperf}
obj=${2:-build/bpf/explode_pairs.o}
dur=${3:-10m}
out=${4:-build/explode_pairs.jsonl}
peak=$(mktemp)
trap 'rm -f "$peak"' EXIT

echo "dpperf bound --target nfp-agilio-cx --stream --time-limit $dur $obj ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
"$bin" bound --target nfp-agilio-cx --stream --time-limit "$dur" "$obj" >"$out" &
pid=$!
hwm=0 total=0
while kill -0 "$pid" 2>/dev/null; do
	h=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
	t=$(ps -o rss= -p "$pid" --ppid "$pid" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
	((${h:-0} > hwm)) && hwm=$h
	((t > total)) && total=$t
	echo "$hwm $total" >"$peak"
	sleep 2
done
wait "$pid"
python3 - "$out" "$peak" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
hwm, total = (int(x) for x in open(sys.argv[2]).read().split())
res = next(l["result"] for l in lines if l["type"] == "result")
s = res["search"]
series = s["series"]
print(f"result        {res['kind']} after {s['seconds']:.0f} s")
print(f"bounds        {len(series)} streamed, {series[0]['bound'] / 1e6:.3f} -> {series[-1]['bound'] / 1e6:.3f} Mpkt/s "
      f"(naive {res['naive']['packet_rate'] / 1e6:.3f}), the last at {series[-1]['seconds']:.0f} s")
print(f"paths         {s['paths_checked']} checked, {s['paths_refuted']} refuted "
      f"({s.get('refuted_folded', 0)} by folding), {s.get('paths_unknown', 0)} unknown, "
      f"{s['paths_checked'] / s['seconds']:.0f} per second on {s['workers']} workers")
print(f"solver        {s['solver_checks']} checks, {s['refuted_prefixes']} refuted prefixes")
print(f"peak memory   {hwm // 1024} MB dpperf, {total // 1024} MB with its solver processes")
PY
