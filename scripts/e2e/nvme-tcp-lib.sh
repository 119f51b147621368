# Shared by nvme-tcp-qemu.sh (one guest) and nvme-tcp-2host.sh (two):
# the tools, Debian's 6.1 kernel, the guest's root filesystem and the
# extraction of files a guest prints on its console. Sourced, not run.

# nt_tools installs what building and booting a guest needs.
nt_tools() {
  local pkgs=()
  have() { command -v "$1" >/dev/null 2>&1; }
  have qemu-system-x86_64 || pkgs+=(qemu-system-x86)
  [ -x /bin/busybox ] && /bin/busybox --list 2>/dev/null | grep -qx insmod || pkgs+=(busybox-static)
  have nvme || pkgs+=(nvme-cli)
  have fio || pkgs+=(fio)
  have cpio || pkgs+=(cpio)
  if [ ${#pkgs[@]} -gt 0 ]; then
    echo "nvme-tcp: installing ${pkgs[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null
  fi
}

# nt_kernel WORK fetches (not installs) the newest Debian 6.1 kernel image
# package into WORK/kernel once; it sets kver and moddir.
nt_kernel() {
  local work=$1 kpkg
  kpkg=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' | awk '{print $1}' | sort -V | tail -1)
  kver=${kpkg#linux-image-}; kver=${kver%-unsigned}
  if [ ! -d "$work/kernel/lib/modules/$kver" ]; then
    echo "nvme-tcp: fetching $kpkg" >&2
    (cd "$work" && apt-get download -q -o APT::Sandbox::User=root "$kpkg" >/dev/null)
    rm -rf "$work/kernel" && dpkg-deb -x "$work"/"${kpkg}"_*.deb "$work/kernel"
  fi
  moddir=$work/kernel/lib/modules/$kver
  # The package leaves modules.dep to the installer's depmod.
  [ -f "$moddir/modules.dep" ] || /bin/busybox depmod -b "$work/kernel" "$kver"
}

# nt_root ROOT MODULE... builds a guest's root filesystem: busybox, dpperf,
# fio and nvme-cli with their libraries, and the modules named with their
# dependencies, in order (deps first), decompressed for busybox insmod, as
# ROOT/lib/mods/NN-name.ko.
nt_root() {
  local root=$1 b lib order m base i=10; shift
  rm -rf "$root" && mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,out,lib/mods}
  cp /bin/busybox "$root/bin/busybox"
  CGO_ENABLED=0 go build -o "$root/bin/dpperf" ./cmd/dpperf
  for b in fio nvme; do
    cp "$(command -v $b)" "$root/bin/"
    ldd "$(command -v $b)" | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | while read -r lib; do
      cp -L --parents "$lib" "$root"
    done
  done
  order=$(awk -v want="$*" '
    { split($0, a, ":"); mod=a[1]; n=split(a[2], d, " "); deps[mod]=""; for (i=1;i<=n;i++) deps[mod]=deps[mod] " " d[i]
      name=mod; sub(/.*\//, "", name); sub(/\.ko.*/, "", name); gsub("_", "-", name); path[name]=mod }
    function visit(m,   i, n, d) { if (seen[m]++) return; n=split(deps[m], d, " "); for (i=1;i<=n;i++) visit(d[i]); print m }
    END { n=split(want, w, " "); for (i=1;i<=n;i++) { k=w[i]; gsub("_", "-", k); visit(path[k]) } }' "$moddir/modules.dep")
  for m in $order; do
    base=$(basename "$m"); base=${base%%.ko*}
    case $m in
      *.xz) xz -dc "$moddir/$m" > "$root/lib/mods/$i-$base.ko" ;;
      *.zst) zstd -qdc "$moddir/$m" > "$root/lib/mods/$i-$base.ko" ;;
      *) cp "$moddir/$m" "$root/lib/mods/$i-$base.ko" ;;
    esac
    i=$((i+1))
  done
}

# nt_init_head NS prints the start of a guest's init: the file systems,
# loopback, the modules (null_blk: one 1 GiB device of four tags whose
# requests complete after NS ns, by timer) and configfs, which nvmet's
# module brings.
nt_init_head() {
  cat <<INIT
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t tracefs nodev /sys/kernel/tracing
ip link set lo up
for m in /lib/mods/*.ko; do
  case \$m in
    *null_blk*) insmod \$m nr_devices=1 gb=1 bs=512 irqmode=2 completion_nsec=$1 hw_queue_depth=4 submit_queues=1 ;;
    *) insmod \$m ;;
  esac
done
mount -t configfs none /sys/kernel/config
INIT
}

# nt_init_tail prints the end of a guest's init: every file of /out
# between markers on the console (nt_extract reads them back), then off.
nt_init_tail() {
  cat <<'INIT'
# Kernel messages stay off the console while the reports are printed.
echo 1 > /proc/sys/kernel/printk
for x in /out/*; do echo; echo "=====BEGIN $(basename $x)====="; cat $x; echo; echo "=====END====="; done
echo; echo "=====DONE====="
poweroff -f
INIT
}

# nt_initrd ROOT OUT packs ROOT (its init made executable) into OUT.
nt_initrd() {
  chmod +x "$1/init"
  (cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) > "$2"
}

# nt_extract CONSOLE OUT writes the files a guest printed between
# =====BEGIN NAME===== and =====END===== into OUT.
nt_extract() {
  tr -d '\r' < "$1" | awk -v out="$2" '
    /^=====BEGIN .*=====$/ { f=$2; sub(/=+$/, "", f); file=out "/" f; printf "" > file; next }
    /^=====END=====$/ { close(file); file=""; next }
    file != "" { print >> file }'
}
