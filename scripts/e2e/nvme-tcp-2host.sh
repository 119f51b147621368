#!/usr/bin/env bash
# NVMe over TCP across two hosts, for real: two qemu guests (the kernel,
# modules and tools of nvme-tcp-qemu.sh, from nvme-tcp-lib.sh), joined by
# a qemu socket network bound to 127.0.0.1 only; the
# guests talk over it on link-local addresses (target 169.254.0.1,
# initiator 169.254.0.2), so no packet leaves this machine. The target
# exports a null_blk namespace over nvmet-tcp and runs `dpperf profile
# run --serve`; the initiator connects with nvme-cli and runs `dpperf
# profile run --peer` around fio, which fetches the target's events and
# joins them. During the run the host writes a line to both guests'
# second serial ports at once, 10 times, and each guest stamps its
# CLOCK_MONOTONIC: the known offset. Then the reads run again while local
# fio jobs on the target hold the namespace's tags (the contended run);
# then both sides' recordings are stopped with SIGINT, and the initiator
# runs against a wrong token and a port where no target listens. Last,
# the target profiles the same fio over its own 127.0.0.1 (the one-host
# run) for the comparison.
# internal/cmd/twohost checks the result. Artifacts in WORK (default
# build/nvme-tcp-2host), reports in OUT (default WORK/out).
set -euo pipefail

work=${WORK:-build/nvme-tcp-2host}
mkdir -p "$work"
work=$(cd "$work" && pwd)
out=${1:-$work/out}
rm -rf "$out" && mkdir -p "$out"

. "$(dirname "$0")/nvme-tcp-lib.sh"
nt_tools
nt_kernel "$work"
root=$work/root
nt_root "$root" crct10dif_generic crc64_rocksoft_generic null_blk nvmet nvmet-tcp nvme-tcp e1000
CGO_ENABLED=0 go build -o "$root/bin/twohost" ./internal/cmd/twohost
head -c 24 /dev/urandom | base64 > "$root/etc/token"
head -c 24 /dev/urandom | base64 > "$root/etc/wrong-token"

