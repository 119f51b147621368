# Sourced by the profile e2e scripts: checks that dpperf is built and that
# we are root, and makes a loop device over a 256 MiB file of random data
# ($loop, $dev), detached with its file on exit. The file is made in
# TMPDIR; LOOP_DIRECT_IO=off reads it through the page cache (tmpfs has
# no direct I/O).
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
sync
loop=$(losetup --find --show --direct-io="${LOOP_DIRECT_IO:-on}" "$work/disk.img")
dev=$(basename "$loop")
