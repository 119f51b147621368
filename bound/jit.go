package bound

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/target"
	"github.com/dpperf/dpperf/target/nfp"
)

// Translator prices a program's instructions as the target's JIT compiles
// them (target.Target.JIT), in place of the target's per-class costs.
type Translator interface {
	// Insn prices instruction i of the program.
	Insn(i int) InsnCost
	// PerPacket is what the JIT's own code adds to every packet.
	PerPacket() target.Vec
	// Program counts the target instructions of the whole program.
	Program() int
}

// InsnCost is one BPF instruction as the target executes it.
type InsnCost struct {
	Cost    target.Vec // without any wait for memory
	Latency float64    // > 0: waits for a memory answer of at most this latency
	Memory  bool       // issues a memory command
	Insns   int        // target instructions
	Note    string     // what the JIT cannot translate or only estimates
}

// newTranslator returns the translator t names for g's program, or nil.
func newTranslator(g *cfg.Graph, t *target.Target) Translator {
	switch t.JIT {
	case "nfp":
		return newNFPTranslator(g, t)
	}
	return nil
}

// nfpTranslator adapts package target/nfp: NFP sequences become core
// cycles on the target's blocking component and DRAM engine cycles on its
// component named "dram".
type nfpTranslator struct {
	p          *nfp.Prog
	cores, mem int
}

func newNFPTranslator(g *cfg.Graph, t *target.Target) *nfpTranslator {
	n := len(g.Prog.Insns)
	regions := make([]nfp.Region, n)
	maps := make([]*bpfprog.Map, n)
	seen := make([]bool, n)
	for _, nd := range g.Nodes {
		for _, op := range nd.Ops {
			i := int(op.Insn)
			if op.Kind == cfg.OpHelper {
				if op.Map >= 0 {
					maps[i] = g.Maps[op.Map]
				}
				continue
			}
			r := nfpRegion(op.Region)
			if seen[i] && regions[i] != r {
				r = nfp.Unknown // copies disagree: the dearest
			}
			regions[i], seen[i] = r, true
		}
	}
	// Stack accesses through R10 are known without the graph (dead code
	// included, for the program's instruction count).
	for i, ins := range g.Prog.Insns {
		cls := ins.OpCode.Class()
		if !seen[i] && (cls == asm.LdXClass && ins.Src == asm.R10 || (cls == asm.StClass || cls == asm.StXClass) && ins.Dst == asm.R10) {
			regions[i] = nfp.Stack
		}
	}
	cores := max(t.BlockComponent, 0)
	return &nfpTranslator{p: nfp.Analyze(g.Prog, regions, maps), cores: cores, mem: t.ComponentIndex("dram")}
}

func nfpRegion(r cfg.Region) nfp.Region {
	switch r {
	case cfg.RegionPacket, cfg.RegionPacketEnd:
		return nfp.Packet
	case cfg.RegionStack:
		return nfp.Stack
	case cfg.RegionCtx:
		return nfp.Ctx
	case cfg.RegionMapValue:
		return nfp.MapValue
	}
	return nfp.Unknown
}

func (x *nfpTranslator) Insn(i int) InsnCost {
	s := x.p.Insn(i)
	var v target.Vec
	v[x.cores] = s.Cycles
	if x.mem >= 0 {
		v[x.mem] = float64(s.DRAMReads)*nfp.EngineRead + float64(s.DRAMAdds)*nfp.EngineAdd
	}
	ic := InsnCost{Cost: v, Latency: s.Latency, Memory: s.Command, Insns: s.Insns}
	switch {
	case s.Unsupported != "":
		ic.Note = fmt.Sprintf("nfp JIT (%s): %s; priced as translated", s.From, s.Unsupported)
	case s.Estimated:
		ic.Note = fmt.Sprintf("nfp JIT (%s): runs firmware code whose cost is estimated", s.From)
	}
	return ic
}

func (x *nfpTranslator) PerPacket() target.Vec {
	var v target.Vec
	v[x.cores] = nfp.IntroInsns*nfp.CyclesInsn + nfp.OutroCycles
	return v
}

func (x *nfpTranslator) Program() int { return x.p.Instructions() }
