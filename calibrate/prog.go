package calibrate

import (
	"encoding/binary"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Registers of every micro-program: R6 holds the context, R7 the packet
// (128 bytes checked), R2 a source operand, R9 a spare base pointer; the
// measured operations write the registers of dests in turn.
var dests = []asm.Register{asm.R0, asm.R1, asm.R3, asm.R4, asm.R5, asm.R8}

// Offsets of the values the prologue leaves in the packet (see packet).
const (
	pktAllOnes = 16 // u64 0xffff_ffff_ffff_ffff
	pktOne     = 24 // u64 1
	pktOneToo  = 32 // u64 1 (equal to pktOne, for taken branches)
	pktThree   = 40 // u64 3
	pktZero    = 48 // u64 0
)

// packet is the input of every run: 128 bytes, an Ethernet/IPv4 frame
// whose bytes 16..47 hold the operands above.
func packet() []byte {
	p := make([]byte, 128)
	copy(p[12:], []byte{0x08, 0x00, 0x45})
	binary.LittleEndian.PutUint64(p[pktAllOnes:], ^uint64(0))
	binary.LittleEndian.PutUint64(p[pktOne:], 1)
	binary.LittleEndian.PutUint64(p[pktOneToo:], 1)
	binary.LittleEndian.PutUint64(p[pktThree:], 3)
	return p
}

// mapDef is a map a micro-program uses, created with its contents.
type mapDef struct {
	name            string
	typ             ebpf.MapType
	key, value, max uint32
	flags           uint32
	contents        []ebpf.MapKV // per-CPU maps: values are []uint64, one per possible CPU
}

// builder assembles one micro-program.
type builder struct {
	insns asm.Instructions
}

func (b *builder) add(ins ...asm.Instruction) { b.insns = append(b.insns, ins...) }

// prologue saves the context, checks 128 bytes of packet and loads the
// operands: R2 = 1, R9 = the packet; every dest = all ones.
func (b *builder) prologue() {
	b.add(
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R7, asm.R6, 0, asm.Word),
		asm.LoadMem(asm.R8, asm.R6, 4, asm.Word),
		asm.Mov.Reg(asm.R9, asm.R7),
		asm.Add.Imm(asm.R9, 128),
		asm.JGT.Reg(asm.R9, asm.R8, "exit"),
		asm.LoadMem(asm.R2, asm.R7, pktOne, asm.DWord),
	)
	for _, d := range dests {
		b.add(asm.LoadMem(d, asm.R7, pktAllOnes, asm.DWord))
	}
}

// zeroStack writes zeros to the stack bytes [fp−n, fp).
func (b *builder) zeroStack(n int) {
	for off := -8; off >= -n; off -= 8 {
		b.add(storeImm64(asm.R10, int16(off), 0))
	}
}

// storeImm64 is *(u64 *)(dst + off) = imm, which asm.StoreImm refuses to
// build although the kernel accepts it.
func storeImm64(dst asm.Register, off int16, imm int32) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(asm.DWord), Dst: dst, Offset: off, Constant: int64(imm)}
}

// epilogue returns XDP_PASS; the prologue's bounds check jumps here.
func (b *builder) epilogue() {
	b.add(
		asm.Mov.Imm(asm.R0, 2).WithSymbol("exit"),
		asm.Return(),
	)
}

// spec is the program of b with the maps it references.
func (b *builder) spec(maps []mapDef) *ebpf.CollectionSpec {
	cs := &ebpf.CollectionSpec{
		Programs: map[string]*ebpf.ProgramSpec{"calib": {
			Name: "calib", Type: ebpf.XDP, License: "GPL", Instructions: b.insns,
		}},
		Maps: map[string]*ebpf.MapSpec{},
	}
	for _, m := range maps {
		cs.Maps[m.name] = &ebpf.MapSpec{
			Name: m.name, Type: m.typ, KeySize: m.key, ValueSize: m.value,
			MaxEntries: m.max, Flags: m.flags, Contents: m.contents,
		}
	}
	return cs
}
