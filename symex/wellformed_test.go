package symex

import (
	"context"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/smt"
)

// guard is one test of a packet field: the program leaves (returns 2)
// when the field, masked and shifted, compares with imm by op.
type guard struct {
	off   int16
	size  asm.Size
	mask  int32 // 0: none
	shift int32
	op    asm.JumpOp
	imm   int32
}

// guarded is a program that returns 1 for the packets of at least need
// bytes that pass none of guards' exits, and 2 for all others.
func guarded(t *testing.T, need int32, guards []guard) *cfg.Graph {
	t.Helper()
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R0, 2),
		asm.LoadMem(asm.R2, asm.R1, 0, asm.Word), // data
		asm.LoadMem(asm.R3, asm.R1, 4, asm.Word), // data_end
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Imm(asm.R4, need),
		asm.JGT.Reg(asm.R4, asm.R3, ""),
	}
	jumps := []int{len(insns) - 1}
	for _, g := range guards {
		insns = append(insns, asm.LoadMem(asm.R5, asm.R2, g.off, g.size))
		if g.mask != 0 {
			insns = append(insns, asm.And.Imm(asm.R5, g.mask))
		}
		if g.shift != 0 {
			insns = append(insns, asm.RSh.Imm(asm.R5, g.shift))
		}
		insns = append(insns, g.op.Imm(asm.R5, g.imm, ""))
		jumps = append(jumps, len(insns)-1)
	}
	insns = append(insns, asm.Mov.Imm(asm.R0, 1), asm.Return())
	for _, j := range jumps {
		insns[j].Offset = int16(len(insns) - 1 - (j + 1))
	}
	p, err := bpfprog.New("guarded", ebpf.XDP, insns, nil)
	return graphFrom(t, p, err)
}

// Fields as the program loads them: little endian, so a big-endian
// 16-bit value v reads as its bytes swapped.
func swap16(v int32) int32 { return (v&0xff)<<8 | v>>8 }

var (
	isIPv4  = guard{off: 12, size: asm.Half, op: asm.JNE, imm: swap16(0x0800)}
	isIPv6  = guard{off: 12, size: asm.Half, op: asm.JNE, imm: swap16(0x86dd)}
	isVLAN  = guard{off: 12, size: asm.Half, op: asm.JNE, imm: swap16(0x8100)}
	ihlLow  = func(o int16) guard { return guard{off: o, size: asm.Byte, mask: 0xf, op: asm.JGE, imm: 5} }
	ip4Ver4 = guard{off: 14, size: asm.Byte, mask: 0xf0, shift: 4, op: asm.JNE, imm: 4}
)

// TestWellFormed: a path that only a malformed packet can take (ihl < 5,
// a length beyond the packet, a TCP data offset below 5, in a VLAN tag or
// not) is possible with any bytes and impossible with Options.WellFormed;
// a path that well-formed packets take stays possible with it.
func TestWellFormed(t *testing.T) {
	cases := []struct {
		name   string
		need   int32
		guards []guard
		ok     bool // well-formed packets take the path
	}{
		{"ipv4 ihl below 5", 34, []guard{isIPv4, ihlLow(14)}, false},
		{"ipv4 ihl 5 or more", 34, []guard{isIPv4, {off: 14, size: asm.Byte, mask: 0xf, op: asm.JLT, imm: 5}}, true},
		{"ipv4 version 6", 34, []guard{isIPv4, {off: 14, size: asm.Byte, shift: 4, op: asm.JNE, imm: 6}}, false},
		// total length >= 4096 exceeds the largest packet (3520 B)
		{"ipv4 total length beyond the packet", 34, []guard{isIPv4, {off: 16, size: asm.Byte, op: asm.JLT, imm: 0x10}}, false},
		{"ipv4 total length below the header", 34, []guard{isIPv4, ip4Ver4, {off: 16, size: asm.Half, op: asm.JNE, imm: swap16(19)}}, false},
		{"ipv4 total length 40", 34, []guard{isIPv4, {off: 16, size: asm.Half, op: asm.JNE, imm: swap16(40)}}, true},
		{"vlan ipv4 ihl below 5", 38, []guard{isVLAN, {off: 16, size: asm.Half, op: asm.JNE, imm: swap16(0x0800)}, ihlLow(18)}, false},
		{"vlan ipv4 ihl 5", 38, []guard{isVLAN, {off: 16, size: asm.Half, op: asm.JNE, imm: swap16(0x0800)}, {off: 18, size: asm.Byte, op: asm.JNE, imm: 0x45}}, true},
		{"qinq ipv4 ihl below 5", 42, []guard{{off: 12, size: asm.Half, op: asm.JNE, imm: swap16(0x88a8)},
			{off: 16, size: asm.Half, op: asm.JNE, imm: swap16(0x8100)},
			{off: 20, size: asm.Half, op: asm.JNE, imm: swap16(0x0800)}, ihlLow(22)}, false},
		{"ipv6 payload beyond the packet", 54, []guard{isIPv6, {off: 18, size: asm.Byte, op: asm.JLT, imm: 0x10}}, false},
		{"ipv6 version 4", 54, []guard{isIPv6, {off: 14, size: asm.Byte, shift: 4, op: asm.JNE, imm: 4}}, false},
		{"ipv6 udp length 7", 62, []guard{isIPv6, {off: 20, size: asm.Byte, op: asm.JNE, imm: 17}, {off: 58, size: asm.Half, op: asm.JNE, imm: swap16(7)}}, false},
		{"ipv6 udp length 8", 62, []guard{isIPv6, {off: 20, size: asm.Byte, op: asm.JNE, imm: 17}, {off: 58, size: asm.Half, op: asm.JNE, imm: swap16(8)}}, true},
		{"ipv4 tcp data offset below 5", 54, []guard{isIPv4,
			{off: 14, size: asm.Byte, op: asm.JNE, imm: 0x45},
			{off: 23, size: asm.Byte, op: asm.JNE, imm: 6},
			{off: 20, size: asm.Half, mask: 0xff1f, op: asm.JNE, imm: 0}, // fragment offset 0
			{off: 46, size: asm.Byte, shift: 4, op: asm.JGE, imm: 5}}, false},
		{"ipv4 later fragment, tcp data offset below 5", 54, []guard{isIPv4,
			{off: 14, size: asm.Byte, op: asm.JNE, imm: 0x45},
			{off: 23, size: asm.Byte, op: asm.JNE, imm: 6},
			{off: 20, size: asm.Half, mask: 0xff1f, op: asm.JEq, imm: 0},
			{off: 46, size: asm.Byte, shift: 4, op: asm.JGE, imm: 5}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := guarded(t, tc.need, tc.guards)
			for _, wf := range []bool{false, true} {
				c, err := NewChecker(g, Options{MinPacket: 14, WellFormed: wf})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				found := false
				for _, p := range allPaths(t, g, 100) {
					out, err := c.Check(context.Background(), p)
					if err != nil {
						t.Fatal(err)
					}
					if out.Result != smt.Sat {
						continue
					}
					ex, err := c.Example(context.Background())
					if err != nil || ex == nil {
						t.Fatalf("well-formed %v: no example: %v", wf, err)
					}
					if ex.Verdict == 1 {
						found = true
					}
				}
				if want := tc.ok || !wf; found != want {
					t.Errorf("well-formed %v: the guarded path is possible: %v, want %v", wf, found, want)
				}
			}
		})
	}
}
