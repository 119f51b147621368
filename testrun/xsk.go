package testrun

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/dpperf/dpperf/mapstate"
)

// AF_XDP sockets for XSK maps. A map of sockets cannot be filled from
// bytes: its values are sockets the kernel holds. Root can create one on
// any device in copy mode, so a program that redirects to the socket of
// its receive queue takes the same path under BPF_PROG_TEST_RUN as on
// that queue (a test run returns the verdict; nothing reaches the socket).

// xskFrames and xskFrameSize size the smallest UMEM a socket binds with.
const (
	xskFrames    = 16
	xskFrameSize = 4096
	xskRing      = 16 // entries of each ring (a power of two)
)

// xsk is one AF_XDP socket with its UMEM.
type xsk struct {
	fd   int
	umem []byte
}

func (x *xsk) close() error {
	err := unix.Close(x.fd)
	if x.umem != nil {
		err = errors.Join(err, unix.Munmap(x.umem))
	}
	return err
}

// openXSK creates an AF_XDP socket bound in copy mode to queue of the
// device ifindex; with share (not nil) it shares share's UMEM on the same
// queue, as a second socket there must.
func openXSK(ifindex, queue uint32, share *xsk) (*xsk, error) {
	fd, err := unix.Socket(unix.AF_XDP, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("AF_XDP socket: %w", err)
	}
	x := &xsk{fd: fd}
	rings := []int{unix.XDP_RX_RING}
	addr := &unix.SockaddrXDP{Flags: unix.XDP_COPY, Ifindex: ifindex, QueueID: queue}
	if share != nil {
		addr.Flags, addr.SharedUmemFD = unix.XDP_SHARED_UMEM, uint32(share.fd)
	} else {
		x.umem, err = unix.Mmap(-1, 0, xskFrames*xskFrameSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("AF_XDP UMEM: %w", err)
		}
		reg := unix.XDPUmemReg{Addr: uint64(uintptr(unsafe.Pointer(&x.umem[0]))), Len: uint64(len(x.umem)), Size: xskFrameSize}
		if err := setsockopt(fd, unix.XDP_UMEM_REG, unsafe.Pointer(&reg), unsafe.Sizeof(reg)); err != nil {
			x.close()
			return nil, fmt.Errorf("AF_XDP UMEM registration: %w", err)
		}
		rings = append(rings, unix.XDP_UMEM_FILL_RING, unix.XDP_UMEM_COMPLETION_RING)
	}
	for _, ring := range rings {
		if err := unix.SetsockoptInt(fd, unix.SOL_XDP, ring, xskRing); err != nil {
			x.close()
			return nil, fmt.Errorf("AF_XDP ring %d: %w", ring, err)
		}
	}
	if err := unix.Bind(fd, addr); err != nil {
		x.close()
		return nil, fmt.Errorf("AF_XDP bind to device %d queue %d: %w", ifindex, queue, err)
	}
	return x, nil
}

func setsockopt(fd, opt int, p unsafe.Pointer, n uintptr) error {
	_, _, errno := unix.Syscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.SOL_XDP, uintptr(opt), uintptr(p), n, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// fillSockets makes the XSK map name hold a socket at each key of es
// and nothing else. The sockets are bound to queue 0 of the loopback
// device, the first with a UMEM and the others sharing it: the lookup and
// bpf_redirect_map find a socket whatever queue it is bound to (the queue
// matters only when a frame is delivered, which a test run does not do).
// A key's socket is kept for the next fill and closed with the runner.
func (r *Runner) fillSockets(name string, m *ebpf.Map, es []mapstate.Entry) error {
	if r.xsks == nil {
		r.xsks = map[string]map[uint32]*xsk{}
	}
	byKey := r.xsks[name]
	if byKey == nil {
		byKey = map[uint32]*xsk{}
		r.xsks[name] = byKey
	}
	want := map[uint32]bool{}
	for _, e := range es {
		want[binary.LittleEndian.Uint32(e.Key)] = true
	}
	for k := range byKey {
		if !want[k] {
			if err := m.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
				return fmt.Errorf("socket of key %d: %w", k, err)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		x := byKey[k]
		if x == nil {
			var share *xsk
			if len(r.sockets) > 0 {
				share = r.sockets[0]
			}
			var err error
			if x, err = openXSK(1, 0, share); err != nil {
				return err
			}
			r.sockets = append(r.sockets, x)
			byKey[k] = x
		}
		if err := m.Update(k, uint32(x.fd), ebpf.UpdateAny); err != nil {
			return fmt.Errorf("socket of key %d: %w", k, err)
		}
	}
	return nil
}