nt_init_head 3000000 > "$root/init"
cat >> "$root/init" <<'INIT'
role=$(sed -n 's/.*role=\([a-z]*\).*/\1/p' /proc/cmdline)
case $role in target) me=169.254.0.1 ;; *) me=169.254.0.2 ;; esac
ip link set eth0 up; ip addr add $me/16 dev eth0
stty -F /dev/ttyS1 raw -echo
twohost stamp /dev/ttyS1 > /out/stamps-$role.txt &
T=/sys/kernel/tracing
guard() {
  ( sleep "$2"; echo "=====STUCK $1 after $2 s====="; dmesg | tail -40; ps; poweroff -f ) &
  dog=$!
}
# leftover ROLE RC: what an interrupted dpperf left behind, for the check.
leftover() {
  { echo "exit $2"; echo "instances $(ls $T/instances | wc -l)"; echo "kprobes $(grep -c . $T/kprobe_events)"
    echo "fio $(for p in $(pidof fio); do grep -q "^State:.Z" /proc/$p/status 2>/dev/null || echo $p; done | wc -l)"; } > /out/interrupt-$1.txt
}
# nvme_dev ADDR: connect to the target at ADDR; prints the device number
# the requests run on (with native multipath the hidden nvme0c0n1, read
# from the block_rq_issue event of one direct read).
nvme_dev() {
  nvme connect -t tcp -a $1 -s 4420 -n dpperf --hostnqn=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-00000000000$2 >/dev/null ||
    echo "transport=tcp,traddr=$1,trsvcid=4420,nqn=dpperf" > /dev/nvme-fabrics
  for i in 1 2 3 4 5 6 7 8 9 10; do [ -b /dev/nvme0n1 ] && break; sleep 1; done
  echo 1 > $T/events/block/block_rq_issue/enable; echo > $T/trace
  dd if=/dev/nvme0n1 of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null
  echo 0 > $T/events/block/block_rq_issue/enable
  grep -o "block_rq_issue: $((0x$(stat -c %t /dev/nvme0n1))),[0-9]*" $T/trace | head -1 | cut -d' ' -f2
  echo > $T/trace
}
f="--filename=/dev/nvme0n1 --ioengine=libaio --direct=1 --output=/dev/null --eta=never --name=x --rw=randread --bs=4k --iodepth=1 --number_ios=1000 --runtime=60"
if [ $role = target ]; then
  cfg=/sys/kernel/config/nvmet
  mkdir $cfg/subsystems/dpperf; echo 1 > $cfg/subsystems/dpperf/attr_allow_any_host
  mkdir $cfg/subsystems/dpperf/namespaces/1
  echo -n /dev/nullb0 > $cfg/subsystems/dpperf/namespaces/1/device_path
  echo 1 > $cfg/subsystems/dpperf/namespaces/1/enable
  for p in 1:169.254.0.1 2:127.0.0.1; do
    mkdir $cfg/ports/${p%%:*}
    echo ${p#*:} > $cfg/ports/${p%%:*}/addr_traddr; echo tcp > $cfg/ports/${p%%:*}/addr_trtype
    echo 4420 > $cfg/ports/${p%%:*}/addr_trsvcid; echo ipv4 > $cfg/ports/${p%%:*}/addr_adrfam
    ln -s $cfg/subsystems/dpperf $cfg/ports/${p%%:*}/subsystems/dpperf
  done
  echo "=====READY target====="
  serve="dpperf profile run --path nvme-tcp --serve 169.254.0.1:7070 --token-file /etc/token --serve-linger 1s --json"
  # Each recording runs until the initiator, done, connects to port 7071;
  # from the second on it first tells the initiator (port 7072) that it
  # records.
  go="until echo go | nc 169.254.0.2 7072; do sleep 1; done"
  guard serve 200
  $serve -o /out/target.json -- nc -l -p 7071 > /dev/null
  kill $dog
  # Contention: sixteen local fio jobs keep sixteen requests waiting for
  # the namespace's four tags while the initiator's reads come in.
  echo "step contended"; guard contended 200
  reads() { read r x < /sys/block/nullb0/stat; echo $r; }
  before=$(reads)
  fio --filename=/dev/nullb0 --ioengine=libaio --direct=1 --time_based --output=/dev/null --eta=never --name=local --rw=randread --bs=64k --iodepth=4 --numjobs=16 --runtime=300 &
  load=$!
  # Under emulation sixteen jobs take seconds to get going: wait until
  # they have read 2000 times (half a second of the four tags' pace).
  until [ $(reads) -gt $((before + 2000)) ]; do sleep 1; done
  $serve -o /out/target-contended.json -- sh -c "$go; exec nc -l -p 7071" > /dev/null
  kill $load; wait $load
  kill $dog
  # Ctrl-C: the recording is interrupted once the initiator's own
  # interrupted run has fetched from it.
  echo "step interrupt"; guard interrupt 200
  $serve -o /out/target-interrupted.json -- sh -c "$go; exec sleep 600" > /dev/null &
  p=$!
  nc -l -p 7071 > /dev/null
  kill -INT $p; wait $p; rc=$?
  leftover target $rc
  kill $dog
  echo "step one-host"; guard one-host 200
  dev=$(nvme_dev 127.0.0.1 2)
  dpperf profile run --path nvme-tcp --collector tracefs --dev ${dev:-nvme0n1} -q --json -o /out/one-host.json -- fio $f
  kill $dog
else
  until ping -c 1 -W 1 169.254.0.1 >/dev/null 2>&1; do sleep 1; done
  sleep 2  # the target's nvmet port and dpperf come up after its READY
  guard join 200
  dev=$(nvme_dev 169.254.0.1 1)
  echo "=====PROFILING====="
  peer="dpperf profile run --path nvme-tcp --dev ${dev:-nvme0n1} --peer 169.254.0.1:7070 --token-file /etc/token --json"
  $peer -o /out/joined.json --text /out/joined.txt -- fio $f
  echo | nc 169.254.0.1 7071 || true
  echo "=====PROFILED====="
  kill $dog
  echo "step contended"; guard contended 200
  nc -l -p 7072 > /dev/null
  $peer -o /out/joined-contended.json --text /out/joined-contended.txt -- fio ${f%% --number_ios=*} --number_ios=300 --runtime=60
  echo | nc 169.254.0.1 7071 || true
  kill $dog
  echo "step interrupt"; guard interrupt 200
  nc -l -p 7072 > /dev/null
  $peer -o /out/joined-interrupted.json -- fio ${f%% --number_ios=*} --number_ios=100000 --runtime=120 &
  p=$!
  sleep 8; kill -INT $p; wait $p; rc=$?
  leftover initiator $rc
  # Faults: a peer that refuses the token, and one that is down.
  $peer --token-file /etc/wrong-token -o /out/joined-wrong-token.json -- fio ${f%% --number_ios=*} --number_ios=100
  $peer --peer 169.254.0.1:7079 -o /out/joined-peer-down.json -- fio ${f%% --number_ios=*} --number_ios=100
  leftover faults $?
  echo | nc 169.254.0.1 7071 || true
  kill $dog
fi
sleep 1
INIT
nt_init_tail >> "$root/init"
nt_initrd "$root" "$work/initrd.gz"

# boot ROLE NETDEV: one guest in the background, one vCPU (see
# nvme-tcp-qemu.sh), its console in WORK/ROLE.log, its second serial port
# a socket the pulses go to. The link is a pair of UDP sockets bound to
# 127.0.0.1, one frame per datagram: a qemu stream socket (listen= and
# connect=) sends each frame as a small write on a TCP connection without
# TCP_NODELAY, and Nagle's algorithm against delayed ACKs held every
# frame about 20 ms (each network stage 21-24 ms, against about 1 ms).
boot() {
  rm -f "$work/$1.sock"
  timeout 400 qemu-system-x86_64 -accel tcg -m 1024 -smp 1 -display none -monitor none -no-reboot \
    -kernel "$work/kernel/boot/vmlinuz-$kver" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 loglevel=5 panic=-1 rdinit=/init role=$1" \
    -serial stdio -serial "unix:$work/$1.sock,server=on,wait=off" \
    -netdev "socket,id=n0,$2" -device "e1000,netdev=n0,mac=52:54:00:00:00:0$3" \
    < /dev/null > "$work/$1.log" 2>&1 &
}
port=$(go run ./internal/cmd/fleetcheck freeport)
port2=$(go run ./internal/cmd/fleetcheck freeport)
[ "$port2" != "$port" ] || port2=$((port + 1))
echo "nvme-tcp-2host: booting two guests ($kver, tcg), link on 127.0.0.1:$port and :$port2 (UDP)" >&2
boot target "udp=127.0.0.1:$port2,localaddr=127.0.0.1:$port" 1; tpid=$!; ipid=""
trap 'kill $tpid $ipid 2>/dev/null || true' EXIT
for i in $(seq 100); do grep -q "=====READY target" "$work/target.log" 2>/dev/null && break; sleep 1; done
boot initiator "udp=127.0.0.1:$port,localaddr=127.0.0.1:$port2" 2; ipid=$!
for i in $(seq 200); do grep -q "=====PROFILING" "$work/initiator.log" 2>/dev/null && break; sleep 1; done
sleep 1
go run ./internal/cmd/twohost pulse 10 "$work/initiator.sock" "$work/target.sock" || echo "nvme-tcp-2host: pulses failed" >&2
wait $ipid || true; wait $tpid || true
for r in target initiator; do
  grep -q "=====DONE=====" "$work/$r.log" || { echo "nvme-tcp-2host: the $r did not finish; its console ends:" >&2; tr -d '\r' < "$work/$r.log" | tail -40 >&2; exit 1; }
  nt_extract "$work/$r.log" "$out"
done
cat "$out/joined.txt"
go run ./internal/cmd/twohost check -joined "$out/joined.json" -one "$out/one-host.json" \
  -contended "$out/joined-contended.json" -interrupted "$out" \
  -initiator-stamps "$out/stamps-initiator.txt" -target-stamps "$out/stamps-target.txt" -o "$out/check.txt"
