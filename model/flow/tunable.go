package flow

import (
	"fmt"
	"strings"

	"github.com/dpperf/dpperf/model/spec"
)

// Tunable is a model description whose parameters (spec.Param) can be
// read and changed and that compiles into a network: a specification of
// dpperf's format (FromSpec) or a file of the LogNIC format (model/lognic).
// Sweeps and the optimizer work on a Tunable.
type Tunable interface {
	Get(p spec.Param) (float64, error)
	// Set changes p and checks what the change can break.
	Set(p spec.Param, v float64) error
	// Clone returns an independent copy.
	Clone() Tunable
	Compile() (*Network, error)
}

// SpecModel is a specification as a Tunable.
type SpecModel struct{ *spec.Spec }

// FromSpec wraps s.
func FromSpec(s *spec.Spec) SpecModel { return SpecModel{s} }

// Clone implements Tunable.
func (m SpecModel) Clone() Tunable { return SpecModel{m.Spec.Clone()} }

// Compile implements Tunable.
func (m SpecModel) Compile() (*Network, error) { return Compile(m.Spec) }

var _ Tunable = SpecModel{}

// SetAll applies settings PARAM=VALUE (values with the parameter's unit,
// e.g. size=64B or g.v.placement=1) to m in order and returns the
// parameters changed.
func SetAll(m Tunable, settings []string) ([]spec.Param, error) {
	var changed []spec.Param
	for _, kv := range settings {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want PARAM=VALUE", kv)
		}
		p := spec.Param(name)
		v, err := p.ParseValue(val)
		if err == nil {
			err = m.Set(p, v)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		changed = append(changed, p)
	}
	return changed, nil
}
