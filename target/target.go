package target

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/dpperf/dpperf/internal/fail"
)

//go:embed targets/*.yaml
var builtin embed.FS

// The bases of a target's costs (Target.Basis).
const (
	BasisCalibrated = "calibrated"
	BasisEstimated  = "estimated"
)

// MaxComponents is the most throughput-limiting components a target has.
const MaxComponents = 4

// Vec is an amount of each component of a target (index as in Components).
type Vec [MaxComponents]float64

// Add returns v+w.
func (v Vec) Add(w Vec) Vec {
	for i := range v {
		v[i] += w[i]
	}
	return v
}

// Component is a part of the target whose capacity limits throughput.
type Component struct {
	Name        string  `yaml:"name"`
	Unit        string  `yaml:"unit"`        // what its costs count, e.g. "cycles"
	Capacity    float64 `yaml:"capacity"`    // units it serves per second
	Description string  `yaml:"description"` //
}

// Access is the cost of one kind of memory access to one region.
type Access struct {
	Cost    Vec     // charged for every access
	Latency float64 // > 0: a blocking access of at most this latency (see Blocking)
}

// Target is a cost model of a machine running BPF programs.
type Target struct {
	Name        string
	Description string
	// JIT names the translation of BPF instructions into the target's
	// own ("nfp": package target/nfp), which then prices instructions in
	// place of Classes, Memory and the map helpers it translates; "":
	// instructions are priced by class.
	JIT        string
	Components []Component
	PerPacket  Vec // added once per packet (path)
	// Limits that do not depend on the program.
	PacketRate   float64 // packets/s the device accepts at most (0: none)
	LineRate     float64 // bit/s of the ports (0: none)
	WireOverhead int     // bytes per frame on the wire beyond the packet
	MinPacket    int     // smallest packet, bytes
	// Instruction costs.
	Classes map[string]Vec // by instruction class, see Class
	// The conditional jump itself, added to its cond32/cond64 class cost.
	Taken, NotTaken Vec
	Memory          map[string]map[string]Access // region → load/store/atomic
	Helpers         map[string]map[string]Vec    // helper → map type (or "default")
	// HelperKeys prices helpers by the key size of their map, where
	// measured: helper → map type → costs by key size, ascending
	// (HelperKeyCost). Helpers contains the dearest of them.
	HelperKeys map[string]map[string][]KeyCost
	// HelperOutcomes prices map helpers by the outcome a call takes, where
	// measured: helper → map type → outcome (Outcomes) → cost with the
	// largest measured key (HelperOutcomeCost). Helpers holds the dearest
	// outcome, which prices calls whose outcome is not known.
	HelperOutcomes map[string]map[string]map[string]Vec
	// Blocking memory accesses cost max(BlockMin, latency − units of
	// BlockComponent spent since the previous memory access).
	BlockMin       float64
	BlockComponent int
	// Notes: how the costs were obtained, and what the target cannot run.
	Source string
	// Basis says whether the costs describe the machine a bound is for
	// (BasisCalibrated: measured on it, or published measurements of
	// it) or are an estimate (BasisEstimated), under which a bound is an
	// estimate too, not a guarantee.
	Basis       string
	Unsupported map[string]string // class/helper → why
	Estimated   map[string]bool   // costs that are estimates, not measurements
	// PCV prices performance-critical variables per map type (kernel
	// naming, as in Helpers) and PCV name (interp/pcv.yaml): the cost each
	// unit of the variable adds to the helper call, whose own cost is
	// that with every PCV at 0. Optional; missing PCVs cost nothing.
	PCV map[string]map[string]Vec
	// Chain prices instructions on a dependency chain (chain.go): by ALU
	// class, and ChainLoad for a load. Empty: every instruction costs its
	// class (Classes), whatever waits for it.
	Chain       map[string]Vec
	Calibration *Calibration // how a measured target was measured (nil: not measured)
}

// ComponentIndex returns the index of the named component or -1.
func (t *Target) ComponentIndex(name string) int {
	for i, c := range t.Components {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Rate converts a cost vector into packets/s per component; a component the
// vector does not use has rate +Inf.
func (t *Target) Rate(v Vec) (rates Vec) {
	for i := range rates {
		rates[i] = math.Inf(1)
		if i < len(t.Components) && v[i] > 0 {
			rates[i] = t.Components[i].Capacity / v[i]
		}
	}
	return rates
}

// Names lists the built-in targets.
func Names() []string {
	ents, _ := fs.ReadDir(builtin, "targets")
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Load returns the built-in target called nameOrPath, or reads the target
// file at that path (anything containing a '/' or ending in .yaml/.yml).
func Load(nameOrPath string) (*Target, error) {
	if strings.ContainsRune(nameOrPath, '/') || strings.HasSuffix(nameOrPath, ".yaml") || strings.HasSuffix(nameOrPath, ".yml") {
		data, err := os.ReadFile(nameOrPath)
		if err != nil {
			return nil, fail.Input(nameOrPath, fmt.Errorf("read target: %w", errors.Unwrap(err)))
		}
		t, err := Parse(data)
		return t, fail.Input(nameOrPath, err)
	}
	data, err := builtin.ReadFile(path.Join("targets", nameOrPath+".yaml"))
	if err != nil {
		return nil, fail.Usagef("unknown target %q (built-in targets: %s; or give a file path)", nameOrPath, strings.Join(Names(), ", "))
	}
	return Parse(data)
}

// Parse reads a target from YAML.
func Parse(data []byte) (*Target, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("parse target: %w", err)
	}
	return f.target()
}

// Raw returns the YAML of a built-in target.
func Raw(name string) ([]byte, error) {
	data, err := builtin.ReadFile(path.Join("targets", name+".yaml"))
	if err != nil {
		return nil, fail.Usagef("unknown target %q (built-in targets: %s)", name, strings.Join(Names(), ", "))
	}
	return data, nil
}
