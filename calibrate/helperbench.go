package calibrate

import (
	"encoding/binary"
	"slices"
	"strconv"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/target"
)

// Stack layout of the helper programs: a key at fp−48 (up to 40 bytes), a
// map value at fp−56, a struct bpf_fib_lookup at fp−128.
const (
	keyOff   = -48
	valueOff = -56
	fibOff   = -128
)

// Per-copy instructions of a map helper's arguments, subtracted.
var (
	lookupAux = []string{"classes.ld_imm64/indep", "classes.alu64/indep", "classes.alu64/indep"}
	updateAux = append(append([]string{}, lookupAux...), "classes.alu64/indep", "classes.alu64/indep", "classes.alu64/indep")
)

// mapKind is a map type the helpers are measured on.
type mapKind struct {
	typ   ebpf.MapType
	keys  []uint32 // key sizes measured (the dearest prices the type)
	flags uint32
}

var mapKinds = []mapKind{
	{typ: ebpf.Array, keys: []uint32{4}},
	{typ: ebpf.PerCPUArray, keys: []uint32{4}},
	{typ: ebpf.Hash, keys: []uint32{4, 16, 40}},
	{typ: ebpf.PerCPUHash, keys: []uint32{4, 16, 40}},
	{typ: ebpf.LRUHash, keys: []uint32{4, 16, 40}},
	{typ: ebpf.LRUCPUHash, keys: []uint32{4, 16, 40}},
	{typ: ebpf.LPMTrie, keys: []uint32{8}, flags: noPrealloc},
}

const noPrealloc = 1 // BPF_F_NO_PREALLOC, which LPM tries require

// mapValue is a value of v for a map of type typ: one per possible CPU
// for per-CPU maps.
func mapValue(typ ebpf.MapType, v uint64, ncpu int) any {
	if mapstate.PerCPU(typ) {
		return slices.Repeat([]uint64{v}, ncpu)
	}
	return v
}

// testMap is a map of kind k with key size ks holding the key the
// programs look up (zeros; for the trie 10.1.2.3/32 under /8, /16, /24)
// among 63 others.
func testMap(k mapKind, ks uint32, ncpu int) mapDef {
	m := mapDef{name: "m", typ: k.typ, key: ks, value: 8, max: 256, flags: k.flags}
	switch k.typ {
	case ebpf.Array, ebpf.PerCPUArray:
		m.contents = []ebpf.MapKV{{Key: uint32(0), Value: mapValue(k.typ, 0, ncpu)}}
	case ebpf.LPMTrie:
		m.contents = trieEntries([]uint32{8, 16, 24, 32})
	default:
		for i := range 64 {
			key := make([]byte, ks)
			binary.LittleEndian.PutUint32(key, uint32(i)*2654435761)
			m.contents = append(m.contents, ebpf.MapKV{Key: key, Value: mapValue(k.typ, uint64(i), ncpu)})
		}
	}
	return m
}

// keySetup writes the looked-up key on the stack.
func keySetup(k mapKind) func(b *builder) {
	return func(b *builder) {
		b.zeroStack(128)
		if k.typ == ebpf.LPMTrie {
			b.add(asm.StoreImm(asm.R10, keyOff, 32, asm.Word),
				asm.StoreImm(asm.R10, keyOff+4, 0x0302010a, asm.Word))
		}
	}
}

// absentKeySetup writes a key the test map does not hold (its first word
// is 1; no key of testMap has that word).
func absentKeySetup(b *builder) {
	b.zeroStack(128)
	b.add(asm.StoreImm(asm.R10, keyOff, 1, asm.Word))
}

func deleteCopy(b *builder) {
	mapArgs(b)
	b.add(asm.FnMapDeleteElem.Call())
}

// outcomeBenches measures the outcomes of hash-map operations other than
// a hit, with the largest key: a lookup that misses, a delete that
// misses, and an insert. An insert cannot be repeated alone, so it runs
// as an insert and a delete of the same absent key, and the delete's cost
// is taken as that of a delete that misses; a delete that finds its key
// does the missing one's work and more, so the insert's figure is an
// upper bound. Each is a variant of the operation's cost, which is priced
// by its dearest variant.
func outcomeBenches(k mapKind, maps []mapDef) []*bench {
	mt := target.MapTypeName(k.typ)
	delMiss := &bench{key: "helpers.map_delete_elem." + mt, variant: "miss", group: helperGroup,
		maps: maps, setup: absentKeySetup, aux: lookupAux,
		copy: func(b *builder, i int) { deleteCopy(b) }}
	return []*bench{
		{key: "helpers.map_lookup_elem." + mt, variant: "miss", group: helperGroup,
			maps: maps, setup: absentKeySetup, aux: lookupAux, copy: lookupCopy},
		delMiss,
		{key: "helpers.map_update_elem." + mt, variant: "insert", group: helperGroup,
			maps: maps, setup: absentKeySetup, aux: append(append([]string{delMiss.ID()}, updateAux...), lookupAux...),
			copy: func(b *builder, i int) {
				updateCopy(b)
				deleteCopy(b)
			}},
	}
}

