package symex

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/dpperf/dpperf/smt"
)

// Example is an input that drives the program along a satisfiable path:
// the smallest packet the solver finds and the map contents it needs.
type Example struct {
	Packet  []byte
	Ifindex uint32
	RxQueue uint32
	Verdict uint64 // the program's return value on this path
	// Minimal reports whether Packet is the shortest packet that takes the
	// path (false when a solver timeout cut the search short).
	Minimal bool
	// Approx is set when the path's hashes (values the checker took as
	// unconstrained, see Options.Abstract) could not be solved for
	// exactly in time: the packet may then leave the path where it tests
	// them.
	Approx bool
	Maps   []MapEntry
	// Clock is what the path's first clock helper (bpf_ktime_get_ns and
	// the like) returns, when it has one (HasClock): a path may need the
	// time to relate to a timestamp in a map. Later calls return ClockStep
	// more each, where the path allows it.
	Clock    uint64
	HasClock bool
	// Lookups are the path's map lookups in path order, each with the
	// outcome this example's model gives it.
	Lookups []Lookup
}

// MapEntry is what a map must (or must not) hold for the path.
type MapEntry struct {
	Map    string
	Key    []byte // nil for global data
	Value  []byte // the value's initial contents; nil when absent
	Absent bool   // the path needs the key to be missing
	Global bool   // global data (.data, .bss, .rodata)
}

// Example asks the solver for the smallest packet, and the map contents,
// that drive the program along the path of the last Check, which must have
// been satisfiable. Its map operations keep their outcome only where the
// path fixes it (fixOutcomes).
func (c *Checker) Example(ctx context.Context) (*Example, error) {
	ex, err := c.example(ctx)
	if ex == nil || err != nil {
		return ex, err
	}
	return ex, c.fixOutcomes(ctx, ex)
}

func (c *Checker) example(ctx context.Context) (*Example, error) {
	if len(c.levels) == 0 {
		return nil, fmt.Errorf("no path loaded")
	}
	depth := len(c.levels)
	st := c.levels[depth-1].st
	if err := c.solverAt(depth); err != nil {
		return nil, err
	}
	if c.model != depth {
		if res, err := c.checkAt(ctx, depth, 0); err != nil || res != smt.Sat {
			return nil, err
		}
	}
	eqs, clocks := c.abstractions(), c.clocks()
	if len(eqs) > 0 && !c.abstractionsConstrain(st) {
		// No condition of the path, and not the verdict, depends on an
		// abstracted value: the abstract model is an exact example.
		eqs = nil
	}
	if len(eqs) > 0 {
		if ex, err := c.pinnedExample(ctx, st, eqs, clocks); ex != nil || err != nil {
			return ex, err
		}
	}
	solver := c.s
	exact, err := c.exact(ctx, eqs)
	if err != nil {
		return nil, err
	}
	scopes := 0
	if exact {
		scopes++
	}
	defer c.popScopes(solver, &scopes)
	ex := &Example{Minimal: true, Approx: !exact && len(eqs) > 0}
	hi, minimal, _, err := c.leastLength(ctx, st)
	if err != nil {
		return nil, err
	}
	ex.Minimal = minimal
	if err := c.assume(lenIs(hi), &scopes); err != nil {
		return nil, err
	}
	return c.fill(ctx, ex, st, int(hi), clocks, solver, &scopes, false)
}

