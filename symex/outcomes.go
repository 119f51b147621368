package symex

import (
	"context"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/smt"
)

// Lookup is a map operation on an example's path whose cost depends on
// whether its key is in the map: a lookup (bpf_map_lookup_elem), an update
// (replace or insert) or a delete (hit or miss). Found says the key is
// there, in the example's model. An operation is Unknown unless the path
// fixes it: no input that takes the path finds the map otherwise (a lookup
// whose result the path tests against NULL; an update of the same key
// after it, with no update of the map in between).
type Lookup struct {
	Insn    int
	Found   bool
	Unknown bool
}

// unknownOutcome stands for the term of an operation whose outcome the
// model does not decide, in "; @present INSN unknown".
const unknownOutcome = "unknown"

// noteLookup writes "; @found INSN NULL" for a lookup's result v: the Bool
// that the lookup returned NULL (v.null), which Example evaluates.
func (m *machine) noteLookup(v value) {
	null := "false"
	if v.null != nil {
		null = v.null.s
	}
	m.b.emit("; @found " + strconv.Itoa(m.cur) + " " + null)
}

// notePresence writes "; @present INSN ABSENT" for an update or delete of
// the key at keyPtr in map mp, before it changes the map: ABSENT is the
// Bool that the key is not in the map, as a lookup would find it, or
// "unknown" for a map the executor does not model.
func (m *machine) notePresence(mp, keyPtr value) {
	absent := unknownOutcome
	if mp.reg == regMap && mp.obj >= 0 && mp.obj < len(m.g.Maps) && m.g.Maps[mp.obj] != nil {
		spec := m.g.Maps[mp.obj]
		if spec.Type != ebpf.ArrayOfMaps && spec.Type != ebpf.HashOfMaps {
			if key, err := m.readMem(keyPtr, int(spec.KeySize)); err == nil {
				absent = m.b.not(m.inMap(mp.obj, key)).s
			}
		}
	}
	m.b.emit("; @present " + strconv.Itoa(m.cur) + " " + absent)
}

// inMap is the Bool that key is in map mapIdx in its current version: an
// array holds every index below its size.
func (m *machine) inMap(mapIdx int, key term) term {
	b, spec := m.b, m.g.Maps[mapIdx]
	switch spec.Type {
	case ebpf.Array, ebpf.PerCPUArray:
		return b.cmpBool(asm.JLT, key, konst(key.w, uint64(spec.MaxEntries)))
	}
	has, _ := m.contents(mapIdx)
	return b.defRaw(1, "("+has+" "+key.s+")")
}

// outcomeNote is one "; @found" (lookup) or "; @present" (update, delete)
// comment of the loaded path: the operation's instruction and the Bool
// that its key is absent.
type outcomeNote struct {
	insn   int
	absent string
}

// outcomeNotes lists the loaded path's map operations with an outcome, in
// path order.
func (c *Checker) outcomeNotes() []outcomeNote {
	var out []outcomeNote
	for _, l := range c.levels {
		for _, line := range l.text {
			rest, ok := strings.CutPrefix(line, "; @found ")
			if !ok {
				rest, ok = strings.CutPrefix(line, "; @present ")
			}
			if !ok {
				continue
			}
			f := strings.Fields(rest)
			insn, err := strconv.Atoi(f[0])
			if err != nil || len(f) < 2 {
				continue
			}
			out = append(out, outcomeNote{insn: insn, absent: strings.Join(f[1:], " ")})
		}
	}
	return out
}

// lookupTerms lists the loaded path's map operations with an outcome, in
// path order, with the terms a model's values decide their outcomes by
// (none for an Unknown one).
func (c *Checker) lookupTerms() ([]Lookup, []string) {
	var ls []Lookup
	var terms []string
	for _, n := range c.outcomeNotes() {
		if n.absent == unknownOutcome {
			ls = append(ls, Lookup{Insn: n.insn, Unknown: true})
			continue
		}
		ls = append(ls, Lookup{Insn: n.insn})
		terms = append(terms, n.absent)
	}
	return ls, terms
}

// readLookups sets each known operation's outcome from the values of its
// terms, in order.
func readLookups(ls []Lookup, vals []string) []Lookup {
	i := 0
	for k := range ls {
		if ls[k].Unknown {
			continue
		}
		ls[k].Found = vals[i] == "false"
		i++
	}
	return ls
}

// fixOutcomes leaves the outcome of each of ex's map operations only where
// the loaded path fixes it: the solver, holding the path (and none of the
// example's choices), cannot find the key on the other side of it. Any
// other is made Unknown, which prices it at its dearest outcome: an
// example's model may pick the cheaper one where the path allows both (a
// lookup whose result goes unused). The solver's model is lost.
func (c *Checker) fixOutcomes(ctx context.Context, ex *Example) error {
	notes := c.outcomeNotes()
	if len(notes) != len(ex.Lookups) {
		return nil // the example was made on another path
	}
	for i, n := range notes {
		l := &ex.Lookups[i]
		if l.Unknown {
			continue
		}
		other := "true"
		if !l.Found {
			other = "false"
		}
		res, err := c.checkWith(ctx, "(= "+n.absent+" "+other+")")
		if err != nil {
			return err
		}
		l.Unknown = res != smt.Unsat
	}
	return nil
}

// checkWith checks the loaded path with cond, in a scope of its own,
// within the solver's timeout: one that runs out leaves the outcome
// Unknown, priced at the dearest.
func (c *Checker) checkWith(ctx context.Context, cond string) (smt.Result, error) {
	n := len(c.levels)
	if err := c.solverAt(n); err != nil {
		return smt.Unknown, err
	}
	solver, scopes := c.s, 0
	defer c.popScopes(solver, &scopes)
	if err := c.assume(cond, &scopes); err != nil {
		return smt.Unknown, err
	}
	return c.checkAt(ctx, n, 0)
}
