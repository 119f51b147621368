package symex

import (
	"errors"
	"strings"

	"github.com/dpperf/dpperf/smt"
)

// Evaluating a longer prefix in the model of the last check without the
// solver: the pending levels' assertions are evaluated in Go (package
// smt's Eval) over the definitions of the path's levels, and the solver is
// asked only for the model's values of the free symbols a term reaches,
// once per model. Anything the evaluator does not know falls back to
// evaluation by the solver (byModelSolver).

// modelCache is what the evaluation learned of the solver's current model:
// the values of the names of the levels the solver holds, and the model's
// answers. keepModel drops it with every new model.
type modelCache struct {
	m    *smt.Model
	held map[string]smt.Value
}

// levelIndex holds a level's declarations and definitions by name.
type levelIndex map[string]*levelDef

// levelDef is a name a level declares or defines.
type levelDef struct {
	sort string // of a declared constant or function
	expr string // of a defined constant: its expression's text
	fun  bool   // a declared function
	// parsed is expr parsed, on first use.
	parsed *smt.Expr
}

// expression returns a defined constant's expression, parsed on first
// use.
func (d *levelDef) expression() (*smt.Expr, error) {
	if d.parsed == nil {
		p, err := smt.ParseExpr(d.expr)
		if err != nil {
			return nil, err
		}
		d.parsed = p
	}
	return d.parsed, nil
}

// modelCache returns what evaluations learned of the solver's current
// model, begun on first use.
func (c *Checker) modelCache() *modelCache {
	if c.mc == nil {
		c.mc = &modelCache{m: c.s.Model(), held: map[string]smt.Value{}}
	}
	return c.mc
}

// index returns the names level i declares and defines, reading its text
// on first use.
func (c *Checker) index(i int) levelIndex {
	l := &c.levels[i]
	if l.index != nil {
		return l.index
	}
	ix := levelIndex{}
	for _, line := range l.text {
		switch {
		case strings.HasPrefix(line, "(define-fun "):
			f := strings.SplitN(line[len("(define-fun "):len(line)-1], " ", 3) // name, "()", sort and expression
			if len(f) == 3 && f[1] == "()" {
				ix[f[0]] = &levelDef{expr: f[2][sortLen(f[2]):]}
			}
		case strings.HasPrefix(line, "(declare-const "):
			name, sort, _ := strings.Cut(line[len("(declare-const "):len(line)-1], " ")
			ix[name] = &levelDef{sort: sort}
		case strings.HasPrefix(line, "(declare-fun "):
			name, _, _ := strings.Cut(line[len("(declare-fun "):], " ")
			ix[name] = &levelDef{fun: true}
		}
	}
	l.index = ix
	return ix
}

// counterOf returns the number of a name the builder made (letters, then
// the name counter's value), or false for other names.
func counterOf(name string) (int, bool) {
	i := 0
	for i < len(name) && name[i] >= 'a' && name[i] <= 'z' {
		i++
	}
	if i == 0 || i == len(name) || len(name)-i > 9 {
		return 0, false
	}
	k := 0
	for _, d := range []byte(name[i:]) {
		if d < '0' || d > '9' {
			return 0, false
		}
		k = 10*k + int(d-'0')
	}
	return k, true
}

// defOf finds the level among the first n that declares or defines name:
// the builder's names by their number (level i makes those after
// levels[i-1].names), others among the pending levels. It returns -1 for
// a name no level has, which the solver holds from its start.
func (c *Checker) defOf(name string, n int) (int, *levelDef) {
	if k, ok := counterOf(name); ok {
		lo, hi := 0, n
		for lo < hi {
			mid := (lo + hi) / 2
			if c.levels[mid].names >= k {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		if lo < n {
			if d := c.index(lo)[name]; d != nil {
				return lo, d
			}
		}
		return -1, nil
	}
	for i := c.model; i < n; i++ {
		if d := c.index(i)[name]; d != nil {
			return i, d
		}
	}
	return -1, nil
}

// pathEnv is the smt.Env of an evaluation of the first n levels in the
// model of the first c.model.
type pathEnv struct {
	c       *Checker
	n       int
	mc      *modelCache
	pending map[string]smt.Value // names of the pending levels evaluated
}

func (e *pathEnv) Symbol(name string) (smt.Value, error) {
	if v, ok := e.pending[name]; ok {
		return v, nil
	}
	if v, ok := e.mc.held[name]; ok {
		return v, nil
	}
	i, d := e.c.defOf(name, e.n)
	var v smt.Value
	var err error
	switch {
	case d == nil || d.expr == "" && i < e.c.model:
		v, err = e.mc.m.Symbol(name) // declared, and the solver has it
	case d.fun:
		return v, errPendingFunction
	case d.expr == "":
		v, err = e.zero(d.sort) // declared in a pending level: any value will do
	default:
		var x *smt.Expr
		if x, err = d.expression(); err != nil {
			return v, err
		}
		v, err = smt.Eval(x, e)
	}
	if err != nil {
		return v, err
	}
	if i >= 0 && i >= e.c.model {
		e.pending[name] = v
	} else {
		e.mc.held[name] = v
	}
	return v, nil
}

func (e *pathEnv) Apply(name string, args []smt.Value) (smt.Value, error) {
	if i, d := e.c.defOf(name, e.n); d != nil && i >= e.c.model {
		return smt.Value{}, errPendingFunction
	}
	return e.mc.m.Apply(name, args)
}

// errPendingFunction: a function the solver has not received yet.
var errPendingFunction = errors.New("a pending level declares a function")

// zero is the value a constant declared in a pending level takes, as
// zeroOf writes it: false, zero, or for an array the received packet.
func (e *pathEnv) zero(sort string) (smt.Value, error) {
	if sort == arraySort {
		return e.Symbol("pkt0")
	}
	v, ok := smt.SortZero(sort)
	if !ok {
		return v, smt.ErrUnsupported
	}
	return v, nil
}

// evalByModel evaluates the pending levels' assertions (those of levels
// c.model to n) in the model of the solver's last check.
func (c *Checker) evalByModel(n int) (bool, error) {
	env := &pathEnv{c: c, n: n, mc: c.modelCache(), pending: map[string]smt.Value{}}
	for i := c.model; i < n; i++ {
		as, err := c.assertionsOf(i)
		if err != nil {
			return false, err
		}
		for _, a := range as {
			v, err := smt.Eval(a, env)
			if err != nil {
				return false, err
			}
			if !v.True() {
				return false, nil
			}
		}
	}
	return true, nil
}
