package testrun

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/mapstate"
)

// TestXSKSockets: libxdp's xsk_def_xdp_prog_5.3 redirects a packet to the
// AF_XDP socket of its receive queue when there is one. A state naming
// keys of its xsks_map gets a socket at each (the second sharing the
// first's UMEM); the kernel then returns XDP_REDIRECT for a packet on
// queue 0, and XDP_PASS once a fill leaves the key out. The sockets are
// kept across fills and closed with the runner.
func TestXSKSockets(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("AF_XDP sockets and BPF_PROG_TEST_RUN need root")
	}
	p, err := bpfprog.LoadFile(filepath.Join(testobj.LibXDPDir, "xsk_def_xdp_prog_5.3.o"), "")
	if err != nil {
		t.Fatal(err)
	}
	// The program redirects only once a socket was registered (refcnt in .data).
	refcnt := &mapstate.Map{Entries: []mapstate.Entry{{Key: mapstate.Hex{0, 0, 0, 0}, Value: mapstate.Hex{1, 0, 0, 0}}}}
	key := func(k byte) mapstate.Entry {
		return mapstate.Entry{Key: mapstate.Hex{k, 0, 0, 0}, Value: mapstate.Hex{0, 0, 0, 0}}
	}
	with := &mapstate.State{Maps: map[string]*mapstate.Map{".data": refcnt, "xsks_map": {Entries: []mapstate.Entry{key(0), key(1)}}}}
	without := &mapstate.State{Maps: map[string]*mapstate.Map{".data": refcnt, "xsks_map": {Entries: []mapstate.Entry{key(1)}}}}
	r, err := Load(p, with, Options{})
	if err != nil {
		t.Fatal(err)
	}
	verdict := func() uint32 {
		t.Helper()
		res, err := r.Run(Input{Packet: make([]byte, 60)})
		if err != nil {
			t.Fatal(err)
		}
		return res.Verdict
	}
	for i, c := range []struct {
		s       *mapstate.State
		verdict uint32
	}{{with, 4}, {without, 2}, {with, 4}} {
		if i > 0 {
			if err := r.Fill(c.s); err != nil {
				t.Fatal(err)
			}
		}
		if v := verdict(); v != c.verdict {
			t.Errorf("fill %d: verdict %d, want %d", i, v, c.verdict)
		}
	}
	if len(r.sockets) != 2 {
		t.Errorf("%d sockets after three fills, want the two keys' own", len(r.sockets))
	}
	fd := r.sockets[1].fd
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
		t.Errorf("a socket's descriptor after Close: %v, want EBADF", err)
	}
}
