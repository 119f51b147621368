#!/usr/bin/env bash
# NVMe over TCP for real: boots Debian's linux-image-6.1 kernel under qemu
# (software emulation), with a small root filesystem built from Debian
# packages (busybox-static, fio, nvme-cli and their libraries, the kernel's
# nvme/nvmet/null_blk modules) in an initramfs. Inside, it exports a
# null_blk namespace over nvmet-tcp on 127.0.0.1, connects with nvme-cli,
# and runs `dpperf profile` (nvme-tcp path, tracefs and BPF collectors on
# the same requests) around fio:
# 4 KiB random reads, 128 KiB writes (R2T path), and 4 KiB reads while
# sixteen local fio jobs on the target saturate the namespace (null_blk
# with four tags and 3 ms completions). Reports are printed to
# the serial console between markers and copied into OUT (default
# examples/profile/nvme-tcp); the comparison runs on the host.
# With --steps FILE the guest runs the shell steps in FILE instead of
# these (after the same setup, with $f, $P, guard and profile defined
# below) and the script stops once their /out files are in OUT.
# Needs root (apt), network access to the Debian mirror the first time.
set -euo pipefail

steps=""
if [ "${1:-}" = --steps ]; then steps=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2; fi
out=${1:-examples/profile/nvme-tcp}
work=${WORK:-build/nvme-tcp}
mkdir -p "$work" "$out"
work=$(cd "$work" && pwd)

. "$(dirname "$0")/nvme-tcp-lib.sh"
nt_tools
nt_kernel "$work"
root=$work/root
# The crc drivers first: t10-pi's helpers look them up when they load, and
# the guest has no modprobe to fetch them on demand.
nt_root "$root" crct10dif_generic crc64_rocksoft_generic null_blk nvmet nvmet-tcp nvme-tcp

nt_init_head 3000000 > "$root/init"
cat >> "$root/init" <<'INIT'
cfg=/sys/kernel/config/nvmet
mkdir $cfg/subsystems/dpperf; echo 1 > $cfg/subsystems/dpperf/attr_allow_any_host
mkdir $cfg/subsystems/dpperf/namespaces/1
echo -n /dev/nullb0 > $cfg/subsystems/dpperf/namespaces/1/device_path
echo 1 > $cfg/subsystems/dpperf/namespaces/1/enable
mkdir $cfg/ports/1
echo 127.0.0.1 > $cfg/ports/1/addr_traddr; echo tcp > $cfg/ports/1/addr_trtype
echo 4420 > $cfg/ports/1/addr_trsvcid; echo ipv4 > $cfg/ports/1/addr_adrfam
ln -s $cfg/subsystems/dpperf $cfg/ports/1/subsystems/dpperf
nvme connect -t tcp -a 127.0.0.1 -s 4420 -n dpperf --hostnqn=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-000000000001 ||
  echo "transport=tcp,traddr=127.0.0.1,trsvcid=4420,nqn=dpperf" > /dev/nvme-fabrics
