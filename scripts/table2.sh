#!/usr/bin/env bash
# Bounds of our examples of the kinds in Table 2 of the throughput-guarantee
# paper on nfp-agilio-cx, beside the rates the paper measured on the NIC.
# Prints a markdown table; `make table2` writes it into docs/nfp-table2.md.
# Rates are path rates (before the 54.4 Mpkt/s MAC limit), as the paper
# measured processing-bound programs on 5 cores and scaled to 50.
set -euo pipefail
BIN=${BIN:-bin/dpperf}
OBJ=${OBJ:-build/bpf}
LIMIT=${LIMIT:-120s}

# object | paper's program | measured Gbit/s | paper's bottleneck
rows=(
  "dosfilter|Cloudflare DoS|34.7|cores"
  "quiclb|QUIC LB (IPv4)|23.5|cores"
  "quiclb6|QUIC LB (IPv6)|28.5|cores"
  "rtp_transcode|RTP a-law → µ-law|2.97|cores"
  "rtp_table|RTP a-law → µ-law|2.97|cores"
  "dnscache|DNS Cache|10.4|dram"
  "dnsbucket|DNS Cache|10.4|dram"
  "countmin|Count-Min (5)|22.2|cores"
  "countmin10|Count-Min (10)|12.0|dram"
  "countmin15|Count-Min (15)|8.0|dram"
  "countmin20|Count-Min (20)|6.0|dram"
)

echo "| program (ours) | paper's program | dpperf bound | NFP instructions | kind | search | paper measured | ratio | bottleneck (dpperf / paper) |"
echo "|---|---|---|---|---|---|---|---|---|"
for row in "${rows[@]}"; do
  IFS='|' read -r obj name measured kind <<<"$row"
  "$BIN" bound --target nfp-agilio-cx --metric bps --time-limit "$LIMIT" --json "$OBJ/$obj.o" >"/tmp/table2.$obj.json"
  python3 - "$obj" "$name" "$measured" "$kind" "/tmp/table2.$obj.json" <<'PY'
import json, sys
obj, name, measured, kind, path = sys.argv[1:]
r = json.load(open(path))
# A search stopped by the time limit reports an intermediate bound and no
# path: its bottleneck is not known.
p = r["paths"][0] if r.get("paths") else {"bottleneck": "not known"}
size = p.get("packet_bytes") or r["bound"]["packet_bytes"]
gbit = r["bound"]["path_rate"] * size * 8 / 1e9
ratio = gbit / float(measured)
secs = r.get("search", {}).get("seconds", 0)
print(f"| {obj} | {name} | {gbit:.2f} Gbit/s at {size} B | {r.get('target_instructions', 0)} | {r['kind']} | {secs:.1f} s | {measured} Gbit/s | {ratio:.2f} | {p['bottleneck']} / {kind} |")
PY
done
