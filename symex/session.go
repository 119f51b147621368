package symex

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/smt"
)

// The solver's lifecycle: a solver started with the declarations every
// path shares, brought to the levels of a prefix, checked, and restarted
// when it stops answering.

// checkAt checks the prefix of the loaded path with n edges, within limit
// (or the solver's own timeout when limit is 0). z3 does not always stop
// at its timeout, so a check that overruns it by far is killed (by
// package smt), the solver restarted, and the answer taken as Unknown.
func (c *Checker) checkAt(ctx context.Context, n int, limit time.Duration) (smt.Result, error) {
	if err := c.solverAt(n); err != nil {
		return smt.Unknown, err
	}
	c.Checks++
	c.model = -1
	res, err := c.s.CheckFor(ctx, limit) // limit 0: the solver's own
	if errors.Is(err, smt.ErrStalled) {
		return smt.Unknown, c.stalled(err, n)
	}
	c.keepModel(n, res, err)
	return res, err
}

// keepModel records that the solver holds a model of the first n levels.
func (c *Checker) keepModel(n int, res smt.Result, err error) {
	c.mc = nil
	if err == nil && res == smt.Sat && c.inSolver == n {
		c.model = n
	}
}

// stalled restarts a solver that stopped answering (smt.ErrStalled) with
// the first n levels loaded and returns nil: what was asked stays
// undecided. Other errors come back as they are.
func (c *Checker) stalled(err error, n int) error {
	if !errors.Is(err, smt.ErrStalled) {
		return err
	}
	c.Restarts++
	return c.restart(n)
}

// restart replaces a killed solver and loads the first n levels again.
func (c *Checker) restart(n int) error {
	c.s.Close()
	s, err := startSolver(c.opts, c.g.Maps)
	if err != nil {
		return err
	}
	c.s, c.inSolver, c.model = s, 0, -1
	return c.solverAt(n)
}

// startSolver starts a solver with the declarations every path shares.
func startSolver(opts Options, maps []*bpfprog.Map) (*smt.Solver, error) {
	cfg := opts.Solver
	cfg.LazyDefinitions = true // most definitions of a path are used by no assertion
	s, err := smt.Start(cfg)
	if err != nil {
		return nil, err
	}
	err = s.Send(baseCommands(opts)...)
	if err != nil {
		s.Close()
		return nil, err
	}
	for i, spec := range maps {
		if spec != nil && spec.KeySize > 0 {
			has, val := contentNames(i, 0)
			if err := s.Send(declareContents(spec, has, val)...); err != nil {
				s.Close()
				return nil, err
			}
		}
	}
	return s, nil
}

// baseCommands are the declarations and assertions every path shares.
func baseCommands(opts Options) []string {
	base := []string{
		"(declare-const pkt0 " + arraySort + ")",
		"(declare-const len (_ BitVec 64))",
		"(declare-const ifindex (_ BitVec 32))",
		"(declare-const rxq (_ BitVec 32))",
		fmt.Sprintf("(assert (bvuge len %s))", konst(64, uint64(opts.MinPacket)).s),
		fmt.Sprintf("(assert (bvule len %s))", konst(64, uint64(opts.MaxPacket)).s),
	}
	if opts.WellFormed {
		base = append(base, wellFormed()...)
	}
	return base
}

// baseAssertions parses the assertions of baseCommands.
func baseAssertions(opts Options) ([]*smt.Expr, error) {
	var as []*smt.Expr
	for _, line := range baseCommands(opts) {
		if text, ok := strings.CutPrefix(line, "(assert "); ok {
			e, err := smt.ParseExpr(text[:len(text)-1])
			if err != nil {
				return nil, err
			}
			as = append(as, e)
		}
	}
	return as, nil
}

// solverAt brings the solver to the assertions of the first n levels.
func (c *Checker) solverAt(n int) error {
	if c.inSolver > n {
		c.snapshot() // the pop discards the model
	}
	if c.inSolver != n {
		c.model = -1
	}
	for c.inSolver > n {
		c.inSolver--
		if len(c.levels[c.inSolver].text) > 0 {
			if err := c.s.Pop(); err != nil {
				return err
			}
		}
	}
	for ; c.inSolver < n; c.inSolver++ {
		if err := c.send(c.levels[c.inSolver].text); err != nil {
			return err
		}
	}
	return nil
}

func (c *Checker) send(text []string) error {
	if len(text) == 0 {
		return nil
	}
	if err := c.s.Push(); err != nil {
		return err
	}
	return c.s.Send(text...)
}