// pinnedExample finds an exact example of a path whose conditions use
// abstracted values (hashes) the cheap way: the smallest packet with the
// hashes left free, then, with that packet's bytes fixed, the hashes'
// exact definitions, which the solver then evaluates instead of inverting
// them. nil when the exact hashes take that packet off the path (a
// branch on a hash's value): Example then solves for them. The length is
// the least with free hashes, so no exact example can be shorter.
func (c *Checker) pinnedExample(ctx context.Context, st *state, eqs, clocks []string) (*Example, error) {
	solver := c.s
	scopes := 0
	defer c.popScopes(solver, &scopes)
	hi, minimal, kept, err := c.leastLength(ctx, st)
	if err != nil || !minimal {
		return nil, err
	}
	if !kept {
		// The search's checks replaced the model: one at length hi.
		if err := c.assume(lenIs(hi), &scopes); err != nil {
			return nil, err
		}
		if res, err := c.checkAt(ctx, len(c.levels), c.opts.Solver.Timeout); err != nil || res != smt.Sat || c.s != solver {
			return nil, err
		}
	}
	terms := make([]string, hi)
	for i := range terms {
		terms[i] = "(select pkt0 " + konst(32, uint64(i)).s + ")"
	}
	vals, err := c.s.Values(terms)
	if err != nil {
		return nil, c.stalled(err, len(c.levels))
	}
	pins := append(slices.Clone(eqs), lenIs(hi))
	for i, v := range vals {
		pins = append(pins, "(= "+terms[i]+" "+v+")")
	}
	// With the preferences of fill first, which nearly every path meets,
	// so that one check gives the example.
	for _, extra := range [][]string{preferences(clocks), nil} {
		if err := c.assume("(and "+strings.Join(append(pins, extra...), " ")+")", &scopes); err != nil {
			return nil, err
		}
		res, err := c.checkAt(ctx, len(c.levels), c.opts.Solver.Timeout)
		if err != nil || c.s != solver {
			return nil, err
		}
		if res == smt.Sat {
			return c.fill(ctx, &Example{Minimal: true}, st, int(hi), clocks, solver, &scopes, true)
		}
		if err := c.s.Pop(); err != nil {
			return nil, err
		}
		scopes--
	}
	return nil, nil
}

// assume asserts cond in a scope of its own, counted in scopes.
func (c *Checker) assume(cond string, scopes *int) error {
	if err := c.s.Push(); err != nil {
		return err
	}
	*scopes++
	return c.s.Send("(assert " + cond + ")")
}

// lenIs is the condition that the packet is n bytes long.
func lenIs(n uint64) string { return "(= len " + konst(64, n).s + ")" }

// preferences are what fill asks of an example where the path allows it:
// a packet that arrives as BPF_PROG_TEST_RUN delivers it (the loopback
// device, queue 0), so that it can be replayed as it is, and a clock that
// advances as the interpreter's does, so that it can be followed there.
func preferences(clocks []string) []string {
	prefer := []string{"(and (= ifindex #x00000001) (= rxq #x00000000))"}
	if len(clocks) > 1 {
		var eqs []string
		for k, t := range clocks[1:] {
			eqs = append(eqs, fmt.Sprintf("(= %s (bvadd %s %s))", t, clocks[0], konst(64, uint64(k+1)*ClockStep).s))
		}
		prefer = append(prefer, "(and "+strings.Join(eqs, " ")+")")
	}
	return prefer
}

// popScopes pops the scopes an example opened on solver, unless it was
// restarted (a restarted solver holds only the path), and forgets the
// model.
func (c *Checker) popScopes(solver *smt.Solver, scopes *int) {
	for ; *scopes > 0 && c.s == solver; *scopes-- {
		c.s.Pop()
	}
	c.model = -1
}

