package calibrate

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// atomics are the atomic operations measured per region; the dearest
// prices the region's atomic access.
var atomics = []struct {
	name string
	op   asm.AtomicOp
	full bool
}{{"add", asm.AddAtomic, false}, {"fetch_add", asm.FetchAdd, true}, {"xchg", asm.Xchg, true}, {"cmpxchg", asm.CmpXchg, false}}

// memoryBenches measures loads, stores and atomics per region. Accesses
// are independent (fixed addresses, results in the dests in turn): their
// throughput, as the loads of packet parsers are. The verifier refuses
// atomics on the packet and the context and stores to the context.
func memoryBenches() []*bench {
	var bs []*bench
	slot := func(i int) int16 { return int16(8 * (i % 8)) }
	for _, s := range []struct {
		name string
		size asm.Size
	}{{"u8", asm.Byte}, {"u64", asm.DWord}} {
		bs = append(bs,
			&bench{key: "memory.packet.load", variant: s.name, group: memGroup, full: s.name == "u8",
				copy: func(b *builder, i int) { b.add(asm.LoadMem(dest(i), asm.R7, slot(i), s.size)) }},
			&bench{key: "memory.packet.store", variant: s.name, group: memGroup, full: s.name == "u8",
				copy: func(b *builder, i int) { b.add(asm.StoreMem(asm.R7, 64+slot(i), asm.R2, s.size)) }},
		)
	}
	stack := func(b *builder) { b.zeroStack(64) }
	fp := func(i int) int16 { return -8 - slot(i) }
	bs = append(bs,
		&bench{key: "memory.stack.load", group: memGroup, setup: stack,
			copy: func(b *builder, i int) { b.add(asm.LoadMem(dest(i), asm.R10, fp(i), asm.DWord)) }},
		&bench{key: "memory.stack.store", group: memGroup, setup: stack,
			copy: func(b *builder, i int) { b.add(asm.StoreMem(asm.R10, fp(i), asm.R2, asm.DWord)) }},
	)
	// xdp_md fields: data is one load; rx_queue_index two and
	// ingress_ifindex three dependent loads (rxq, dev, ifindex).
	for _, f := range []struct {
		name string
		off  int16
	}{{"data", 0}, {"ingress_ifindex", 12}, {"rx_queue_index", 16}} {
		bs = append(bs, &bench{key: "memory.ctx.load", variant: f.name, group: memGroup, full: f.name == "rx_queue_index",
			copy: func(b *builder, i int) { b.add(asm.LoadMem(dest(i), asm.R6, f.off, asm.Word)) }})
	}
	// A map value: R9 points into a 64-byte array element.
	value := []mapDef{{name: "value", typ: ebpf.Array, key: 4, value: 64, max: 1}}
	lookup := func(b *builder) {
		b.add(
			storeImm64(asm.R10, -8, 0),
			asm.LoadMapPtr(asm.R1, 0).WithReference("value"),
			asm.Mov.Reg(asm.R2, asm.R10),
			asm.Add.Imm(asm.R2, -8),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "exit"),
			asm.Mov.Reg(asm.R9, asm.R0),
			asm.Mov.Imm(asm.R2, 1),
		)
		for _, d := range dests {
			b.add(asm.Mov.Imm(d, -1))
		}
	}
	bs = append(bs,
		&bench{key: "memory.map_value.load", group: memGroup, maps: value, setup: lookup,
			copy: func(b *builder, i int) { b.add(asm.LoadMem(dest(i), asm.R9, slot(i), asm.DWord)) }},
		&bench{key: "memory.map_value.store", group: memGroup, maps: value, setup: lookup,
			copy: func(b *builder, i int) { b.add(asm.StoreMem(asm.R9, slot(i), asm.R2, asm.DWord)) }},
	)
	// A load whose address is the previous load's result: the stack slot
	// at fp-8 holds its own address (a spilled stack pointer, which the
	// verifier tracks), so every copy waits for the one before. Its
	// latency prices loads on a dependency chain (target.ChainLoad).
	self := func(b *builder) {
		b.add(asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, -8), asm.StoreMem(asm.R10, -8, asm.R1, asm.DWord))
	}
	bs = append(bs, &bench{key: chainLoadKey, variant: "chain", chain: true, group: memGroup, setup: self,
		copy: func(b *builder, i int) { b.add(asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord)) }})
	// A value through a stack slot: add, spill, fill, the add's own
	// latency subtracted (target.ChainStack: what a fill of a slot stored
	// just before adds to a chain).
	bs = append(bs, &bench{key: chainStackKey, variant: "chain", chain: true, group: memGroup, setup: stack,
		aux: []string{"classes.alu64/chain"},
		copy: func(b *builder, i int) {
			b.add(asm.Add.Reg(asm.R1, asm.R2), asm.StoreMem(asm.R10, -8, asm.R1, asm.DWord), asm.LoadMem(asm.R1, asm.R10, -8, asm.DWord))
		}})
	for _, a := range atomics {
		bs = append(bs,
			&bench{key: "memory.stack.atomic", variant: a.name, group: memGroup, setup: stack, full: a.full,
				copy: func(b *builder, i int) { b.add(a.op.Mem(asm.R10, dest(i), asm.DWord, fp(i))) }},
			&bench{key: "memory.map_value.atomic", variant: a.name, group: memGroup, maps: value, setup: lookup, full: a.full,
				copy: func(b *builder, i int) { b.add(a.op.Mem(asm.R9, dest(i), asm.DWord, slot(i))) }},
		)
	}
	return bs
}
