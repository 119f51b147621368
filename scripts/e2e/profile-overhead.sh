#!/usr/bin/env bash
# Collector overhead of `dpperf profile run`: fio 4 KiB random reads on a
# loop device backed by a file, at iodepth 1 and 32, in ROUNDS rounds of
# one run without and one run with the BPF collector (the order swaps each
# round, so that drifting background load hits both alike). Each round
# gives a paired loss (1 - IOPS on / IOPS off); the script prints the mean
# IOPS and fio CPU of each mode and the mean paired loss with its standard
# deviation and standard error. Writes the table to OUT (default stdout).
# Needs root, fio and losetup. Environment: ROUNDS (default 8), SECS
# (seconds per run, default 5), DEPTHS (default "1 32").
set -euo pipefail

out=${1:-/dev/stdout}
rounds=${ROUNDS:-8}
secs=${SECS:-5}
depths=${DEPTHS:-"1 32"}
source "$(dirname "$0")/loop.sh"

# one MODE DEPTH prints "IOPS CPU%" (CPU: fio's usr+sys).
one() {
  local cmd=(fio --name=r --filename="$loop" --rw=randread --bs=4k --iodepth="$2" --ioengine=libaio
    --direct=1 --time_based --runtime="$secs" --minimal)
  local line
  if [ "$1" = off ]; then
    line=$("${cmd[@]}")
  else
    # The profiled command's output goes to dpperf's stderr.
    line=$("$bin" profile run --dev "$dev" -q -- "${cmd[@]}" 2>&1 >/dev/null | grep '^3;')
  fi
  echo "$line" | awk -F';' '{gsub("%","",$88); gsub("%","",$89); print $8, $88+$89}'
}

{
  echo "# fio 4KiB randread on a loop device, ${secs}s per run, $rounds rounds of off/on (order alternating)"
  echo "# $(uname -r), $(nproc) CPUs, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  for depth in $depths; do
    for ((i = 0; i < rounds; i++)); do
      if ((i % 2 == 0)); then a=off b=bpf; else a=bpf b=off; fi
      ra=$(one $a "$depth")
      rb=$(one $b "$depth")
      echo "# round $i depth $depth: $a $ra, $b $rb" >&2
      echo "$depth $a $ra $b $rb"
    done
  done | awk '
    function sd(s, ss, n) { return n > 1 ? sqrt((ss - s*s/n) / (n-1)) : 0 }
    function median(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
      return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
    }
    {
      d = $1; for (k = 2; k <= 6; k += 3) { v[$k] = $(k+1); c[$k] = $(k+2) }
      n[d]++; loss[d, n[d]] = 100 * (1 - v["bpf"] / v["off"])
      for (m in v) { s[d, m] += v[m]; ss[d, m] += v[m]^2; cs[d, m] += c[m] }
      if (!(d in seen)) { seen[d] = 1; order[++nd] = d }
    }
    END {
      printf "%-6s %6s %17s %17s %8s %8s %10s %12s %12s\n", "depth", "rounds", "IOPS off", "IOPS on", "CPU off", "CPU on", "loss", "median loss", "quartiles"
      for (i = 1; i <= nd; i++) {
        d = order[i]; k = n[d]
        for (j = 1; j <= k; j++) l[j] = loss[d, j]
        med = median(l, k)
        printf "%-6s %6d %9.0f ± %5.0f %9.0f ± %5.0f %7.1f%% %7.1f%% %9.2f%% %11.2f%% %5.1f..%.1f%%\n", d, k,
          s[d, "off"]/k, sd(s[d, "off"], ss[d, "off"], k), s[d, "bpf"]/k, sd(s[d, "bpf"], ss[d, "bpf"], k),
          cs[d, "off"]/k, cs[d, "bpf"]/k, 100 * (1 - s[d, "bpf"] / s[d, "off"]), med, l[int((k+3)/4)], l[int((3*k+3)/4)]
      }
      print "# IOPS: mean ± standard deviation of single runs; loss: 1 - (mean IOPS on / mean IOPS off);"
      print "# median loss: median of the per-round paired losses, with their lower and upper quartile"
    }'
} | tee "$out"
