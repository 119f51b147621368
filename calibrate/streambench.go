package calibrate

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/target"
	"github.com/dpperf/dpperf/testrun"
)

// streamRoom is the size of the map streamed inserts fill: a timing
// inserts up to three quarters of it, so that no LRU map evicts.
const streamRoom = 4096

// streamInsertBench measures an insert as a data plane meets it under a
// stream of new flows: every copy updates a key no run used before (a
// counter in an array map, stored in the key's first 8 bytes) into a map
// of streamRoom entries, emptied before every timing. The insert bench of
// outcomeBenches inserts and deletes one key, so its element and bucket
// stay in the cache; here each insert takes a fresh element of the
// preallocated pool and a bucket of a growing table, and costs what the
// programs' new flows cost (measure's streams). It is a second variant of
// the insert outcome (insert_stream), which is priced by the dearer.
func streamInsertBench(k mapKind, ks uint32) *bench {
	mt := target.MapTypeName(k.typ)
	m := mapDef{name: "m", typ: k.typ, key: ks, value: 8, max: streamRoom, flags: k.flags}
	ctr := mapDef{name: "ctr", typ: ebpf.Array, key: 4, value: 8, max: 1}
	setup := func(b *builder) {
		b.zeroStack(64)
		b.add(asm.LoadMapPtr(asm.R1, 0).WithReference("ctr"), asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, -8),
			asm.FnMapLookupElem.Call(), asm.JEq.Imm(asm.R0, 0, "exit"), asm.Mov.Reg(asm.R8, asm.R0))
	}
	return &bench{key: "helpers.map_update_elem." + mt, variant: target.OutcomeInsert + "_stream", group: helperGroup,
		maps: []mapDef{m, ctr}, setup: setup, room: streamRoom * 3 / 4,
		aux: append(append([]string{"memory.map_value.load", "classes.alu64/indep", "memory.map_value.store", "memory.stack.store"},
			updateAux...), lookupAux...),
		copy: func(b *builder, i int) {
			b.add(asm.LoadMem(asm.R1, asm.R8, 0, asm.DWord), asm.Add.Imm(asm.R1, 1), asm.StoreMem(asm.R8, 0, asm.R1, asm.DWord),
				asm.StoreMem(asm.R10, keyOff, asm.R1, asm.DWord))
			updateCopy(b)
		},
		reset: func(c *ebpf.Collection) error {
			if err := testrun.Empty(c.Maps["m"]); err != nil {
				return fmt.Errorf("empty the map: %w", err)
			}
			return nil
		},
	}
}
