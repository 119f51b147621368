#!/usr/bin/env bash
# End-to-end run of `dpperf profile` on this machine: fio 4 KiB random reads
# on a loop device backed by a file, at iodepth 1 and 32, then at iodepth 32
# with a second fio (64 KiB reads) contending for the same device. Writes
# the reports and the comparison into OUT (default examples/profile) and,
# with --overhead, fio IOPS and CPU with and without the collector.
# Needs root, fio and losetup. Leaves no loop device or BPF program behind.
set -euo pipefail

out=examples/profile
overhead=0
for a in "$@"; do
  case $a in
    --overhead) overhead=1 ;;
    *) out=$a ;;
  esac
done
mkdir -p "$out"
source "$(dirname "$0")/loop.sh"
echo "e2e: profiling $loop" >&2

# The text report goes to OUT/*.txt, the JSON profile to OUT/*.json.
prof() { # name, then the command
  local name=$1; shift
  "$bin" profile run --dev "$dev" --json -o "$out/$name.json" --html "$out/$name.html" --text "$out/$name.txt" -- "$@" >/dev/null
}

prof base-qd1 fio --name=a --filename="$loop" --rw=randread --bs=4k --iodepth=1 --ioengine=libaio --direct=1 --time_based --runtime=3 --output=/dev/null
prof base-qd32 fio --name=a --filename="$loop" --rw=randread --bs=4k --iodepth=32 --ioengine=libaio --direct=1 --time_based --runtime=3 --output=/dev/null
prof contended-qd32 bash -c "fio --name=bg --filename=$loop --rw=randread --bs=64k --iodepth=32 --ioengine=libaio --direct=1 --time_based --runtime=3 --output=/dev/null &
  fio --name=a --filename=$loop --rw=randread --bs=4k --iodepth=32 --ioengine=libaio --direct=1 --time_based --runtime=3 --output=/dev/null; wait"

"$bin" profile compare "$out/base-qd1.json" "$out/base-qd32.json" > "$out/compare-qd1-qd32.txt"
"$bin" profile compare --json -o "$out/compare.json" --html "$out/compare.html" \
  "$out/base-qd32.json" "$out/contended-qd32.json" > "$out/compare.txt"
cat "$out/compare.txt"
grep -q '^bottleneck: D2C' "$out/compare.txt" || { echo "e2e: compare did not name D2C" >&2; exit 1; }

if [ "$overhead" = 1 ]; then
  # A fresh loop device and paired runs: see profile-overhead.sh.
  bash "$(dirname "$0")/profile-overhead.sh" "$out/overhead.txt"
fi
