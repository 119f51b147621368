#!/usr/bin/env bash
# A fleet of two hosts end to end (make test-fleet): two `dpperf profile
# run` collectors, each on its own loop device and serving /metrics on a
# free 127.0.0.1 port, stand for two hosts (instance="host-a" and
# "host-b"; host-b records 1 of 10 requests); a Prometheus of its own (its
# own storage in a temporary directory, a free 127.0.0.1 port, never the
# packaged service) scrapes both every second and evaluates the recording
# rules of examples/profile/fleet/rules.yml; fio reads 4 KiB blocks from
# both devices at once. Then Prometheus' HTTP API is asked for each
# host's per-stage p99,
#
#   histogram_quantile(0.99, sum by (le, group, stage)
#     (rate(dpperf_profile_latency_seconds_bucket{instance="host-a"}[W])))
#
# and internal/cmd/fleetcheck holds it against that collector's own JSON
# report: within one bucket (the same power-of-two bucket or a
# neighbour). Which requests each side covers: the report covers the
# collector's whole run. The collectors serve nothing before their first
# request (a series is born with its group), so the rate is evaluated at
# the end of the run over a range W that starts before fio does: it then
# spans every scrape of the run. rate() takes the increase from the first
# scrape to the last and extrapolates it; what it leaves out is at most
# the first scrape's second (rate extrapolates towards zero) and the
# collector's last interval, which it publishes only when a later request
# closes it or the run stops (about a second of 15). fio's load is steady,
# so the p99 of the scraped part and of the whole run fall in the same
# bucket or, when the p99 lies near a bound, neighbouring ones. The same
# quantile over the cumulative buckets (no rate) and the recorded 1m p99
# of the rules (the 1m range covers the whole run too) are checked the
# same way; and Prometheus' count of all requests (recorded ones divided
# by dpperf_profile_sample_ratio) against the report's.
#
# Needs root, fio, losetup and Debian's prometheus package (scripts/setup.sh
# installs it). About 40 s. Leaves no loop device, process or temporary
# directory behind.
set -euo pipefail

GO=${GO:-go}
runtime=${FLEET_RUNTIME:-15}
rules=${FLEET_RULES:-examples/profile/fleet/rules.yml}
command -v prometheus >/dev/null || { echo "e2e: prometheus not installed (make setup)" >&2; exit 1; }
command -v fio >/dev/null || { echo "e2e: fio not installed (make setup)" >&2; exit 1; }
[ -f "$rules" ] || { echo "e2e: no $rules (run from the repository root)" >&2; exit 1; }

# host-a's loop device, $bin, $work and loop.sh's cleanup.
source "$(dirname "$0")/loop.sh"
loop_a=$loop dev_a=$dev
loop_b=""
pids=()
fleet_cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "$loop_b" ] && losetup -d "$loop_b" 2>/dev/null || true
  cleanup
}
trap fleet_cleanup EXIT
trap 'exit 130' INT TERM

dd if=/dev/urandom of="$work/disk-b.img" bs=1M count=256 status=none
sync
loop_b=$(losetup --find --show --direct-io="${LOOP_DIRECT_IO:-on}" "$work/disk-b.img")
dev_b=$(basename "$loop_b")

"$GO" build -o "$work/fleetcheck" ./internal/cmd/fleetcheck
check=$work/fleetcheck

# A collector: INSTANCE DEV SAMPLE; sets port_INSTANCE from its note
# "profile: metrics on http://127.0.0.1:PORT/metrics" (it listens on port
# 0: the kernel picks a free one, and the note comes once the programs
# are attached).
collector() {
  local inst=$1 dev=$2 sample=$3 i port=""
  "$bin" profile run --dev "$dev" --sample "$sample" --listen 127.0.0.1:0 -q --json -o "$work/$inst.json" 2>"$work/$inst.log" &
  pids+=($!)
  for i in $(seq 200); do
    port=$(sed -n 's|^profile: metrics on http://127\.0\.0\.1:\([0-9]*\)/metrics$|\1|p' "$work/$inst.log")
    [ -n "$port" ] && break
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/$inst.log" >&2; echo "e2e: collector $inst failed" >&2; exit 1; }
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$work/$inst.log" >&2; echo "e2e: collector $inst never listened" >&2; exit 1; }
  printf -v "port_${inst//-/_}" %s "$port"
  echo "e2e: $inst: $dev, 1 of $sample requests, metrics on 127.0.0.1:$port" >&2
}
collector host-a "$dev_a" 1
collector host-b "$dev_b" 10

