package symex

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/dpperf/dpperf/smt"
)

// Witnesses: a satisfying assignment of a path prefix kept in Go, so that
// it outlives the solver's model (which a pop or the next check discards)
// and can be edited. A witness holds the values of the free terms the
// prefix reaches: declared constants (the packet, its length, values taken
// as unconstrained), and uninterpreted functions at argument values (a
// map's contents). Everything defined is evaluated from its definition.
//
// A witness decides a longer prefix without the solver when the new
// levels' assertions hold in it; when one does not, repair (repair.go)
// edits free terms to make it hold and the whole prefix is evaluated
// again. Either way the prefix is proven satisfiable: the witness, with
// every definition evaluated, is a model of its assertions (the solver's
// own, sent at its start, included). Nothing is proven when they do not
// hold: the solver decides.

// witness is a satisfying assignment of the first len(path) levels.
type witness struct {
	path []int32
	free map[string]smt.Value // by term text: "pkt0", "a12", "(has0_0 #x...)"
	// vals[i] holds the values of level i's defined names evaluated in
	// the witness, so that a longer prefix evaluates only its new levels.
	vals []map[string]smt.Value
}

// leveled is a defined name's value and the level that defines it.
type leveled struct {
	v     smt.Value
	level int
}

// maxRepairRounds bounds the edits tried on one prefix: each round makes
// one failing assertion hold and evaluates the prefix again.
const maxRepairRounds = 4

// witnessEnv is the smt.Env of an evaluation of the first n levels in a
// witness, with edits over it; the free terms it meets for the first time
// come from ask (the solver's model, when it holds one) or take a fixed
// value of their sort.
type witnessEnv struct {
	c *Checker
	n int
	w *witness
	// cached is how many levels' values in w.vals hold for this
	// evaluation (none once an edit is made).
	cached int
	edits  map[string]smt.Value
	undo   []undoEdit           // how to take the edits back, oldest first
	added  map[string]smt.Value // free terms met that w does not hold
	vals   map[string]leveled   // defined names evaluated
	ask    func(term string, args []smt.Value, name string) (smt.Value, error)
}

// witnessEnv returns the checker's evaluation environment, emptied, for
// the first n levels in w, of which the first cached have their values
// in w.vals.
func (c *Checker) witnessEnv(w *witness, n, cached int) *witnessEnv {
	e := c.wenv
	if e == nil {
		e = &witnessEnv{c: c, edits: map[string]smt.Value{}, added: map[string]smt.Value{}, vals: map[string]leveled{}}
		c.wenv = e
	}
	clear(e.edits)
	e.undo = e.undo[:0]
	clear(e.added)
	clear(e.vals)
	e.n, e.w, e.cached, e.ask = n, w, min(cached, len(w.vals)), nil
	return e
}

// def finds the level (and its definition or declaration) of name among
// the first e.n levels, or nil for a name the solver holds from its start.
func (e *witnessEnv) def(name string) (int, *levelDef) {
	switch name {
	case "len", "ifindex", "rxq":
		return -1, nil
	}
	if _, ok := counterOf(name); ok {
		return e.c.defOf(name, e.n)
	}
	for i := range e.n {
		if d := e.c.index(i)[name]; d != nil {
			return i, d
		}
	}
	return -1, nil
}

// edit sets a free term's value; what was evaluated from it is forgotten.
func (e *witnessEnv) edit(term string, v smt.Value) {
	if v.IsArray() && v.Stores() > maxWitnessStores {
		v = smt.Compact(v)
	}
	prev, had := e.edits[term]
	e.undo = append(e.undo, undoEdit{term, prev, had})
	e.edits[term] = v
	clear(e.vals)
	e.cached = 0
}

// undoEdit is an edit's term and what it held before.
type undoEdit struct {
	term string
	prev smt.Value
	had  bool
}

// rollback takes back the edits made since the undo log held mark.
func (e *witnessEnv) rollback(mark int) {
	if len(e.undo) == mark {
		return
	}
	for i := len(e.undo) - 1; i >= mark; i-- {
		u := e.undo[i]
		if u.had {
			e.edits[u.term] = u.prev
		} else {
			delete(e.edits, u.term)
		}
	}
	e.undo = e.undo[:mark]
	clear(e.vals)
	e.cached = 0
}

