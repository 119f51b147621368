package smt

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// ErrStalled is returned, wrapped, when a solver does not answer within
// far more than its time limit (z3 does not always stop at :timeout, and
// a solver may hang). The process has been killed by then: start a new
// one and load the constraints again.
var ErrStalled = errors.New("smt solver did not answer in time and was stopped")

// Result is the answer to a satisfiability check.
type Result int

const (
	Unknown Result = iota // the solver gave up or timed out
	Sat
	Unsat
)

func (r Result) String() string { return [...]string{"unknown", "sat", "unsat"}[r] }

// Config says which solver to run.
type Config struct {
	// Command and arguments; default "z3 -in -smt2".
	Command []string
	// Timeout per Check; 0 means none. Z3 receives it as :timeout; for
	// other solvers put the per-query limit in Command (e.g. cvc5
	// --tlimit-per=MS). With a timeout, every answer is also awaited for
	// a bounded time (see Grace): a solver that overruns it is killed and
	// the call returns ErrStalled.
	Timeout time.Duration
	// Log, when set, receives a copy of every command sent.
	Log io.Writer
	// UnsatCores makes the solver track named assertions (:named) so that
	// UnsatCore can answer. It slows z3's checks, so a search keeps it to
	// a second solver that only explains refuted paths.
	UnsatCores bool
	// LazyDefinitions holds back every constant definition ("(define-fun
	// NAME () ...)") until a command sent later uses it, directly or
	// through other definitions (see lazy.go). z3 only.
	LazyDefinitions bool
}

// Solver is one solver process.
type Solver struct {
	cmd     *exec.Cmd
	in      *bufio.Writer
	stdin   io.WriteCloser
	lines   chan line // the solver's output, read as it comes
	isZ3    bool
	log     io.Writer
	depth   int
	timeout time.Duration
	lazy    *lazyDefs // nil: definitions are sent as they come
	close   sync.Once
	closed  chan struct{} // closed by Close
}

// line is one line of solver output, or the error that ended it.
type line struct {
	text string
	err  error
}

// Grace is how long past its own limit an answer is awaited before the
// solver is taken to have stalled: half the limit again plus a second,
// which a solver that honours its limit never needs.
func Grace(limit time.Duration) time.Duration { return limit/2 + time.Second }