// fill completes ex from a model of the loaded path at packet length n,
// in scopes the caller opened on solver (popped when it returns); held
// says that the solver holds such a model from its last check.
func (c *Checker) fill(ctx context.Context, ex *Example, st *state, n int, clocks []string, solver *smt.Solver, scopes *int, held bool) (*Example, error) {
	defer c.popScopes(solver, scopes)
	// A preference (see preferences) the solver satisfies stays in a
	// scope of its own, and the model of its check is the example's.
	prefer := preferences(clocks)
	// A model that already satisfies every preference needs no check.
	for i := 0; held && i < len(prefer); i++ {
		ok, err := c.s.Holds(prefer[i])
		if err != nil {
			return nil, c.stalled(err, len(c.levels))
		}
		held = ok
	}
	modelled := held
	for _, p := range prefer {
		if c.s != solver || held {
			break
		}
		if err := c.assume(p, scopes); err != nil {
			return nil, err
		}
		res, err := c.checkAt(ctx, len(c.levels), c.opts.Solver.Timeout)
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if c.s != solver {
			break
		}
		if err == nil && res == smt.Sat {
			modelled = true
			continue
		}
		if err := c.s.Pop(); err != nil {
			return nil, err
		}
		*scopes--
		modelled = false
	}
	if !modelled || c.s != solver {
		res, err := c.checkAt(ctx, len(c.levels), c.opts.Solver.Timeout)
		if err != nil || res != smt.Sat {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, nil // the solver could not rebuild the model in time: no example
		}
	}
	terms := []string{"ifindex", "rxq", "(_ bv0 64)", "(_ bv0 64)"}
	if st.exited {
		terms[2] = st.verdict.s
	}
	if len(clocks) > 0 {
		terms[3], ex.HasClock = clocks[0], true
	}
	for i := 0; i < n; i++ {
		terms = append(terms, "(select pkt0 "+konst(32, uint64(i)).s+")")
	}
	type span struct{ obj, at, n int }
	var spans []span
	for i, o := range st.objs {
		if o.mapIdx < 0 {
			continue
		}
		spans = append(spans, span{i, len(terms), 0})
		terms = append(terms, o.found.s)
		if !o.global {
			terms = append(terms, o.key.s)
		}
		for j := 0; j < o.size; j++ {
			terms = append(terms, "(select "+o.init+" "+konst(32, uint64(j)).s+")")
		}
	}
	lookups, found := c.lookupTerms()
	at := len(terms)
	terms = append(terms, found...)
	vals, err := c.s.Values(terms)
	if err != nil {
		return nil, c.stalled(err, len(c.levels)) // stalled: no example
	}
	ex.Lookups = readLookups(lookups, vals[at:])
	u := func(i int) uint64 {
		v, e := parseUint(vals[i])
		if e != nil && err == nil {
			err = e
		}
		return v
	}
	ex.Ifindex, ex.RxQueue, ex.Verdict, ex.Clock = uint32(u(0)), uint32(u(1)), u(2), u(3)
	ex.Packet = make([]byte, n)
	for i := range ex.Packet {
		ex.Packet[i] = byte(u(4 + i))
	}
	for _, sp := range spans {
		o := st.objs[sp.obj]
		e := MapEntry{Map: c.g.Maps[o.mapIdx].Name, Global: o.global}
		at := sp.at + 1
		if !o.global {
			e.Key, err = bytesLE(vals[at], int(o.key.w)/8)
			if err != nil {
				return nil, err
			}
			at++
		}
		if vals[sp.at] == "false" {
			e.Absent = true
		} else {
			e.Value = make([]byte, o.size)
			for j := range e.Value {
				e.Value[j] = byte(u(at + j))
			}
		}
		ex.Maps = append(ex.Maps, e)
	}
	return ex, err
}

// ErrHashRefuted is Example's answer for a path that is possible only
// while its hashes are taken as unconstrained: with their exact values no
// packet takes it.
var ErrHashRefuted = errors.New("the path is impossible with its hashes computed exactly")

// ClockStep is how far the clock advances between two clock helper calls
// in the examples; replaying one, set interp.Options.ClockStep to it.
const ClockStep = 1000

// clocks names the results of the loaded path's clock helpers, in order.
func (c *Checker) clocks() []string {
	var out []string
	for _, f := range c.comments("call") {
		switch f[1] {
		case "FnKtimeGetNs", "FnKtimeGetBootNs", "FnKtimeGetCoarseNs", "FnKtimeGetTaiNs":
			out = append(out, f[0])
		}
	}
	return out
}

// parseUint reads a solver value: #x…, #b…, (_ bvN w), true or false.
func parseUint(s string) (uint64, error) {
	n, err := parseBig(s)
	if err != nil {
		return 0, err
	}
	return n.Uint64(), nil
}

func parseBig(s string) (*big.Int, error) {
	n := new(big.Int)
	var ok bool
	switch {
	case s == "true":
		return big.NewInt(1), nil
	case s == "false":
		return big.NewInt(0), nil
	case strings.HasPrefix(s, "#x"):
		_, ok = n.SetString(s[2:], 16)
	case strings.HasPrefix(s, "#b"):
		_, ok = n.SetString(s[2:], 2)
	case strings.HasPrefix(s, "(_ bv"):
		f := strings.Fields(strings.Trim(s, "()"))
		if len(f) == 3 {
			_, ok = n.SetString(strings.TrimPrefix(f[1], "bv"), 10)
		}
	}
	if !ok {
		return nil, fmt.Errorf("smt solver: cannot read value %q", s)
	}
	return n, nil
}

// bytesLE turns a bit-vector value built little endian (the lowest
// address in the least significant byte) back into memory order.
func bytesLE(s string, n int) ([]byte, error) {
	v, err := parseBig(s)
	if err != nil {
		return nil, err
	}
	be := v.FillBytes(make([]byte, n))
	for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
		be[i], be[j] = be[j], be[i]
	}
	return be, nil
}

// Hex formats bytes for reports.
func Hex(b []byte) string { return hex.EncodeToString(b) }
