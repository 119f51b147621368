#!/usr/bin/env bash
# Collector overhead of `dpperf profile run`: fio 4 KiB random reads on a
# loop device backed by a file, at each iodepth of DEPTHS. One fio run per
# iodepth, logging its IOPS every 100 ms; while it runs, windows of WINDOW
# seconds without and with the BPF collector alternate (ROUNDS pairs, the
# order swapping each round). Each pair gives a paired loss (1 - IOPS on /
# IOPS off) between two windows a few seconds apart, so that drifting
# background load and the backing disk's own drift hit both alike;
# dpperf's start-up and exit fall outside the windows. Printed per
# iodepth: mean IOPS off and on, the loss (ratio of the sums) with a 95%
# bootstrap interval, the median paired loss with its quartiles, fio's CPU
# off and on, and dpperf's own CPU time and context switches per request.
# Needs root, fio and losetup. Environment: ROUNDS (default 20), WINDOW
# (seconds, default 3), DEPTHS (default "1 32"), BACKING (disk: a file
# beside the others, read with direct I/O, the default; tmpfs: a file in
# /dev/shm, so that requests cost CPU only), PROFILE_FLAGS (more flags
# for `dpperf profile run`, e.g. "--sample 1000", the sampling rate of the
# original profiler's experiments), EVENTS (a subset of the block path's
# events Q,G,I,D,C, comma-separated, e.g. "Q,C": the collector profiles a
# path of those events only, so that with PROFILE_FLAGS="--bpf-programs
# empty" a row measures what attaching that many programs costs; the
# path needs two events, and I (block_rq_insert) never fires on a loop
# device, so "I,C" attaches one program that runs). Writes the table to
# OUT (default stdout).
#
# ALTERNATE=PERIOD (e.g. 500ms) measures differently: one dpperf process
# per iodepth detaches and attaches its programs every PERIOD
# (`profile run --alternate`) for DURATION seconds (default 300) while fio
# runs, and each window with the collector is compared with the mean of
# the windows without it on either side. Windows this short follow the
# host's own swings in speed (seconds), which 3 s windows with a dpperf
# start between them average into noise of ±5%; dpperf's own start-up and
# exit fall outside all windows, its idle reader inside both.
set -euo pipefail

out=${1:-/dev/stdout}
rounds=${ROUNDS:-20}
win=${WINDOW:-3}
depths=${DEPTHS:-"1 32"}
backing=${BACKING:-disk}
read -r -a pflags <<<"${PROFILE_FLAGS:-}"
case $backing in
disk) ;;
tmpfs) export TMPDIR=/dev/shm LOOP_DIRECT_IO=off ;;
*) echo "BACKING=$backing: want disk or tmpfs" >&2; exit 2 ;;
esac
source "$(dirname "$0")/loop.sh"
bin=$(realpath "$bin")