// maxWitnessTerms bounds the free terms a witness holds.
const maxWitnessTerms = 1 << 14

// maxWitnessStores is the chain of stores an edited array may grow to
// before it is compacted (one store per index).
const maxWitnessStores = 64

func (e *witnessEnv) Symbol(name string) (smt.Value, error) {
	if l, ok := e.vals[name]; ok {
		return l.v, nil
	}
	i, d := e.def(name)
	if d != nil && d.expr != "" {
		if i < e.cached {
			if v, ok := e.w.vals[i][name]; ok {
				return v, nil
			}
		}
		x, err := d.expression()
		if err != nil {
			return smt.Value{}, err
		}
		v, err := smt.Eval(x, e)
		if err != nil {
			return v, err
		}
		e.vals[name] = leveled{v, i}
		return v, nil
	}
	if d != nil && d.fun {
		return smt.Value{}, errPendingFunction
	}
	sort := ""
	if d != nil {
		sort = d.sort
	}
	return e.free(name, nil, name, func() (smt.Value, error) { return e.c.zeroOfSymbol(name, sort) })
}

func (e *witnessEnv) Apply(name string, args []smt.Value) (smt.Value, error) {
	var b strings.Builder
	b.WriteString("(" + name)
	for _, a := range args {
		if a.IsArray() {
			return smt.Value{}, smt.ErrUnsupported
		}
		b.WriteString(" " + a.String())
	}
	b.WriteString(")")
	return e.free(b.String(), args, name, func() (smt.Value, error) { return zeroOfApp(name) })
}

// free returns a free term's value: edited, held, asked or fixed.
func (e *witnessEnv) free(term string, args []smt.Value, name string, zero func() (smt.Value, error)) (smt.Value, error) {
	if v, ok := e.edits[term]; ok {
		return v, nil
	}
	if v, ok := e.w.free[term]; ok {
		return v, nil
	}
	if v, ok := e.added[term]; ok {
		return v, nil
	}
	var v smt.Value
	var err error
	if e.ask != nil {
		v, err = e.ask(term, args, name)
	} else {
		v, err = zero()
	}
	if err != nil {
		return v, err
	}
	e.added[term] = v
	return v, nil
}

// zeroOfSymbol is the value a free constant takes in a witness that does
// not hold it: the packet's shortest length for len, else zero (an array
// of zeros).
func (c *Checker) zeroOfSymbol(name, sort string) (smt.Value, error) {
	switch name {
	case "pkt0":
		sort = arraySort
	case "len":
		return smt.BV(64, uint64(c.opts.MinPacket)), nil
	case "ifindex", "rxq":
		sort = "(_ BitVec 32)"
	}
	v, ok := smt.SortZero(sort)
	if !ok {
		return v, smt.ErrUnsupported
	}
	return v, nil
}

// zeroOfApp is the value of a map's contents at a key a witness does not
// hold: absent, and zeros.
func zeroOfApp(name string) (smt.Value, error) {
	switch {
	case strings.HasPrefix(name, "has"):
		return smt.Bool(false), nil
	case strings.HasPrefix(name, "val"):
		v, _ := smt.SortZero(arraySort)
		return v, nil
	}
	return smt.Value{}, smt.ErrUnsupported
}

// assertionsOf returns level i's assertions, parsed on first use.
func (c *Checker) assertionsOf(i int) ([]*smt.Expr, error) {
	l := &c.levels[i]
	if l.assertions == nil {
		var as []*smt.Expr
		for _, line := range l.text {
			if strings.HasPrefix(line, "(assert ") {
				e, err := smt.ParseExpr(line[len("(assert ") : len(line)-1])
				if err != nil {
					return nil, err
				}
				as = append(as, e)
			}
		}
		l.assertions = &as
	}
	return *l.assertions, nil
}

