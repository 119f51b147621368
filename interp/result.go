package interp

import (
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Region is a kind of memory a pointer can point into.
type Region uint8

const (
	RegionNone     Region = iota // not a pointer
	RegionCtx                    // struct xdp_md
	RegionPacket                 // packet bytes, metadata included
	RegionStack                  // a stack frame
	RegionMapValue               // a map value or global data
	RegionMap                    // a map (argument to map helpers)
	numRegions
)

var regionNames = [...]string{"none", "ctx", "packet", "stack", "map_value", "map"}

func (r Region) String() string { return regionNames[r] }

// Result is what one run did.
type Result struct {
	Verdict uint32 // the program's return value (an XDP action)
	// Packet is the output bytes [data_meta, data_end), as
	// BPF_PROG_TEST_RUN returns them; Meta is how many of them are
	// metadata.
	Packet []byte
	Meta   int
	// Path is every executed instruction in order (indices into
	// bpfprog.Program.Insns); Count is len(Path).
	Path  []int32
	Count int
	// Loads and Stores count memory accesses by region (atomics count as
	// both, helper accesses as neither).
	Loads, Stores [numRegions]int
	// Helpers counts helper calls by helper and map type.
	Helpers map[HelperUse]int
	// Calls has one entry per helper call, with the PCVs of map
	// operations.
	Calls []Call
	// Loops counts how often each back edge was taken.
	Loops []BackEdge
	// Redirect is set when the program called bpf_redirect or
	// bpf_redirect_map successfully.
	Redirect *Redirect
	// Printk holds the output of bpf_trace_printk calls.
	Printk []string
	// Nondeterministic reports that the run read the clock or the random
	// generator, so the kernel may take another path on the same input.
	Nondeterministic bool
	// MapWrites counts stores and updates per map name.
	MapWrites map[string]int
}

// HelperUse is a helper with the type of the map it was given (0 if none).
type HelperUse struct {
	Helper  asm.BuiltinFunc
	MapType ebpf.MapType
}

// Call is one helper call.
type Call struct {
	Insn   int32
	Helper asm.BuiltinFunc
	Map    string // the map argument, if any
	Op     string // map operation (lookup, update, delete, redirect), if any
	Ret    int64  // the value returned; for lookups 1 on a hit, 0 on a miss
	PCV    []PCV  // the PCVs the operation met (see pcv.yaml)
	// Key says whether an update's or delete's key was in the map before
	// it (hash maps and arrays; KeyUnknown for others).
	Key KeyPresence
}

// KeyPresence is whether a map operation found its key.
type KeyPresence int8

const (
	KeyUnknown KeyPresence = iota
	KeyPresent
	KeyAbsent
)

// presence is KeyPresent when ok, else KeyAbsent.
func presence(ok bool) KeyPresence {
	if ok {
		return KeyPresent
	}
	return KeyAbsent
}

// PCV is one observed performance-critical variable.
type PCV struct {
	Name  string
	Value int
}

// BackEdge is a backward jump with the number of times it was taken: a
// loop whose header is To ran Count+1 times per entry.
type BackEdge struct {
	From, To int32
	Count    int
}

// Redirect is where a redirect sends the packet.
type Redirect struct {
	Ifindex uint32 // bpf_redirect target
	Map     string // bpf_redirect_map map, or empty
	Key     uint32
	Flags   uint64
}

func (m *machine) result() *Result {
	r := &Result{
		Verdict:          uint32(m.regs[0]),
		Packet:           slices.Clone(m.buf[m.meta:m.end]),
		Meta:             m.data - m.meta,
		Path:             slices.Clone(m.path),
		Count:            len(m.path),
		Loads:            m.loads,
		Stores:           m.stores,
		Helpers:          map[HelperUse]int{},
		Calls:            slices.Clone(m.calls),
		Redirect:         m.redirect,
		Printk:           slices.Clone(m.printk),
		Nondeterministic: m.nondet,
		MapWrites:        map[string]int{},
	}
	for _, c := range m.calls {
		u := HelperUse{Helper: c.Helper}
		if c.Map != "" {
			u.MapType = m.maps.byName[c.Map].typ
		}
		r.Helpers[u]++
	}
	for e, n := range m.loops {
		r.Loops = append(r.Loops, BackEdge{From: e[0], To: e[1], Count: n})
	}
	slices.SortFunc(r.Loops, func(a, b BackEdge) int { return int(a.From - b.From) })
	for i, n := range m.writes {
		if n > 0 {
			r.MapWrites[m.maps.names[i]] = n
		}
	}
	return r
}
