package calibrate

import (
	"encoding/binary"
	"strconv"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/target"
)

// PCV costs (interp/pcv.yaml) are differences of two micro-programs that
// run the same instructions on maps whose contents differ in one PCV:
// (time of the operation at PCV = more − time at PCV = ref) / (more − ref),
// run by run (the reference is the measurement's aux). Before either is
// timed, the interpreter runs it on the same map contents and must report
// the intended PCV on every operation, and the kernel's hash buckets must
// be the model's (check.go).

const (
	zeroSeed   = 1 << 6 // BPF_F_ZERO_SEED: hash seed 0, buckets as interp.HashBucket says
	chainMax   = 256    // max_entries of the chain maps: 256 buckets
	chainExtra = 16     // keys ahead of the looked-up one in the long chain
	lruFull    = 1024   // entries of the full LRU maps
	lruRoom    = 64     // entries of the LRU maps with room
)

// pcvKinds are the map types whose PCVs are measured, with their PCVs.
var pcvKinds = []struct {
	typ   ebpf.MapType
	names []string
}{
	{ebpf.Hash, []string{"traversals"}},
	{ebpf.PerCPUHash, []string{"traversals"}},
	{ebpf.LRUHash, []string{"traversals", "evicted"}},
	{ebpf.LRUCPUHash, []string{"traversals", "evicted"}},
	{ebpf.LPMTrie, []string{"stages"}},
}

// pcvProg is one of the two micro-programs of a PCV cost.
type pcvProg struct {
	variant string
	maps    []mapDef // map "m" is the measured one
	setup   func(b *builder)
	want    int // the PCV every operation on m reports
}

// pcvPair is the reference measurement (key pcv.TYPE.OP) and the PCV
// cost (key pcv.TYPE.PCV), per unit of the PCV. ordered says the kernel's
// hash map m must hold its keys in the model's buckets and chain order.
func pcvPair(typ ebpf.MapType, pcv, op string, ref, more pcvProg, copy func(*builder, int), ncpu int, ordered bool) []*bench {
	mt := target.MapTypeName(typ)
	mk := func(key string, p pcvProg) *bench {
		return &bench{key: key, variant: p.variant, group: helperGroup, maps: p.maps, setup: p.setup, copy: copy,
			pcv: &pcvCheck{maps: p.maps, op: op, pcv: pcv, want: p.want, ncpu: ncpu, ordered: ordered}}
	}
	r := mk("pcv."+mt+"."+op, ref)
	m := mk("pcv."+mt+"."+pcv, more)
	m.ops = more.want - ref.want
	m.aux = []string{r.ID()}
	return []*bench{r, m}
}

// pcvBenches measures every PCV of pcvKinds.
func pcvBenches(ncpu int) []*bench {
	var bs []*bench
	for _, k := range pcvKinds {
		for _, name := range k.names {
			switch name {
			case "traversals":
				bs = append(bs, traversalBenches(k.typ, ncpu)...)
			case "evicted":
				bs = append(bs, evictionBenches(k.typ, ncpu)...)
			case "stages":
				bs = append(bs, stageBenches()...)
			}
		}
	}
	return bs
}

// traversalBenches: lookups of a key (4 zero bytes) that was inserted
// first into its bucket, alone or behind chainExtra keys of the same
// bucket (inserted after it, so ahead of it in the chain: head insertion).
func traversalBenches(typ ebpf.MapType, ncpu int) []*bench {
	keys := chainKeys(chainExtra)
	chain := func(n int) []mapDef {
		m := mapDef{name: "m", typ: typ, key: 4, value: 8, max: chainMax, flags: zeroSeed}
		for _, k := range keys[:n] {
			m.contents = append(m.contents, ebpf.MapKV{Key: k, Value: mapValue(typ, 0, ncpu)})
		}
		return []mapDef{m}
	}
	setup := func(b *builder) { b.zeroStack(128) }
	return pcvPair(typ, "traversals", "lookup",
		pcvProg{variant: "chain1", maps: chain(1), setup: setup, want: 1},
		pcvProg{variant: "chain" + strconv.Itoa(1+chainExtra), maps: chain(1 + chainExtra), setup: setup, want: 1 + chainExtra},
		lookupCopy, ncpu, true)
}

