package testrun_test

import (
	"encoding/binary"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/testrun"
)

// TestStream: a program that inserts its packet's first four bytes into
// a hash map and then moves its head 20 bytes back (as an encapsulation
// does) meets, on every run of a stream, the example packet with the
// counter added at the stream's offset: the map ends up holding exactly
// the keys of the stream, one per run, and the last verdict is the
// program's. A second stream from an emptied map does it again.
func TestStream(t *testing.T) {
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R2, asm.R6, 0, asm.Word),
		asm.LoadMem(asm.R3, asm.R6, 4, asm.Word),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, 4),
		asm.JGT.Reg(asm.R4, asm.R3, "drop"),
		asm.LoadMem(asm.R5, asm.R2, 0, asm.Word),
		asm.StoreMem(asm.RFP, -4, asm.R5, asm.Word),
		asm.StoreImm(asm.RFP, -16, 0, asm.Word),
		asm.StoreImm(asm.RFP, -12, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, 0).WithReference("keys"),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -4),
		asm.Mov.Reg(asm.R3, asm.RFP),
		asm.Add.Imm(asm.R3, -16),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call(),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Imm(asm.R2, -20),
		asm.FnXdpAdjustHead.Call(),
		asm.Mov.Imm(asm.R0, 2),
		asm.Return(),
		asm.Mov.Imm(asm.R0, 1).WithSymbol("drop"),
		asm.Return(),
	}
	maps := map[string]*bpfprog.Map{"keys": {Name: "keys", Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4096}}
	p, err := bpfprog.New("enc", ebpf.XDP, insns, maps)
	if err != nil {
		t.Fatal(err)
	}
	spec := &ebpf.CollectionSpec{
		Programs: map[string]*ebpf.ProgramSpec{"enc": {Name: "enc", Type: ebpf.XDP, Instructions: insns, License: "GPL"}},
		Maps:     map[string]*ebpf.MapSpec{"keys": {Name: "keys", Type: ebpf.Hash, KeySize: 4, ValueSize: 8, MaxEntries: 4096}},
	}
	r, err := testrun.LoadSpec(spec, p, nil, testrun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	packet := make([]byte, 61) // an odd length: the rewrite's tail stores
	for i := range packet {
		packet[i] = byte(0xa0 + i)
	}
	const offset, runs = 2, 1000
	st, err := r.Stream(packet, offset)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	want := map[uint32]bool{}
	orig := binary.BigEndian.Uint16(packet[offset:])
	for k := range runs {
		key := append([]byte(nil), packet[:4]...)
		binary.BigEndian.PutUint16(key[offset:], orig+uint16(k))
		want[binary.LittleEndian.Uint32(key)] = true
	}
	for round := range 2 {
		if err := r.Fill(mapstate.New()); err != nil {
			t.Fatal(err)
		}
		ns, verdict, err := st.Time(runs)
		if err != nil {
			t.Fatal(err)
		}
		if verdict != 2 || ns <= 0 {
			t.Errorf("round %d: verdict %d, %g ns: want XDP_PASS and a time", round, verdict, ns)
		}
		keys, err := r.Keys("keys")
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != runs {
			t.Errorf("round %d: %d keys, want one per run (%d)", round, len(keys), runs)
		}
		for _, k := range keys {
			if !want[binary.LittleEndian.Uint32(k)] {
				t.Errorf("round %d: key %x is no packet of the stream", round, k)
				break
			}
		}
	}
	if _, _, err := st.Time(0); err == nil {
		t.Error("a stream of 0 runs timed")
	}
	if _, err := r.Stream(packet, len(packet)-1); err == nil {
		t.Error("a counter past the packet's end accepted")
	}
}