func mapArgs(b *builder) {
	b.add(asm.LoadMapPtr(asm.R1, 0).WithReference("m"),
		asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, keyOff))
}

func lookupCopy(b *builder, i int) {
	mapArgs(b)
	b.add(asm.FnMapLookupElem.Call())
}

func updateCopy(b *builder) {
	mapArgs(b)
	b.add(asm.Mov.Reg(asm.R3, asm.R10), asm.Add.Imm(asm.R3, valueOff), asm.Mov.Imm(asm.R4, 0),
		asm.FnMapUpdateElem.Call())
}

// mapBenches measures lookup, update and delete on every map kind: a
// lookup that finds its key (hash maps: 4, 16 and 40-byte keys), an
// update of an existing key and a delete (both with the largest key),
// (paired with the update that puts the key back, whose cost is
// subtracted), and on hash maps the other outcomes (outcomeBenches).
func mapBenches(ncpu int) []*bench {
	var bs []*bench
	for _, k := range mapKinds {
		mt := target.MapTypeName(k.typ)
		for _, ks := range k.keys {
			variant := ""
			if len(k.keys) > 1 {
				variant = "key" + strconv.Itoa(int(ks))
			}
			maps := []mapDef{testMap(k, ks, ncpu)}
			bs = append(bs, &bench{key: "helpers.map_lookup_elem." + mt, variant: variant, group: helperGroup,
				maps: maps, full: ks != k.keys[len(k.keys)-1], setup: keySetup(k), aux: lookupAux,
				copy: lookupCopy})
			if ks != k.keys[len(k.keys)-1] {
				continue // updates and deletes with the largest key only
			}
			update := &bench{key: "helpers.map_update_elem." + mt, variant: variant, group: helperGroup,
				maps: maps, setup: keySetup(k), aux: updateAux,
				copy: func(b *builder, i int) { updateCopy(b) }}
			bs = append(bs, update)
			if k.typ == ebpf.Array || k.typ == ebpf.PerCPUArray {
				continue // arrays cannot delete
			}
			bs = append(bs, &bench{key: "helpers.map_delete_elem." + mt, variant: variant, group: helperGroup,
				maps: maps, setup: keySetup(k), aux: append(append([]string{update.ID()}, lookupAux...), updateAux...),
				copy: func(b *builder, i int) {
					updateCopy(b)
					deleteCopy(b)
				}})
			if k.typ != ebpf.LPMTrie {
				bs = append(bs, outcomeBenches(k, maps)...)
				bs = append(bs, streamInsertBench(k, ks))
			}
		}
	}
	return bs
}