// chainKeys returns the 4-byte key 0 and the first n other 4-byte keys
// (little-endian counters) that fall into its bucket of a map of
// chainMax entries with hash seed 0.
func chainKeys(n int) [][]byte {
	key := make([]byte, 4)
	bucket := interp.HashBucket(key, chainMax, 0)
	keys := [][]byte{key}
	for i := uint32(1); len(keys) <= n; i++ {
		k := binary.LittleEndian.AppendUint32(nil, i)
		if interp.HashBucket(k, chainMax, 0) == bucket {
			keys = append(keys, k)
		}
	}
	return keys
}

// evictionBenches: updates with a fresh key each (a counter in an array
// map, from lruFull + 1 on) into a full LRU map (lruFull 8-byte keys
// 0..lruFull−1), against updates of key 0 in the same map holding only
// lruRoom keys: the same instructions, the key masked with all ones or
// with zero. The reference is an overwrite in a map with room, as the
// helper's own cost is measured: overwrites in a full LRU map cost more
// than either on the kernels we measured (method.md).
func evictionBenches(typ ebpf.MapType, ncpu int) []*bench {
	lru := func(n int) []mapDef {
		m := mapDef{name: "m", typ: typ, key: 8, value: 8, max: lruFull}
		for i := range n {
			m.contents = append(m.contents, ebpf.MapKV{Key: binary.LittleEndian.AppendUint64(nil, uint64(i)), Value: mapValue(typ, 0, ncpu)})
		}
		ctr := mapDef{name: "ctr", typ: ebpf.Array, key: 4, value: 8, max: 1,
			contents: []ebpf.MapKV{{Key: make([]byte, 4), Value: binary.LittleEndian.AppendUint64(nil, lruFull)}}}
		return []mapDef{m, ctr}
	}
	// R8 points at the counter, R9 holds the mask (from the packet, so
	// the verifier cannot tell the two programs apart).
	setup := func(mask int16) func(b *builder) {
		return func(b *builder) {
			b.zeroStack(64)
			b.add(asm.LoadMapPtr(asm.R1, 0).WithReference("ctr"), asm.Mov.Reg(asm.R2, asm.R10), asm.Add.Imm(asm.R2, -8),
				asm.FnMapLookupElem.Call(), asm.JEq.Imm(asm.R0, 0, "exit"), asm.Mov.Reg(asm.R8, asm.R0),
				asm.LoadMem(asm.R9, asm.R7, mask, asm.DWord))
		}
	}
	copy := func(b *builder, i int) {
		b.add(asm.LoadMem(asm.R1, asm.R8, 0, asm.DWord), asm.Add.Imm(asm.R1, 1), asm.StoreMem(asm.R8, 0, asm.R1, asm.DWord),
			asm.And.Reg(asm.R1, asm.R9), asm.StoreMem(asm.R10, keyOff, asm.R1, asm.DWord))
		updateCopy(b)
	}
	return pcvPair(typ, "evicted", "update",
		pcvProg{variant: "existing", maps: lru(lruRoom), setup: setup(pktZero), want: 0},
		pcvProg{variant: "fresh", maps: lru(lruFull), setup: setup(pktAllOnes), want: 1},
		copy, ncpu, false)
}

// stageBenches: lookups of 10.1.2.3/32 in a trie of its /8 and /32
// prefixes (2 nodes visited) and in one of its /8, /10, ..., /32 prefixes
// (13 nested nodes, no intermediate ones).
func stageBenches() []*bench {
	trie := func(plens []uint32) []mapDef {
		return []mapDef{{name: "m", typ: ebpf.LPMTrie, key: 8, value: 8, max: 256, flags: noPrealloc, contents: trieEntries(plens)}}
	}
	var deep []uint32
	for pl := uint32(8); pl <= 32; pl += 2 {
		deep = append(deep, pl)
	}
	setup := keySetup(mapKind{typ: ebpf.LPMTrie})
	return pcvPair(ebpf.LPMTrie, "stages", "lookup",
		pcvProg{variant: "stages2", maps: trie([]uint32{8, 32}), setup: setup, want: 2},
		pcvProg{variant: "stages" + strconv.Itoa(len(deep)), maps: trie(deep), setup: setup, want: len(deep)},
		lookupCopy, 1, false)
}

// trieEntries are prefixes of 10.1.2.3 of the given lengths, each valued
// its length.
func trieEntries(plens []uint32) []ebpf.MapKV {
	var kvs []ebpf.MapKV
	for _, pl := range plens {
		key := binary.LittleEndian.AppendUint32(nil, pl)
		kvs = append(kvs, ebpf.MapKV{Key: append(key, 10, 1, 2, 3), Value: uint64(pl)})
	}
	return kvs
}
