package interp

import (
	"encoding/binary"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/interp/inputs"
)

// TestXDPNoinlineSelftest replays prog_tests/xdp_noinline.c: pkt_v4 to VIP
// 0/TCP goes to real 3, whose
// address the program writes at the front (54 bytes out, as the
// selftest checks), and is dropped.
func TestXDPNoinlineSelftest(t *testing.T) {
	p, err := bpfprog.LoadFile(testobj.Built(t, "test_xdp_noinline"), "balancer_ingress_v4")
	if err != nil {
		t.Fatal(err)
	}
	it, maps := setup(t, p, inputs.StartState(p, 1))
	res, err := it.Run(Input{Packet: inputs.SelftestV4()}, maps)
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != 1 || len(res.Packet) != 54 || binary.LittleEndian.Uint32(res.Packet) != 0x1234 {
		t.Fatalf("verdict %d, %d bytes, magic %#x; want 1, 54, 0x1234", res.Verdict, len(res.Packet), binary.LittleEndian.Uint32(res.Packet))
	}
	var lru []Call
	for _, c := range res.Calls {
		if c.Map == "lru_cache" {
			lru = append(lru, c)
		}
	}
	if len(lru) != 1 || lru[0].Op != "lookup" || lru[0].Ret != 0 || len(lru[0].PCV) != 2 {
		t.Errorf("connection table calls %+v, want one missing lookup with its PCVs", lru)
	}
}
