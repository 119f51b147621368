package bound

import (
	"io"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/dpperf/dpperf/target"
)

// WriteProfile writes the cost of r's slowest path as a pprof profile
// (github.com/google/pprof/profile): one sample per instruction the path
// runs (and per branch a jump takes), located at its BPF function, source
// line and instruction index, valued in each component of the target (its
// unit in thousandths: ps, millicycles) and in instructions. The per-packet overhead is
// a sample of its own, in a function named "(per-packet overhead)". `go
// tool pprof -top -lines FILE` then lists the same per-line costs as the
// report; flame graphs show them by function. c must be the costed graph
// r was computed on.
func (c *Costed) WriteProfile(w io.Writer, r *Result) error {
	p := &profile.Profile{DefaultSampleType: c.T.Components[0].Name}
	for _, comp := range c.T.Components {
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: comp.Name, Unit: thousandth(comp.Unit)})
	}
	p.SampleType = append(p.SampleType, &profile.ValueType{Type: "instructions", Unit: "count"})
	if len(r.Paths) == 0 || r.Paths[0].Edges == nil {
		return p.Write(w)
	}
	p.DefaultSampleType = r.Paths[0].Bottleneck
	prog := c.G.Prog
	p.Mapping = []*profile.Mapping{{ID: 1, File: r.Program.File, Limit: uint64(len(prog.Insns)),
		HasFunctions: true, HasFilenames: true, HasLineNumbers: true}}
	b := &profBuilder{p: p, funcs: map[string]*profile.Function{}, locs: map[int]*profile.Location{}}
	sample := func(loc *profile.Location, v target.Vec, insns int64) {
		vals := make([]int64, 0, len(c.T.Components)+1)
		for k := range c.T.Components {
			vals = append(vals, scaled(v[k]))
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: append(vals, insns)})
	}
	overhead := c.walk(r.Paths[0].Edges, func(insn int, loc, text string, v target.Vec) {
		fn := prog.Name
		if insn >= 0 && len(prog.Funcs) > 0 {
			fn = prog.Funcs[prog.FuncOf(insn)].Name
		}
		n := int64(0)
		if insn >= 0 {
			n = 1
		}
		sample(b.location(insn, fn, loc), v, n)
	})
	if overhead != (target.Vec{}) {
		sample(b.location(-2, "(per-packet overhead)", "-"), overhead, 0)
	}
	if err := p.CheckValid(); err != nil {
		return err
	}
	return p.Write(w)
}

// Profile values are integers: costs are written in thousandths of the
// component's unit, and the unit says so (ps for ns, millicycles for
// cycles).
const profileScale = 1000

func thousandth(unit string) string {
	if unit == "ns" {
		return "ps"
	}
	return "milli" + unit
}

func scaled(x float64) int64 { return int64(x*profileScale + 0.5) }

// profBuilder makes one Function per BPF function and source file, and one
// Location per instruction.
type profBuilder struct {
	p     *profile.Profile
	funcs map[string]*profile.Function
	locs  map[int]*profile.Location
}

func (b *profBuilder) location(insn int, fn, loc string) *profile.Location {
	if l := b.locs[insn]; l != nil && insn >= 0 {
		return l
	}
	file, line := loc, int64(0)
	if i := strings.LastIndexByte(loc, ':'); i > 0 {
		if n, err := strconv.ParseInt(loc[i+1:], 10, 64); err == nil {
			file, line = loc[:i], n
		}
	}
	f := b.funcs[fn+"\x00"+file]
	if f == nil {
		f = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: fn, SystemName: fn, Filename: file}
		b.funcs[fn+"\x00"+file] = f
		b.p.Function = append(b.p.Function, f)
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Mapping: b.p.Mapping[0], Line: []profile.Line{{Function: f, Line: line}}}
	if insn >= 0 {
		l.Address = uint64(insn)
		b.locs[insn] = l
	}
	b.p.Location = append(b.p.Location, l)
	return l
}
