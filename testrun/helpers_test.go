package testrun_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/interp/inputs"
	"github.com/dpperf/dpperf/testrun"
)

// asmPair loads an assembled XDP program in both the interpreter and the
// kernel.
func asmPair(t *testing.T, insns asm.Instructions) *pair {
	t.Helper()
	p, err := bpfprog.New("asm", ebpf.XDP, insns, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := &ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{
		"asm": {Name: "asm", Type: ebpf.XDP, Instructions: insns, License: "GPL"}}}
	k, err := testrun.LoadSpec(spec, p, nil, testrun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	it, err := interp.New(p, interp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	maps, err := interp.NewMaps(p, nil, interp.MapOptions{NumCPU: k.NumCPU()})
	if err != nil {
		t.Fatal(err)
	}
	return &pair{prog: p, it: it, maps: maps, k: k}
}

// TestHelperEdges compares the packet-moving helpers and csum_diff at and
// beyond their limits with the kernel: return values (the verdict is the
// helper's result) and output packets, metadata included.
func TestHelperEdges(t *testing.T) {
	call := func(fn asm.BuiltinFunc, off int32) asm.Instructions {
		return asm.Instructions{asm.Mov.Reg(asm.R6, asm.R1), asm.Mov.Imm(asm.R2, off), fn.Call()}
	}
	var cases []asm.Instructions
	for _, off := range []int32{-256, -217, -216, -215, -200, -14, 0, 1, 4, 40, 46, 47, 100} {
		cases = append(cases, call(asm.FnXdpAdjustHead, off))
		cases = append(cases, call(asm.FnXdpAdjustTail, off), call(asm.FnXdpAdjustTail, off*16))
	}
	// Some kernels refuse xdp_adjust_meta to XDP programs (6.18.44-fc-v1300:
	// "program of this type cannot use helper"); the metadata cases need it.
	metaOffs := []int32{-256, -252, -216, -40, -36, -32, -28, -8, -6, -4, 0, 4}
	if err := features.HaveProgramHelper(ebpf.XDP, asm.FnXdpAdjustMeta); errors.Is(err, ebpf.ErrNotSupported) {
		t.Logf("this kernel refuses xdp_adjust_meta to XDP programs: its %d cases are left out", len(metaOffs))
		metaOffs = nil
	} else if err != nil {
		t.Fatalf("probe for xdp_adjust_meta: %v", err)
	}
	for _, off := range metaOffs {
		meta := call(asm.FnXdpAdjustMeta, off)
		// then move the head with the metadata in place
		meta = append(meta, asm.Mov.Reg(asm.R1, asm.R6), asm.Mov.Imm(asm.R2, -20), asm.FnXdpAdjustHead.Call())
		cases = append(cases, meta)
	}
	r := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < 20; i++ {
		// csum_diff over packet bytes: from = data[0:n], to = data[n:n+m].
		n, m := int32(r.IntN(5)*4), int32(r.IntN(9)*4)
		cases = append(cases, asm.Instructions{
			asm.LoadMem(asm.R2, asm.R1, 4, asm.Word), asm.LoadMem(asm.R1, asm.R1, 0, asm.Word),
			asm.Mov.Reg(asm.R3, asm.R1), asm.Add.Imm(asm.R3, 64), asm.Mov.Imm(asm.R0, 0),
			skip(asm.JGT.Reg(asm.R3, asm.R2, ""), 6), asm.Mov.Imm(asm.R2, n),
			asm.Mov.Reg(asm.R3, asm.R1), asm.Add.Imm(asm.R3, n), asm.Mov.Imm(asm.R4, m),
			asm.Mov.Imm32(asm.R5, int32(r.Uint32())), asm.FnCsumDiff.Call()})
	}
	pkts := inputs.Packets(4, 12)
	for i, insns := range cases {
		insns = append(insns, asm.Return())
		pr := asmPair(t, insns)
		for j, pkt := range pkts {
			if len(pkt) < 64 {
				continue // csum_diff reads up to 64 bytes
			}
			if _, err := pr.run(pkt); err != nil {
				t.Errorf("case %d (%v), packet %d: %v", i, insns, j, err)
			}
		}
	}
}

func skip(ins asm.Instruction, off int16) asm.Instruction {
	ins.Offset = off
	return ins
}
