#!/usr/bin/env bash
# Installs what dpperf's build and tests need and is missing. Safe to run again:
# it only touches the package manager when a tool or file is absent.
set -euo pipefail

need_pkgs=()
have() { command -v "$1" >/dev/null 2>&1; }
want() { need_pkgs+=("$1"); }

have clang || want clang
have llvm-objdump || want llvm
[ -f /usr/include/bpf/bpf_helpers.h ] || want libbpf-dev
[ -f /usr/include/x86_64-linux-gnu/asm/types.h ] || [ -f /usr/include/asm/types.h ] || want linux-libc-dev
have z3 || want z3
[ -d /usr/lib/x86_64-linux-gnu/bpf ] && ls /usr/lib/x86_64-linux-gnu/bpf/xdpfilt_alw_all.o >/dev/null 2>&1 || want libxdp1
[ -f /usr/src/linux-source-6.1.tar.xz ] || want linux-source-6.1
have babeltrace2 || want babeltrace2
have tshark || want tshark
have protoc || want protobuf-compiler
have xz || want xz-utils
have fio || want fio
# Prometheus for the fleet e2e (make test-fleet), which runs its own
# server on a free port: the packaged service, where systemd starts it,
# is not used.
have prometheus || want prometheus
have python3 || want python3 # runs the Python form of performance interfaces (perfiface tests)

if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages (${need_pkgs[*]}); run as root or install them" >&2
    exit 1
  fi
  echo "setup: installing ${need_pkgs[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # tshark asks whether non-root users may capture; answer once, non-interactively.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  apt_opts=(-o DPkg::Lock::Timeout=300 -y -q)
  apt-get -o DPkg::Lock::Timeout=300 update -q >/dev/null || apt-get -o DPkg::Lock::Timeout=300 update -q
  apt-get "${apt_opts[@]}" install --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

# Go tools used by `make test` (lint).
GOBIN=$(go env GOPATH)/bin
if [ ! -x "$GOBIN/staticcheck" ]; then
  echo "setup: installing staticcheck" >&2
  go install honnef.co/go/tools/cmd/staticcheck@latest
fi