// Start launches a solver process.
func Start(cfg Config) (*Solver, error) {
	argv := cfg.Command
	if len(argv) == 0 {
		argv = []string{"z3", "-in", "-smt2"}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("smt solver %q not found (install Debian's z3, or configure another solver): %w", argv[0], err)
	}
	cmd := exec.Command(path, argv[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start smt solver: %w", err)
	}
	s := &Solver{cmd: cmd, stdin: stdin, in: bufio.NewWriter(stdin), lines: make(chan line, 256), closed: make(chan struct{}),
		isZ3: strings.Contains(argv[0], "z3"), timeout: cfg.Timeout, log: cfg.Log}
	if cfg.LazyDefinitions && s.isZ3 {
		// z3 keeps the model of the last check across a definition, so a
		// get-value may bring the definitions it needs; SMT-LIB leaves
		// other solvers free to refuse that.
		s.lazy = newLazyDefs()
	}
	// Output is read as it comes, so that a solver writing more than a
	// pipe holds (errors about commands not yet answered) never blocks
	// while we write to it.
	go s.readOutput(bufio.NewReader(stdout))
	// No unsat cores unless asked: z3 solves path constraints about 10x
	// slower when it must produce them.
	opts := []string{"(set-option :print-success false)", "(set-option :produce-models true)"}
	if cfg.UnsatCores {
		opts = append(opts, "(set-option :produce-unsat-cores true)")
	}
	if err := s.send(append(opts, "(set-logic QF_AUFBV)")...); err != nil {
		s.Close()
		return nil, err
	}
	if s.isZ3 && cfg.Timeout > 0 {
		if err := s.send(fmt.Sprintf("(set-option :timeout %d)", cfg.Timeout.Milliseconds())); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

func (s *Solver) send(lines ...string) error {
	for _, l := range lines {
		if s.lazy != nil {
			if s.lazy.hold(l) {
				continue
			}
			if strings.HasPrefix(l, ";") {
				continue // a comment's names need no definition, nor the solver the comment
			}
			s.lazy.require(l, s.write)
		}
		s.write(l)
	}
	if err := s.in.Flush(); err != nil {
		return fmt.Errorf("smt solver: %w", err)
	}
	return nil
}

func (s *Solver) write(l string) {
	s.in.WriteString(l)
	s.in.WriteByte('\n')
	if s.log != nil {
		fmt.Fprintln(s.log, l)
	}
}

// Declare, Assert and the other commands are written without waiting for
// an answer; solver errors surface at the next Check or Value.

// Declare sends a declaration, e.g. "(declare-const x (_ BitVec 64))".
func (s *Solver) Declare(decl string) error { return s.send(decl) }

// Assert adds a constraint given as an SMT-LIB2 term.
func (s *Solver) Assert(term string) error { return s.send("(assert " + term + ")") }

// Push opens a scope.
func (s *Solver) Push() error {
	s.depth++
	if s.lazy != nil {
		s.lazy.push()
	}
	return s.send("(push 1)")
}

// Pop closes the innermost scope, dropping its declarations and assertions.
func (s *Solver) Pop() error {
	if s.depth == 0 {
		return errors.New("smt: pop without push")
	}
	s.depth--
	if s.lazy != nil {
		s.lazy.pop()
	}
	return s.send("(pop 1)")
}

// Depth is the number of open scopes.
func (s *Solver) Depth() int { return s.depth }

// Check asks whether the assertions are satisfiable. A cancelled context
// kills the solver (it cannot be interrupted otherwise) and returns the
// context's error; so does a solver that overruns its timeout by more
// than Grace, with ErrStalled.
func (s *Solver) Check(ctx context.Context) (Result, error) {
	return s.check(ctx, s.timeout)
}

func (s *Solver) check(ctx context.Context, limit time.Duration) (Result, error) {
	if err := s.send("(check-sat)"); err != nil {
		return Unknown, err
	}
	l, err := s.readLine(ctx, limit)
	if err != nil {
		return Unknown, err
	}
	switch l {
	case "sat":
		return Sat, nil
	case "unsat":
		return Unsat, nil
	case "unknown", "timeout":
		return Unknown, nil
	}
	return Unknown, fmt.Errorf("smt solver: %s", l)
}

// CheckFor is Check with its own time limit d (z3 only: other solvers
// keep the limit of their command line). A check that runs out of time is
// Unknown.
func (s *Solver) CheckFor(ctx context.Context, d time.Duration) (Result, error) {
	if !s.isZ3 || d <= 0 {
		return s.Check(ctx)
	}
	if s.timeout > 0 && s.timeout < d {
		d = s.timeout
	}
	if err := s.send(fmt.Sprintf("(set-option :timeout %d)", max(d.Milliseconds(), 1))); err != nil {
		return Unknown, err
	}
	res, err := s.check(ctx, d)
	if err == nil {
		err = s.send(fmt.Sprintf("(set-option :timeout %d)", s.timeout.Milliseconds()))
	}
	return res, err
}

// readOutput passes the solver's output lines to s.lines until it ends.
// After Close it drops what is left.
func (s *Solver) readOutput(r *bufio.Reader) {
	defer close(s.lines)
	for {
		l, err := r.ReadString('\n')
		out := line{text: strings.TrimSpace(l)}
		switch {
		case err != nil:
			out = line{err: fmt.Errorf("smt solver stopped: %w", err)}
		case out.text == "":
			continue
		}
		select {
		case s.lines <- out:
		case <-s.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// readLine returns the next output line, or a solver error. It waits at
// most limit plus Grace (no bound when limit is 0) and until ctx ends;
// either stops the solver.
func (s *Solver) readLine(ctx context.Context, limit time.Duration) (string, error) {
	var expired <-chan time.Time
	if limit > 0 {
		t := time.NewTimer(limit + Grace(limit))
		defer t.Stop()
		expired = t.C
	}
	select {
	case l, ok := <-s.lines:
		switch {
		case !ok:
			return "", errors.New("smt solver stopped")
		case l.err != nil:
			return "", l.err
		case strings.HasPrefix(l.text, "(error"):
			return "", fmt.Errorf("smt solver: %s", l.text)
		}
		return l.text, nil
	case <-ctx.Done():
		s.Close()
		return "", ctx.Err()
	case <-expired:
		s.Close()
		return "", fmt.Errorf("%w (limit %v)", ErrStalled, limit)
	}
}

// Value returns the model's value of a term after a Sat check, as the
// solver prints it (e.g. "#x0800").
func (s *Solver) Value(term string) (string, error) {
	v, err := s.Values([]string{term})
	if err != nil {
		return "", err
	}
	return v[0], nil
}

// Values returns the model's values of several terms after a Sat check.
func (s *Solver) Values(terms []string) ([]string, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	if err := s.send("(get-value (" + strings.Join(terms, " ") + "))"); err != nil {
		return nil, err
	}
	ans, err := s.readSexp()
	if err != nil {
		return nil, err
	}
	if ans.List == nil || len(ans.List) != len(terms) {
		return nil, fmt.Errorf("smt solver: unexpected answer to get-value: %v", ans)
	}
	out := make([]string, len(ans.List))
	for i, p := range ans.List {
		if len(p.List) != 2 {
			return nil, fmt.Errorf("smt solver: unexpected pair in get-value answer: %v", p)
		}
		out[i] = p.List[1].String()
	}
	return out, nil
}

// Holds evaluates a Bool term in the model of the last Sat check,
// completing it where the term names constants the model left free. It
// reports false when the term is false or the solver gives no plain
// answer.
func (s *Solver) Holds(term string) (bool, error) {
	v, err := s.Eval(term)
	return v == "true", err
}

// Eval returns the value of a term in the model of the last Sat check,
// completing the model where the term names constants it left free, as
// the solver prints it.
func (s *Solver) Eval(term string) (string, error) {
	if !s.isZ3 {
		return s.Value(term)
	}
	e, err := s.evalTerm(term)
	if err != nil {
		return "", err
	}
	return e.String(), nil
}

// evalTerm is Eval's answer as a term. z3 evaluates with its eval command,
// which does not echo the term back; other solvers answer get-value.
func (s *Solver) evalTerm(term string) (*Expr, error) {
	if !s.isZ3 {
		v, err := s.Value(term)
		if err != nil {
			return nil, err
		}
		return ParseExpr(v)
	}
	if err := s.send("(eval " + term + " :completion true)"); err != nil {
		return nil, err
	}
	return s.readSexp()
}

// UnsatCore returns the names of the named assertions of an unsat core
// after an Unsat check (the solver must have been started with
// Config.UnsatCores).
func (s *Solver) UnsatCore() ([]string, error) {
	if err := s.send("(get-unsat-core)"); err != nil {
		return nil, err
	}
	ans, err := s.readSexp()
	if err != nil {
		return nil, err
	}
	if ans.List == nil {
		return nil, fmt.Errorf("smt solver: unexpected answer to get-unsat-core: %v", ans)
	}
	out := make([]string, 0, len(ans.List))
	for _, n := range ans.List {
		if n.List != nil {
			return nil, fmt.Errorf("smt solver: unexpected name in unsat core: %v", n)
		}
		out = append(out, n.Atom)
	}
	return out, nil
}

// Send writes commands (declarations, definitions, assertions) as they are.
func (s *Solver) Send(lines ...string) error { return s.send(lines...) }

// Close ends the solver process. It may be called more than once.
func (s *Solver) Close() error {
	s.close.Do(func() {
		close(s.closed)
		s.stdin.Close()
		if s.cmd.Process != nil {
			s.cmd.Process.Kill()
		}
		s.cmd.Wait()
	})
	return nil
}
