#!/usr/bin/env bash
# Whole-program figures of `dpperf bound`: for every example program, every
# XDP program of libxdp1 and both programs of test_xdp_noinline, the time
# to the naive bound and to the slowest satisfiable path (SSP), the paths
# and solver checks the search needed, the paths decided per second, and
# the peak memory. Prints a markdown table; the goal is an SSP in under
# 10 s for each. Then the path-explosion programs (explode_pairs, and
# explode_far, whose contradictory pairs lie 32 branches apart) run for
# EXPLODE each (default 10m, the run whose memory must stay under 1 GiB)
# through scripts/explode-demo.sh: their paths per second and peak memory
# (EXPLODE=0 leaves them out).
#
#   scripts/bench-bound.sh [BIN] [BPF_DIR] [TARGET] [TIME_LIMIT] [METRIC]
set -euo pipefail

bin=${1:-bin/dpperf}
bpf=${2:-build/bpf}
target=${3:-x86-64}
limit=${4:-60s}
metric=${5:-pps}
libxdp=/usr/lib/x86_64-linux-gnu/bpf

progs=()
for o in "$bpf"/*.o; do
	case $(basename "$o") in
	test_xdp_noinline.o) progs+=("$o:balancer_ingress_v4" "$o:balancer_ingress_v6") ;;
	explode_pairs.o | explode_far.o) ;; # no SSP within reach by design: run below
	*) progs+=("$o:") ;;
	esac
done
for o in "$libxdp"/*.o; do
	case $(basename "$o") in
	xdpdump_bpf.o) ;; # tracing programs, not XDP
	xdp-dispatcher.o) progs+=("$o:xdp_dispatcher") ;;
	*) progs+=("$o:") ;;
	esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# seconds and peak KB of one run: "S KB"
timed() {
	/usr/bin/time -f '%e %M' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || {
		echo "failed: $*: $(head -1 "$tmp/err")" >&2
		echo "- -"
		return
	}
	cat "$tmp/time"
}

echo "target $target, metric $metric, time limit $limit, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| program | naive | SSP | result | paths checked | paths/s | refuted (folded, by lemma, by family) | families (twins) | solver checks | max RSS |"
echo "|---|---|---|---|---|---|---|---|---|---|"
slow=0
for p in "${progs[@]}"; do
	obj=${p%%:*} prog=${p#*:}
	args=(--target "$target")
	[ -n "$prog" ] && args+=(--program "$prog")
	name=${prog:-$(basename "$obj" .o)}
	# The naive bound is the slowest path by the packet rate whatever the
	# metric (bound --naive takes no --metric).
	read -r naive _ < <(timed "$bin" bound --naive "${args[@]}" "$obj")
	read -r ssp kb < <(timed "$bin" bound --json --time-limit "$limit" --metric "$metric" "${args[@]}" "$obj")
	if [ "$ssp" = - ]; then
		echo "| $name | $naive s | failed | | | | | | | |"
		continue
	fi
	python3 - "$tmp/out" "$name" "$naive" "$ssp" "$kb" <<'EOF'
import json, sys
out, name, naive, ssp, kb = sys.argv[1:]
d = json.load(open(out))
s = d["search"]
kind = d["kind"]
unknown = s.get("paths_unknown", 0)
result = {"ssp": "SSP", "intermediate": "time limit"}.get(kind, kind)
if kind == "ssp" and unknown:
    result = "SSP possibly satisfiable"
rate = s['paths_checked'] / s['seconds'] if s['seconds'] > 0 else 0
print(f"| {name} | {naive} s | {ssp} s | {result} | {s['paths_checked']} | {rate:.0f} | "
      f"{s['paths_refuted']} ({s.get('refuted_folded', 0)}, {s.get('refuted_by_lemma', 0)}, {s.get('refuted_by_family', 0)}) | "
      f"{s.get('families', 0)} ({s.get('families_twins', 0)}) | {s['solver_checks']} | {int(kb) // 1024} MB |")
EOF
	if python3 -c "import sys; sys.exit(0 if float('$ssp') >= 10 else 1)"; then
		slow=$((slow + 1))
	fi
done
echo
echo "programs over 10 s to their SSP: $slow"
echo
[ "${EXPLODE:-10m}" = 0 ] && exit 0 # EXPLODE=0: the table only
for x in explode_pairs explode_far; do
	echo "path explosion ($x, ${EXPLODE:-10m}):"
	"$(dirname "$0")/explode-demo.sh" "$bin" "$bpf/$x.o" "${EXPLODE:-10m}" "$tmp/$x.jsonl"
	echo
done
