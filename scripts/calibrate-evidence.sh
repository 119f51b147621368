#!/usr/bin/env bash
# The evidence table of a calibrated target: for every libxdp1 XDP program
# and build/bpf/test_xdp_noinline.o, the naive bound, the slowest
# satisfiable path (SSP), and the example packet replayed REPS times with
# BPF_PROG_TEST_RUN (dpperf bound --measure), in Mpkt/s on one core.
# Usage: scripts/calibrate-evidence.sh TARGET.yaml [REPS]   (root)
set -euo pipefail
target=${1:?usage: $0 TARGET.yaml [REPS]}
reps=${2:-9}
bin=${BIN:-bin/dpperf}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

runs=()
for o in /usr/lib/x86_64-linux-gnu/bpf/*.o build/bpf/test_xdp_noinline.o; do
  [ -f "$o" ] || continue
  b=$(basename "$o" .o)
  case $b in
    xdpdump_bpf) continue ;;                      # tracing programs
    xdp-dispatcher) runs+=("$o xdp_dispatcher") ;;
    test_xdp_noinline) runs+=("$o balancer_ingress_v4" "$o balancer_ingress_v6") ;;
    *) runs+=("$o -") ;;
  esac
done

# Replays interleave: every program once, then every program again.
for r in $(seq "$reps"); do
  for i in "${!runs[@]}"; do
    read -r o p <<<"${runs[$i]}"
    args=(bound --json --workers 1 --measure --target "$target" --time-limit 60s)
    [ "$p" != - ] && args+=(--program "$p")
    "$bin" "${args[@]}" "$o" >"$tmp/$i.$r.json"
  done
done

echo "| program | naive | SSP | measured (min / max of $reps) | SSP / slowest measured | path and verdict |"
echo "|---|---|---|---|---|---|"
for i in "${!runs[@]}"; do
  read -r o p <<<"${runs[$i]}"
  name=$(basename "$o" .o); [ "$p" != - ] && name=$p
  jq -s -r --arg name "$name" '
    def m: . / 1e6 | . * 100 | round / 100;
    (map(.paths[0].measured.packet_rate) | min) as $slow |
    (map(.paths[0].measured.packet_rate) | max) as $fast |
    .[0] as $r | $r.paths[0].measured as $x |
    "| \($name) | \($r.naive.packet_rate | m) | \($r.bound.packet_rate | m) | \($slow | m) / \($fast | m) | " +
    "\($r.bound.packet_rate / $slow * 100 | round)% | " +
    (if ($x.path_matches and $x.verdict_matches) then "as predicted"
       + (if $x.stateful then "; repeats take another path (state change), single runs \(map(.paths[0].measured.single_ns) | min | round)–\(map(.paths[0].measured.single_ns) | max | round) ns" else "" end)
     elif ($x.mismatch // "" | test("cannot be filled")) then "not replayable (AF_XDP socket map)"
     else "differs: \($x.mismatch // "verdict")" end) + " |"' "$tmp/$i".*.json
done
