package program

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/cfg"
	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/smt"
	"github.com/dpperf/dpperf/target"
)

// DefaultCacheDir is where computed bounds are kept: dpperf/bound under
// the user's cache directory.
func DefaultCacheDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "dpperf", "bound")
}

// Compute returns the bound of a program of an object under a target:
// from the cache when a result for the same object bytes, program name and
// target description is there, else by the search of package bound,
// whose JSON result it then stores.
func Compute(ctx context.Context, object, name, tgt string, o Options) (*Bound, error) {
	data, err := os.ReadFile(object)
	if err != nil {
		return nil, fmt.Errorf("object: read %s: %w", object, unwrap(err))
	}
	t, err := target.Load(tgt)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	td, err := target.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	h := sha256.New()
	for _, part := range [][]byte{data, []byte(name), td} {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	key := hex.EncodeToString(h.Sum(nil))
	cached := ""
	if o.CacheDir != "" {
		cached = filepath.Join(o.CacheDir, key+".json")
		if f, err := os.Open(cached); err == nil {
			b, err := ReadBound(f, cached)
			f.Close()
			if err == nil {
				return b, nil
			}
		}
	}
	prog, err := bpfprog.LoadFileWith(object, bpfprog.Options{Program: name})
	if err != nil {
		return nil, fmt.Errorf("object: %w", err)
	}
	g, err := cfg.Build(prog, cfg.Options{})
	if err != nil {
		return nil, fmt.Errorf("object: %w", err)
	}
	res, err := bound.SSP(ctx, bound.CostWith(g, t, nil), bound.SearchOptions{Metric: bound.PacketRate, Workers: max(o.Workers, 1),
		Solver: o.solver()})
	if err != nil {
		return nil, fmt.Errorf("bound %s: %w", object, err)
	}
	var buf bytes.Buffer
	if err := res.WriteJSON(&buf); err != nil {
		return nil, err
	}
	b, err := ReadBound(bytes.NewReader(buf.Bytes()), object)
	if err != nil {
		return nil, err
	}
	if cached != "" && res.Kind == "ssp" {
		// A cache that cannot be written only costs a new search next time.
		if os.MkdirAll(o.CacheDir, 0o755) == nil {
			_ = atomicfile.WriteFile(cached, buf.Bytes())
		}
	}
	return b, nil
}

func (o Options) solver() smt.Config {
	c := smt.Config{Command: o.Solver, Timeout: o.Timeout}
	if len(c.Command) == 0 {
		c.Command = []string{"z3", "-in", "-smt2"}
	}
	if c.Timeout == 0 {
		c.Timeout = 2 * time.Second
	}
	return c
}
