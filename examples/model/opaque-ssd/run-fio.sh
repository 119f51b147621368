#!/usr/bin/env bash
# Measure a latency-vs-load curve of an opaque block device with fio, as
# the LogNIC document characterises its SSD: 4 KiB random reads with
# direct I/O at iodepth 1 to 128, one job after the other (stonewall),
# fio's JSON output to OUT (default fio.json). With no DEVICE, a loop
# device (direct I/O) over a 1 GiB file in /var/tmp is set up and removed
# afterwards; that needs root and losetup.
#
#   run-fio.sh [OUT [DEVICE]]
set -euo pipefail
out=${1:-fio.json}
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
jobs=()
for d in 1 2 4 8 16 32 64 128; do
  jobs+=(--name="qd$d" --iodepth="$d" --stonewall)
done
fio --filename="$dev" --rw=randread --bs=4k --ioengine=libaio --direct=1 \
    --time_based --runtime=4 --ramp_time=1 --randrepeat=0 --norandommap \
    --output-format=json --output="$out.tmp" "${jobs[@]}"
mv "$out.tmp" "$out"
echo "wrote $out ($dev)" >&2
