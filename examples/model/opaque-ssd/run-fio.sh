#!/usr/bin/env bash
# Measure a latency-vs-load curve of an opaque block device with fio and
# write fio's JSON output: 4 KiB random reads with direct I/O and Poisson
# arrivals (rate_process=poisson, as the model assumes) at 10% to 95% of
# the device's saturation rate, one job after the other (stonewall). The
# saturation rate comes from a first run at iodepth 1 to 128 (closed loop),
# whose JSON is kept as well.
# With no DEVICE, a loop device (direct I/O) over a 1 GiB file in /var/tmp
# is set up and removed afterwards; that needs root and losetup.
#
#   run-fio.sh [OUTDIR [DEVICE]]     writes OUTDIR/fio.json and OUTDIR/fio-iodepth.json
set -euo pipefail
out=${1:-.}
dev=${2:-}
work=""
loop=""
cleanup() {
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
  [ -n "$work" ] && rm -rf "$work"
}
trap cleanup EXIT INT TERM
if [ -z "$dev" ]; then
  work=$(mktemp -d /var/tmp/dpperf-fit.XXXXXX)
  dd if=/dev/urandom of="$work/disk.img" bs=1M count=1024 status=none
  sync
  loop=$(losetup --find --show --direct-io=on "$work/disk.img")
  dev=$loop
fi
common=(--filename="$dev" --rw=randread --bs=4k --ioengine=libaio --direct=1
        --time_based --ramp_time=1 --randrepeat=0 --norandommap --output-format=json)
jobs=()
for d in 1 2 4 8 16 32 64 128; do
  jobs+=(--name="qd$d" --iodepth="$d" --stonewall)
done
fio "${common[@]}" --runtime=4 --output="$out/fio-iodepth.json.tmp" "${jobs[@]}"
mv "$out/fio-iodepth.json.tmp" "$out/fio-iodepth.json"
max=$(python3 -c 'import json,sys; print(int(max(j["read"]["iops"] for j in json.load(open(sys.argv[1]))["jobs"])))' "$out/fio-iodepth.json")
jobs=()
for pct in 10 20 30 40 50 60 70 80 85 90 95; do
  jobs+=(--name="rate$pct" --rate_iops=$((max * pct / 100)) --stonewall)
done
fio "${common[@]}" --runtime=5 --iodepth=256 --rate_process=poisson --output="$out/fio.json.tmp" "${jobs[@]}"
mv "$out/fio.json.tmp" "$out/fio.json"
echo "wrote $out/fio.json and $out/fio-iodepth.json ($dev, saturation $max IOPS)" >&2