// firstFalse evaluates the solver's own assertions (with base) and those
// of levels from..e.n in e, and returns the first that does not hold, or
// nil.
func (c *Checker) firstFalse(e *witnessEnv, base bool, from int) (*smt.Expr, error) {
	holds := func(a *smt.Expr) (bool, error) {
		v, err := smt.Eval(a, e)
		return v.True(), err
	}
	if base {
		for _, a := range c.base {
			if ok, err := holds(a); err != nil || !ok {
				return a, err
			}
		}
	}
	for i := from; i < e.n; i++ {
		as, err := c.assertionsOf(i)
		if err != nil {
			return nil, err
		}
		for _, a := range as {
			if ok, err := holds(a); err != nil || !ok {
				return a, err
			}
		}
	}
	return nil, nil
}

// snapshot turns the solver's model of the first c.model levels into the
// witness, before a pop or a check discards it: the prefix is evaluated
// with the solver's values of the free terms it reaches. A model the
// evaluator cannot read leaves no witness.
func (c *Checker) snapshot() {
	n := c.model
	if n <= 0 || c.inSolver != n || c.wit != nil && slices.Equal(c.wit.path, c.path[:n]) {
		return
	}
	mc := c.modelCache()
	w := &witness{path: slices.Clone(c.path[:n]), free: map[string]smt.Value{}}
	e := c.witnessEnv(w, n, 0)
	e.ask = func(term string, args []smt.Value, name string) (smt.Value, error) {
		if args != nil {
			return mc.m.Apply(name, args)
		}
		return mc.m.Symbol(term)
	}
	bad, err := c.firstFalse(e, true, 0)
	if err != nil || bad != nil {
		if errors.Is(err, smt.ErrStalled) {
			c.stalled(err, c.inSolver) //nolint:errcheck // the next check meets a restarted solver
		}
		return
	}
	w.free = maps.Clone(e.added)
	w.keep(e, 0)
	c.wit = w
}

// keep records the names e evaluated as the values of w's levels, the
// first cached of which held before.
func (w *witness) keep(e *witnessEnv, cached int) {
	w.vals = w.vals[:min(cached, len(w.vals))]
	for i := len(w.vals); i < e.n; i++ {
		if i < cap(w.vals) {
			w.vals = w.vals[:i+1] // the map a shorter prefix dropped, reused
		} else {
			w.vals = append(w.vals, nil)
		}
		if w.vals[i] == nil {
			w.vals[i] = map[string]smt.Value{}
		} else {
			clear(w.vals[i])
		}
	}
	for name, l := range e.vals {
		if l.level >= 0 && l.level < e.n {
			w.vals[l.level][name] = l.v
		}
	}
}

// byWitness reports whether the witness satisfies the first n levels of
// the loaded path; with repair, it edits the witness until it does, a few
// rounds at most. The witness is kept only when it does.
func (c *Checker) byWitness(n int, repair bool) bool {
	w := c.wit
	if w == nil || n == 0 {
		return false
	}
	k := 0
	for k < len(w.path) && k < n && w.path[k] == c.path[k] {
		k++
	}
	e := c.witnessEnv(w, n, k)
	bad, err := c.firstFalse(e, false, k)
	if err != nil {
		return false
	}
	var repaired []*smt.Expr
	bad0 := bad
	for round := 0; bad != nil; round++ {
		// An assertion broken again by the edits that made another hold
		// is likely a contradiction: the solver decides.
		if !repair || round == maxRepairRounds || slices.Contains(repaired, bad) || !e.repair(bad) {
			if repair && bad == bad0 {
				c.unrepaired = n
			}
			return false
		}
		repaired = append(repaired, bad)
		// An edit may break what held before: everything again.
		clear(e.added)
		if bad, err = c.firstFalse(e, true, 0); err != nil {
			return false
		}
	}
	if len(w.free) > maxWitnessTerms {
		// The terms of paths long left behind: start afresh from what
		// this prefix reached.
		w.free = map[string]smt.Value{}
		k, e.cached = 0, 0
		clear(e.added)
		clear(e.vals)
		if bad, err = c.firstFalse(e, true, 0); err != nil || bad != nil {
			c.wit = nil
			return false
		}
	}
	for t, v := range e.added {
		w.free[t] = v
	}
	for t, v := range e.edits {
		w.free[t] = v
	}
	if len(e.edits) > 0 {
		c.Repaired++
		w.keep(e, 0)
	} else {
		c.ByWitness++
		w.keep(e, k)
	}
	w.path = append(w.path[:0], c.path[:n]...)
	return true
}