# Prometheus: one job, a target per host whose instance label names the
# host (instead of the address).
mkdir -p "$work/tsdb"
cp "$rules" "$work/rules.yml"
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
rule_files: [rules.yml]
scrape_configs:
  - job_name: dpperf
    static_configs:
      - targets: ['127.0.0.1:$port_host_a']
        labels: {instance: host-a}
      - targets: ['127.0.0.1:$port_host_b']
        labels: {instance: host-b}
EOF
if command -v promtool >/dev/null; then
  promtool check config "$work/prometheus.yml" >&2
fi
prom=""
for attempt in 1 2 3; do
  pport=$("$check" freeport)
  prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$work/prometheus.log" 2>&1 &
  pids+=($!)
  if "$check" wait-up -prom "http://127.0.0.1:$pport" -n 2 -timeout 30s; then
    prom=http://127.0.0.1:$pport
    break
  fi
  kill "${pids[-1]}" 2>/dev/null || true  # the port was taken meanwhile: another one
  wait "${pids[-1]}" 2>/dev/null || true
done
[ -n "$prom" ] || { cat "$work/prometheus.log" >&2; echo "e2e: Prometheus did not scrape both hosts" >&2; exit 1; }
echo "e2e: Prometheus on $prom scraping both hosts every second" >&2

# Each host's series born small, before the load. rate() extrapolates a
# counter's increase towards the start of its range by the time the
# counter would have taken to reach zero, unless that exceeds 1.1 scrape
# intervals, when it extrapolates by half an interval instead: a series
# whose first sample holds about a second of a 15 s run sits at that
# threshold, so some of a histogram's buckets are extrapolated by their
# first sample and others by half a second, and the p99 of the rate moves
# by buckets (host-b's stages landed at 8-16 µs and 2-4 ms against
# 0.8 µs and 310 µs once). With a few hundred requests in the first
# sample (a short read, then another after more than one collector
# interval so that it closes the first one), every bucket's
# extrapolation is its first sample: the rate is the run's.
start=$(date +%s)
warm() {
  local d
  for d in "$loop_a" "$loop_b"; do
    dd if="$d" of=/dev/null bs=4k count=400 iflag=direct status=none
  done
}
warm
sleep 1.5
warm
"$check" wait-up -prom "$prom" -n 2 -timeout 30s -query 'max by (instance) (dpperf_profile_latency_seconds_count)'
fio_job() {
  fio --name="$1" --filename="$2" --rw=randread --bs=4k --iodepth=8 --ioengine=libaio --direct=1 \
    --time_based --runtime="$runtime" --output=/dev/null
}
fio_job a "$loop_a" & fa=$!
fio_job b "$loop_b" & fb=$!
wait "$fa"
wait "$fb"
# Two more scrapes and rule evaluations after the last request.
sleep 3
end=$(date +%s)
window=$((end - start + 5))
[ "$window" -le 60 ] || echo "e2e: the run took ${window}s: the 1m rule covers only its end" >&2

# Stop the collectors as Ctrl-C does: each writes its report.
for p in "${pids[@]:0:2}"; do kill -INT "$p"; done
for p in "${pids[@]:0:2}"; do wait "$p" || { echo "e2e: a collector failed" >&2; cat "$work"/host-*.log >&2; exit 1; }; done
pids=("${pids[@]:2}")

"$check" compare -prom "$prom" -at "$end" -window "${window}s" host-a="$work/host-a.json" host-b="$work/host-b.json"
echo "e2e: fleet ok" >&2