for i in 1 2 3 4 5 6 7 8 9 10; do [ -b /dev/nvme0n1 ] && break; sleep 1; done
uname -r; ls -l /dev/nvme0n1 /dev/nullb0; ls /sys/class/block
# With native multipath (Debian's default) the requests run on the hidden
# per-controller disk nvme0c0n1, which has a device number but no dev file
# in sysfs: read it from the block_rq_issue event of one direct read.
# Filtering on it keeps the target's own nullb0 requests out of the
# host-side block events.
T=/sys/kernel/tracing
echo 1 > $T/events/block/block_rq_issue/enable; echo > $T/trace
dd if=/dev/nvme0n1 of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null
echo 0 > $T/events/block/block_rq_issue/enable
nvmemaj=$(awk '$1=="nvme0n1"{print $1}' /proc/partitions >/dev/null; stat -c %t /dev/nvme0n1)
dev=$(grep -o "block_rq_issue: $((0x$nvmemaj)),[0-9]*" $T/trace | head -1 | cut -d' ' -f2)
echo > $T/trace
[ -n "$dev" ] || dev=nvme0n1
echo "profiling block events of device $dev"
# Profiled runs read or write a fixed number of requests (--number_ios;
# the runtime only caps a stalled run); the raw traces below run for a
# time (--time_based).
f="--filename=/dev/nvme0n1 --ioengine=libaio --direct=1 --output=/dev/null --eta=never --name=x"
P="dpperf profile run --path nvme-tcp --dev $dev -q"
# guard NAME SECS: a watchdog that ends a step hanging for SECS: it prints
# what the guest was doing (the kernel's last messages, the processes) and
# powers off, so the host reports the failure instead of waiting for its
# own time limit. The step ends with `kill $dog`.
guard() {
  ( sleep "$2"; echo "=====STUCK $1 after $2 s====="; dmesg | tail -40; ps; poweroff -f ) &
  dog=$!
}
# profile NAME FIO-ARGS: both collectors profile the same fio run. The
# tracefs collector (NAME.json) runs until a stop file appears, the BPF
# collector (NAME-bpf.json) around fio.
profile() {
  name=$1; shift; rm -f /tmp/stop
  echo "step $name"; guard "$name" 240
  $P --collector tracefs --json -o /out/$name.json --text /out/$name.txt -- sh -c 'until [ -e /tmp/stop ]; do sleep 0.1; done' &
  tracer=$!
  until ls -d $T/instances/dpperf-* >/dev/null 2>&1; do sleep 0.1; done; sleep 1
  $P --collector bpf --json -o /out/$name-bpf.json --text /out/$name-bpf.txt -- fio $f "$@"
  touch /tmp/stop; wait $tracer
  kill $dog
}
INIT
# The steps: the given ones, or the checks' profiles and traces.
if [ -n "$steps" ]; then cat "$steps"; else cat <<'STEPS'; fi >> "$root/init"
# A fixed number of requests, so the checks' counts do not depend on the
# emulated machine's speed.
profile read4k --rw=randread --bs=4k --iodepth=1 --number_ios=400 --runtime=60
profile write128k --rw=randwrite --bs=128k --iodepth=1 --number_ios=300 --runtime=60
# The local load on the target's device starts first (under emulation
# fio takes a while to get going) and is stopped after the profiled reads.
# Sixteen jobs: a libaio submitter that finds no free tag sleeps in
# io_submit, so one job at any iodepth keeps only one request waiting;
# sixteen keep sixteen waiting for the device's four tags.
fio --filename=/dev/nullb0 --ioengine=libaio --direct=1 --time_based --output=/dev/null --eta=never --name=local --rw=randread --bs=64k --iodepth=4 --numjobs=16 --runtime=300 &
load=$!
sleep 3
profile read4k-contended --rw=randread --bs=4k --iodepth=1 --number_ios=200 --runtime=60
kill $load; wait $load
# Raw trace text of short runs, for offline analysis (dpperf profile analyze).
# The kprobe on nvmet_bdev_execute_rw fetches qid and cid with the path's
# own arguments, so the traces show whether its offsets hold on this
# kernel (TestKprobeArgsOnRunningKernel compares them with nvmet_req_init).
T=/sys/kernel/tracing
echo 8192 > $T/buffer_size_kb
echo mono > $T/trace_clock  # as the collectors: "local" is clamped to jiffies here
args=$(dpperf profile paths nvme-tcp | sed -nE 's/^ +(qid|cid): "(.*)"$/\1=\2/p' | tr '\n' ' ')
echo "p:dpperf_check/nvmet_bdev_execute_rw nvmet_bdev_execute_rw $args" >> $T/kprobe_events
for e in nvme/enable nvmet/enable block/block_rq_issue/enable block/block_rq_complete/enable dpperf_check/enable; do echo 1 > $T/events/$e; done
echo "step traces"; guard traces 120
for w in "randread 4k" "randwrite 128k"; do
  set -- $w
  echo > $T/trace; echo 1 > $T/tracing_on
  fio $f --time_based --rw=$1 --bs=$2 --iodepth=1 --runtime=1
  echo 0 > $T/tracing_on
  head -n 4000 $T/trace > /out/trace-$1-$2.txt
done
kill $dog
# What the BPF collector depends on in this kernel.
{ uname -a; ls -l /sys/kernel/btf | head -20; cat $T/kprobe_events
  for e in nvme/nvme_setup_cmd nvme/nvme_complete_rq nvmet/nvmet_req_init nvmet/nvmet_req_complete block/block_rq_issue block/block_rq_complete; do
    cat $T/events/$e/format; done; } > /out/guest-info.txt 2>&1
STEPS
nt_init_tail >> "$root/init"
nt_initrd "$root" "$work/initrd.gz"

# boot runs the guest once; it fails unless the guest got to the end.
# The kernel's warnings go to the console (loglevel=5: a stall or lockup
# shows with its stack). The guest has one vCPU: with two, enabling a
# tracepoint (the kernel patches its static call with text_poke_bp, which
# waits for every other CPU to answer an IPI) stalled the collector's
# process for good in 3 of 17 boots under software emulation, the other
# vCPU never answering. A guest that does not finish is booted again, up
# to three times, and every failed console is kept.
boot() {
  echo "nvme-tcp: booting $kver under qemu (tcg)" >&2
  timeout 300 qemu-system-x86_64 -accel tcg -m 1024 -smp 1 -nographic -no-reboot \
    -kernel "$work/kernel/boot/vmlinuz-$kver" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 loglevel=5 panic=-1 rdinit=/init" > "$work/console.log" 2>&1 || true
  grep -q "=====DONE=====" "$work/console.log" && return 0
  echo "nvme-tcp: the guest did not finish; its console ends:" >&2
  tr -d '\r' < "$work/console.log" | tail -60 >&2
  return 1
}
for try in 1 2 3; do
  boot && break
  mv "$work/console.log" "$work/console-failed-$try.log"
  [ $try -lt 3 ] || { echo "nvme-tcp: the guest did not finish in 3 boots (consoles in $work)" >&2; exit 1; }
done
nt_extract "$work/console.log" "$out"
[ -z "$steps" ] || exit 0
gzip -9f "$out"/trace-*.txt
mv "$out/guest-info.txt" "$work/"
bin=bin/dpperf; [ -x $bin ] || go build -o $bin ./cmd/dpperf
$bin profile compare "$out/read4k.json" "$out/read4k-contended.json" | tee "$out/compare.txt"
$bin profile compare "$out/read4k-bpf.json" "$out/read4k-contended-bpf.json" > "$out/compare-bpf.txt"
# The two collectors on the same requests: LAD near 1 in every stage.
for w in read4k write128k read4k-contended; do
  $bin profile compare "$out/$w.json" "$out/$w-bpf.json"
done > "$out/bpf-vs-tracefs.txt"