// helperBenches measures the helpers without a map argument (and
// redirect_map, perf_event_output on their maps). Helpers that move the
// packet's head, tail or metadata run in pairs that undo each other.
func helperBenches() []*bench {
	alu := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "classes.alu64/indep"
		}
		return out
	}
	plain := func(fn asm.BuiltinFunc) *bench {
		return &bench{key: "helpers." + target.HelperName(fn), group: helperGroup,
			copy: func(b *builder, i int) { b.add(fn.Call()) }}
	}
	pair := func(fn asm.BuiltinFunc, delta int32) *bench {
		return &bench{key: "helpers." + target.HelperName(fn), group: helperGroup, ops: 2, aux: alu(4),
			copy: func(b *builder, i int) {
				b.add(asm.Mov.Reg(asm.R1, asm.R6), asm.Mov.Imm(asm.R2, -delta), fn.Call(),
					asm.Mov.Reg(asm.R1, asm.R6), asm.Mov.Imm(asm.R2, delta), fn.Call())
			}}
	}
	bs := []*bench{
		plain(asm.FnKtimeGetNs), plain(asm.FnGetPrandomU32), plain(asm.FnGetSmpProcessorId),
		pair(asm.FnXdpAdjustHead, 16), pair(asm.FnXdpAdjustTail, 16), pair(asm.FnXdpAdjustMeta, 8),
		{key: "helpers.redirect", group: helperGroup, aux: alu(2),
			copy: func(b *builder, i int) { b.add(asm.Mov.Imm(asm.R1, 1), asm.Mov.Imm(asm.R2, 0), asm.FnRedirect.Call()) }},
		// A device map whose one entry is the loopback device.
		{key: "helpers.redirect_map", group: helperGroup, aux: append(alu(2), "classes.ld_imm64/indep"),
			maps: []mapDef{{name: "dev", typ: ebpf.DevMap, key: 4, value: 4, max: 1,
				contents: []ebpf.MapKV{{Key: uint32(0), Value: uint32(1)}}}},
			copy: func(b *builder, i int) {
				b.add(asm.LoadMapPtr(asm.R1, 0).WithReference("dev"), asm.Mov.Imm(asm.R2, 0), asm.Mov.Imm(asm.R3, 0),
					asm.FnRedirectMap.Call())
			}},
		// Lookups in the maps of sockets and devices. The kernel inlines
		// the socket map's (a bounds check and a load), so an empty one,
		// whose lookups miss, prices a hit too.
		{key: "helpers.map_lookup_elem.xskmap", group: helperGroup, aux: lookupAux,
			maps:  []mapDef{{name: "m", typ: ebpf.XSKMap, key: 4, value: 4, max: 64}},
			setup: func(b *builder) { b.zeroStack(128) }, copy: lookupCopy},
		{key: "helpers.map_lookup_elem.devmap", group: helperGroup, aux: lookupAux,
			maps: []mapDef{{name: "m", typ: ebpf.DevMap, key: 4, value: 4, max: 64,
				contents: []ebpf.MapKV{{Key: uint32(0), Value: uint32(1)}}}},
			setup: func(b *builder) { b.zeroStack(128) }, copy: lookupCopy},
		// perf_event_output with no event open on the CPU, as under
		// BPF_PROG_TEST_RUN: the array lookup and the error path.
		{key: "helpers.perf_event_output", group: helperGroup,
			aux:   append(alu(4), "classes.ld_imm64/indep", "classes.alu32/indep"),
			maps:  []mapDef{{name: "events", typ: ebpf.PerfEventArray, key: 4, value: 4}},
			setup: func(b *builder) { b.zeroStack(8) },
			copy: func(b *builder, i int) {
				b.add(asm.Mov.Reg(asm.R1, asm.R6), asm.LoadMapPtr(asm.R2, 0).WithReference("events"),
					asm.Mov.Imm32(asm.R3, -1), // BPF_F_CURRENT_CPU
					asm.Mov.Reg(asm.R4, asm.R10), asm.Add.Imm(asm.R4, -8), asm.Mov.Imm(asm.R5, 8),
					asm.FnPerfEventOutput.Call())
			}},
	}
	// csum_diff of 4 bytes against 4 (an address rewrite) and of 20
	// against 20 (an IPv4 header).
	for _, n := range []int32{4, 20} {
		bs = append(bs, &bench{key: "helpers.csum_diff", variant: strconv.Itoa(int(n)) + "+" + strconv.Itoa(int(n)),
			group: helperGroup, full: n == 4, aux: alu(7), setup: func(b *builder) { b.zeroStack(64) },
			copy: func(b *builder, i int) {
				b.add(asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, -64), asm.Mov.Imm(asm.R2, n),
					asm.Mov.Reg(asm.R3, asm.R10), asm.Add.Imm(asm.R3, -32), asm.Mov.Imm(asm.R4, n),
					asm.Mov.Imm(asm.R5, 0), asm.FnCsumDiff.Call())
			}})
	}
	// fib_lookup as an output lookup (BPF_FIB_LOOKUP_OUTPUT, so the
	// forwarding setting of the input device does not end it early) of
	// a local address and of an address behind the default route.
	for _, dst := range []struct {
		name string
		addr int32
	}{{"local", 0x0100007f}, {"remote", 0x08080808}} {
		bs = append(bs, &bench{key: "helpers.fib_lookup", variant: dst.name, group: helperGroup, aux: alu(5), full: dst.name == "local",
			setup: func(b *builder) {
				b.zeroStack(128)
				b.add(asm.StoreImm(asm.R10, fibOff, 2, asm.Byte), // AF_INET
					asm.StoreImm(asm.R10, fibOff+8, 1, asm.Word), // ifindex
					asm.StoreImm(asm.R10, fibOff+32, int64(dst.addr), asm.Word))
			},
			copy: func(b *builder, i int) {
				b.add(asm.Mov.Reg(asm.R1, asm.R6), asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, fibOff),
					asm.Mov.Imm(asm.R3, 64), asm.Mov.Imm(asm.R4, 2), asm.FnFibLookup.Call())
			}})
	}
	return bs
}
