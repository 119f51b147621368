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
bin=${DPPERF:-bin/dpperf}
[ -x "$bin" ] || { echo "e2e: build dpperf first (make build)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "e2e: needs root (BPF and loop devices)" >&2; exit 1; }

work=$(mktemp -d)
loop=""
cleanup() {
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

dd if=/dev/urandom of="$work/disk.img" bs=1M count=256 status=none
loop=$(losetup --find --show --direct-io=on "$work/disk.img")
dev=$(basename "$loop")
echo "e2e: profiling $loop" >&2

fio_read() { # bs depth seconds
  fio --name="r$1" --filename="$loop" --rw=randread --bs="$1" --iodepth="$2" --ioengine=libaio \
      --direct=1 --time_based --runtime="$3" --minimal
}

# The text report goes to OUT/*.txt, the JSON profile to OUT/*.json.
prof() { # name, then the command
  local name=$1; shift
  "$bin" profile run --dev "$dev" --json "$out/$name.json" --html "$out/$name.html" -o "$out/$name.txt" -q -- "$@" >/dev/null
}

prof base-qd1 fio --name=a --filename="$loop" --rw=randread --bs=4k --iodepth=1 --ioengine=libaio --direct=1 --time_based --runtime=3 --output=/dev/null
prof base-qd32 fio --name=a --filename="$loop" --rw=randread --bs=4k --iodepth=32 --ioengine=libaio --direct=1 --time_based --runtime=3 --output=/dev/null
prof contended-qd32 bash -c "fio --name=bg --filename=$loop --rw=randread --bs=64k --iodepth=32 --ioengine=libaio --direct=1 --time_based --runtime=3 --output=/dev/null &
  fio --name=a --filename=$loop --rw=randread --bs=4k --iodepth=32 --ioengine=libaio --direct=1 --time_based --runtime=3 --output=/dev/null; wait"

"$bin" profile compare "$out/base-qd1.json" "$out/base-qd32.json" > "$out/compare-qd1-qd32.txt"
"$bin" profile compare --json "$out/compare.json" --html "$out/compare.html" \
  "$out/base-qd32.json" "$out/contended-qd32.json" > "$out/compare.txt"
cat "$out/compare.txt"
grep -q '^bottleneck: D2C' "$out/compare.txt" || { echo "e2e: compare did not name D2C" >&2; exit 1; }

if [ "$overhead" = 1 ]; then
  # Alternate runs without and with the collector; report the median IOPS
  # and CPU (usr+sys of fio) of each.
  {
    echo "# fio 4KiB randread on a loop device, 5 s per run, 3 runs each, median"
    printf "%-8s %-10s %10s %8s\n" depth collector iops fio_cpu%
    for depth in 1 32; do
      for mode in off bpf off bpf off bpf; do
        if [ $mode = off ]; then
          line=$(fio_read 4k $depth 5)
        else
          line=$("$bin" profile run --dev "$dev" -q -- bash -c "fio --name=r --filename=$loop --rw=randread --bs=4k --iodepth=$depth --ioengine=libaio --direct=1 --time_based --runtime=5 --minimal" 2>&1 | grep '^3;')
        fi
        echo "$depth $mode $(echo "$line" | awk -F';' '{gsub("%","",$88); gsub("%","",$89); print $8, $88+$89}')"
      done
    done | sort -k1,1n -k2,2 | awk '
      { key=$1" "$2; n[key]++; iops[key, n[key]]=$3; cpu[key, n[key]]=$4 }
      END { for (k in n) { split(k, f, " "); m=int((n[k]+1)/2);
              # values arrive sorted by sort -k? no: pick median by sorting here
              c=n[k]; for(i=1;i<=c;i++) for(j=i+1;j<=c;j++) { if (iops[k,j]<iops[k,i]) {t=iops[k,i];iops[k,i]=iops[k,j];iops[k,j]=t}
                                                             if (cpu[k,j]<cpu[k,i]) {t=cpu[k,i];cpu[k,i]=cpu[k,j];cpu[k,j]=t} }
              printf "%-8s %-10s %10d %8.1f\n", f[1], f[2], iops[k,m], cpu[k,m] } }' | sort
  } | tee "$out/overhead.txt"
fi