# A path of the block path's events listed in EVENTS, a stage between
# each two neighbours.
if [ -n "${EVENTS:-}" ]; then
  declare -A tps=([Q]=block_bio_queue [G]=block_getrq [I]=block_rq_insert [D]=block_rq_issue [C]=block_rq_complete)
  IFS=, read -r -a evs <<<"$EVENTS"
  {
    echo "name: block-${EVENTS//,/}"
    echo "description: the block path's events $EVENTS"
    echo "key: [dev, sector]"
    echo "events:"
    for e in "${evs[@]}"; do
      [ -n "${tps[$e]:-}" ] || { echo "EVENTS=$EVENTS: $e is not one of Q,G,I,D,C" >&2; exit 2; }
      echo "  - {name: $e, tracepoint: block:${tps[$e]}}"
    done
    echo "stages:"
    for ((i = 1; i < ${#evs[@]}; i++)); do
      echo "  - {name: ${evs[i-1]}2${evs[i]}, from: ${evs[i-1]}, to: ${evs[i]}, queue: central-fcfs, cause: queue}"
    done
  } > "$work/path.yaml"
  pflags+=(--path "$work/path.yaml")
fi

# mark.sh FILE SECS ROUND MODE: one window. It records its start and end
# (ms since the epoch), and what its parent (dpperf, or this script) and
# fio used meanwhile: CPU ns from schedstat, context switches.
cat > "$work/mark.sh" <<'EOF'
#!/usr/bin/env bash
usage() {
  local t=0 c=0 d
  for d in "$@"; do
    [ -r "$d/schedstat" ] || continue
    read -r run _ < "$d/schedstat"
    t=$((t + run))
    c=$((c + $(awk '/ctxt_switches/ { n += $2 } END { print n + 0 }' "$d/status")))
  done
  echo "$t $c"
}
tasks() { for p in "$@"; do echo /proc/$p/task/*; done; }
read -r p0 c0 <<<"$(usage $(tasks $PPID))"
read -r f0 _ <<<"$(usage $(tasks $FIO_PIDS))"
s=$(date +%s%3N)
sleep "$2"
e=$(date +%s%3N)
read -r p1 c1 <<<"$(usage $(tasks $PPID))"
read -r f1 _ <<<"$(usage $(tasks $FIO_PIDS))"
echo "$3 $4 $s $e $((p1 - p0)) $((c1 - c0)) $((f1 - f0))" >> "$1"
EOF
chmod +x "$work/mark.sh"

# Functions both tables' awk programs use.
stats_awk='
    # sort_ sorts a[1..k] in place (insertion sort: k is small).
    function sort_(a, k,   i, j, x) {
      for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { x = a[j]; a[j] = a[j-1]; a[j-1] = x }
    }
    # median sorts a[1..k] and returns its median.
    function median(a, k) {
      sort_(a, k)
      return k % 2 ? a[(k+1)/2] : (a[k/2] + a[k/2+1]) / 2
    }
    # boot_loss fills bl[1..2000], sorted, with the loss in % (1 - sum on / sum off)
    # of 2000 bootstrap resamples of the k pairs on[i], off[i].
    function boot_loss(on, off, k, bl,   b, i, j, x, y) {
      for (b = 1; b <= 2000; b++) {
        x = y = 0
        for (i = 1; i <= k; i++) { j = 1 + int(rand() * k); x += on[j]; y += off[j] }
        bl[b] = 100 * (1 - x / y)
      }
      sort_(bl, 2000)
    }'

# measure DEPTH prints one row of the table.
measure() {
  local depth=$1 marks=$work/marks-$1 total=$((rounds * 2 * (win + 2) + 10))
  : > "$marks"
  fio --name=r --filename="$loop" --rw=randread --bs=4k --iodepth="$depth" --ioengine=libaio --direct=1 \
    --time_based --runtime="$total" --write_iops_log="$work/iops-$depth" --log_avg_msec=100 --log_unix_epoch=1 \
    --output=/dev/null &
  local fp=$! i m
  sleep 1
  export FIO_PIDS="$fp $(pgrep -P "$fp" | tr '\n' ' ')"
  for ((i = 0; i < rounds; i++)); do
    for m in $( ((i % 2 == 0)) && echo "off on" || echo "on off"); do
      if [ "$m" = on ]; then
        "$bin" profile run --dev "$dev" -q "${pflags[@]}" -- "$work/mark.sh" "$marks" "$win" "$i" on >/dev/null 2>&1
      else
        "$work/mark.sh" "$marks" "$win" "$i" off
      fi
      sleep 0.5
    done
  done
  kill "$fp" 2>/dev/null || true
  wait "$fp" 2>/dev/null || true
  awk -v depth="$depth" -v win="$win" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" "$stats_awk"'
    NR == FNR { split($0, f, ","); n++; t[n] = f[1] + 0; v[n] = f[2] + 0; next }
    { r = $1; m = $2; s[r, m] = $3; e[r, m] = $4; pcpu[r, m] = $5; pcs[r, m] = $6; fcpu[r, m] = $7; rounds[r] = 1 }
    # mean IOPS of the samples of a window, its first 300 ms left out
    function iops(a, b,   i, sum, k) {
      for (i = 1; i <= n; i++) if (t[i] > a + 300 && t[i] <= b) { sum += v[i]; k++ }
      return k ? sum / k : 0
    }
    END {
      srand(1)
      for (r in rounds) {
        off = iops(s[r, "off"], e[r, "off"]); on = iops(s[r, "on"], e[r, "on"])
        if (off <= 0 || on <= 0) continue
        k++; O[k] = off; N[k] = on; loss[k] = 100 * (1 - on / off)
        son += on; soff += off; ssoff += off * off; sson += on * on
        reqs += on * (e[r, "on"] - s[r, "on"]) / 1000
        pc += pcpu[r, "on"]; cs += pcs[r, "on"]
        fon += fcpu[r, "on"] / (e[r, "on"] - s[r, "on"]) / 1e4; foff += fcpu[r, "off"] / (e[r, "off"] - s[r, "off"]) / 1e4
      }
      if (k < 2) { print depth, "too few windows"; exit }
      boot_loss(N, O, k, bl)
      med = median(loss, k)
      printf "%-5s %6d %9.0f ± %5.0f %9.0f ± %5.0f %6.2f%% %6.2f..%.2f%% %7.2f%% %6.1f..%.1f%% %5.1f%% %5.1f%% %8.3f %8.1f   %s\n", depth, k,
        soff / k, sqrt((ssoff - soff * soff / k) / (k - 1)), son / k, sqrt((sson - son * son / k) / (k - 1)),
        100 * (1 - son / soff), bl[51], bl[1950], med, loss[int((k + 3) / 4)], loss[int((3 * k + 3) / 4)],
        foff / k, fon / k, pc / 1e3 / reqs, cs * 1000 / reqs, load
    }' "$work/iops-${depth}_iops.1.log" "$marks"
}

# measure_alternate DEPTH prints one row of the table (ALTERNATE mode).
measure_alternate() {
  local depth=$1 dur=${DURATION:-300} wins=$work/windows-$1
  fio --name=r --filename="$loop" --rw=randread --bs=4k --iodepth="$depth" --ioengine=libaio --direct=1 \
    --time_based --runtime="$((dur + 4))" --write_iops_log="$work/iops-$depth" --log_avg_msec=100 --log_unix_epoch=1 \
    --output=/dev/null &
  local fp=$!
  sleep 1
  "$bin" profile run --dev "$dev" -q "${pflags[@]}" --alternate "$ALTERNATE" --alternate-log "$wins" \
    --duration "${dur}s" >/dev/null 2>"$work/dpperf-$depth.err" || { cat "$work/dpperf-$depth.err" >&2; exit 1; }
  kill "$fp" 2>/dev/null || true
  wait "$fp" 2>/dev/null || true
  awk -v depth="$depth" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" "$stats_awk"'
    NR == FNR { split($0, f, ","); n++; t[n] = f[1] + 0; v[n] = f[2] + 0; next }
    /^#/ { next }
    # mean IOPS of the 100 ms samples wholly inside a window
    { w++; st[w] = $1; a = $2 / 1e6; b = $3 / 1e6; sum = k = 0
      for (i = 1; i <= n; i++) if (t[i] - 100 >= a && t[i] <= b) { sum += v[i]; k++ }
      io[w] = k ? sum / k : 0 }
    END {
      srand(1)
      for (i = 2; i < w; i++) {
        if (st[i] != "on" || st[i-1] != "off" || st[i+1] != "off" || !io[i] || !io[i-1] || !io[i+1]) continue
        m++; ON[m] = io[i]; REF[m] = (io[i-1] + io[i+1]) / 2; loss[m] = 100 * (1 - ON[m] / REF[m])
        son += ON[m]; sref += REF[m]
      }
      if (m < 2) { print depth, "too few windows"; exit }
      boot_loss(ON, REF, m, bl); med = median(loss, m)
      printf "%-5s %6d %9.0f %9.0f %7.2f%% %7.2f..%.2f%% %7.2f%% %6.1f..%.1f%%   %s\n", depth, m, sref / m, son / m,
        100 * (1 - son / sref), bl[51], bl[1950], med, loss[int((m + 3) / 4)], loss[int((3 * m + 3) / 4)], load
    }' "$work/iops-${depth}_iops.1.log" "$wins"
}

if [ -n "${ALTERNATE:-}" ]; then
  {
    echo "# fio 4KiB randread on a loop device ($backing backing); the collector detached and attached every $ALTERNATE for ${DURATION:-300} s per iodepth"
    echo "# collector: dpperf profile run --dev $dev -q${PROFILE_FLAGS:+ $PROFILE_FLAGS}${EVENTS:+ --path (events $EVENTS)} --alternate $ALTERNATE"
    echo "# $(uname -r), $(nproc) CPUs, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    printf "%-5s %6s %9s %9s %8s %16s %8s %13s   %s\n" "depth" "pairs" "IOPS off" "IOPS on" "loss" "95% interval" "median" "quartiles" "load at end"
    for depth in $depths; do measure_alternate "$depth"; done
    echo "# pairs: windows with the collector between two without; IOPS off: mean of those neighbours; loss: 1 - (sum on /"
    echo "# sum off) over the pairs, with a 95% bootstrap interval; median and quartiles of the per-pair losses"
  } | tee "$out"
  exit 0
fi

{
  echo "# fio 4KiB randread on a loop device ($backing backing), $rounds pairs of ${win}s windows without/with the collector per iodepth (order alternating)"
  echo "# collector: dpperf profile run --dev $dev -q${PROFILE_FLAGS:+ $PROFILE_FLAGS}${EVENTS:+ --path (events $EVENTS)}"
  echo "# $(uname -r), $(nproc) CPUs, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  printf "%-5s %6s %17s %17s %7s %13s %8s %13s %6s %6s %8s %8s   %s\n" "depth" "pairs" "IOPS off" "IOPS on" "loss" "95% interval" \
    "median" "quartiles" "fio" "fio" "dpperf" "dpperf" "load at end"
  printf "%-5s %6s %17s %17s %7s %13s %8s %13s %6s %6s %8s %8s\n" "" "" "" "" "" "" "loss" "" "off" "on" "µs/req" "cs/1000"
  for depth in $depths; do measure "$depth"; done
  echo "# IOPS: mean ± standard deviation of the windows; loss: 1 - (sum of IOPS on / sum of IOPS off) over the pairs, with"
  echo "# a 95% bootstrap interval; median loss: of the per-pair losses, with their quartiles; fio: its CPU use; dpperf:"
  echo "# its own CPU time (µs per profiled request) and context switches (per 1000 requests) in the windows with the collector"
} | tee "$out"
