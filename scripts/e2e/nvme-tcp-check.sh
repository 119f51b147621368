#!/usr/bin/env bash
# Checks the reports of nvme-tcp-qemu.sh in DIR: every profile (both
# collectors) has each stage of the path with at least 100 requests, and
# both comparisons give a verdict. With --timing (make evidence, on an
# idle machine) it also checks what depends on the emulated machine's
# speed: the 128 KiB writes spend longer in target-queue than the 4 KiB
# reads (the R2T and H2C data exchange happen there), and both comparisons
# with target-side contention name target-device as the bottleneck.
set -euo pipefail
timing=0
if [ "${1:-}" = --timing ]; then timing=1; shift; fi
dir=${1:?usage: nvme-tcp-check.sh [--timing] DIR}
fail() { echo "nvme-tcp-check: $*" >&2; exit 1; }

# stage_col FILE STAGE COL: column COL of STAGE's row, counted from its
# request count (the whole request's row, named by the path's first and
# last events such as QUEUE_RQ→BLK_COMPLETE, has no queue and cause
# columns; STAGE "whole" picks it).
stage_col() { awk -v s="$2" -v c="$3" '$1==s || (s=="whole" && $1 ~ /→/) { for (i=2; i<=NF; i++) if ($i ~ /^[0-9]+$/) { print $(i+c); exit } }' "$1"; }
# us VALUE: a report duration (ns, µs, ms, s) in µs.
us() { awk -v v="$1" 'BEGIN {
  n=v+0; u=v; sub(/^[0-9.]+/, "", u)
  if (u=="ns") n/=1000; else if (u=="ms") n*=1000; else if (u=="s") n*=1e6
  print n }'; }

for name in read4k write128k read4k-contended; do
  for f in "$dir/$name.txt" "$dir/$name-bpf.txt"; do
    [ -s "$f" ] || fail "missing report $f"
    for st in host-issue send-net-recv target-queue target-device whole; do
      n=$(stage_col "$f" "$st" 0)
      [ -n "$n" ] || fail "$f: no row for stage $st"
      [ "$n" -ge 100 ] || fail "$f: stage $st has $n requests, want at least 100"
    done
  done
done

for f in compare.txt compare-bpf.txt; do
  grep -q "^verdict: " "$dir/$f" || fail "$dir/$f gives no verdict"
done
if [ $timing = 0 ]; then
  echo "nvme-tcp-check: $dir: all stages observed, both comparisons give a verdict (timing checks: --timing)"
  exit 0
fi

for c in tracefs bpf; do
  sfx=""; [ $c = bpf ] && sfx=-bpf
  r=$(us "$(stage_col "$dir/read4k$sfx.txt" target-queue 2)")
  w=$(us "$(stage_col "$dir/write128k$sfx.txt" target-queue 2)")
  awk -v r="$r" -v w="$w" 'BEGIN { exit !(w > 2*r) }' ||
    fail "$c: 128 KiB writes spend ${w}µs in target-queue, 4 KiB reads ${r}µs; want the R2T exchange to show (writes > 2 × reads)"
  echo "nvme-tcp-check: $c: target-queue 4 KiB reads ${r}µs, 128 KiB writes ${w}µs"
done

for f in compare.txt compare-bpf.txt; do
  grep -qx "bottleneck: target-device" "$dir/$f" || fail "$dir/$f does not name target-device as the bottleneck: $(grep '^bottleneck' "$dir/$f" || echo none)"
done
echo "nvme-tcp-check: $dir: all stages observed, R2T in target-queue, bottleneck target-device under contention"
