package interp

import (
	"path/filepath"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/mapstate"
)

// TestXSKLookup: libxdp's xsk_def_xdp_prog_5.3 looks up the socket of its
// receive queue and redirects to it. With an entry for queue 0 the lookup
// returns a socket and the packet is redirected (XDP_REDIRECT, as the
// kernel does with an AF_XDP socket there: testrun's TestXSKSockets);
// without one it passes.
func TestXSKLookup(t *testing.T) {
	p, err := bpfprog.LoadFile(filepath.Join(testobj.LibXDPDir, "xsk_def_xdp_prog_5.3.o"), "")
	if err != nil {
		t.Fatal(err)
	}
	it, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	refcnt := mapstate.Entry{Key: mapstate.Hex{0, 0, 0, 0}, Value: mapstate.Hex{1, 0, 0, 0}}
	for _, c := range []struct {
		sockets []mapstate.Entry
		verdict uint32
	}{
		{nil, 2},
		{[]mapstate.Entry{{Key: mapstate.Hex{0, 0, 0, 0}, Value: mapstate.Hex{7, 0, 0, 0}}}, 4},
		{[]mapstate.Entry{{Key: mapstate.Hex{1, 0, 0, 0}, Value: mapstate.Hex{7, 0, 0, 0}}}, 2},
	} {
		s := &mapstate.State{Maps: map[string]*mapstate.Map{".data": {Entries: []mapstate.Entry{refcnt}}, "xsks_map": {Entries: c.sockets}}}
		maps, err := NewMaps(p, s, MapOptions{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := it.Run(Input{Packet: make([]byte, 60)}, maps)
		if err != nil {
			t.Fatalf("sockets %v: %v", c.sockets, err)
		}
		if res.Verdict != c.verdict {
			t.Errorf("sockets %v: verdict %d, want %d", c.sockets, res.Verdict, c.verdict)
		}
	}
}
