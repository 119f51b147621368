package interp

import (
	_ "embed"
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"go.yaml.in/yaml/v3"
)

//go:embed pcv.yaml
var pcvYAML []byte

// PCVModel is the table of performance-critical variables in pcv.yaml.
type PCVModel struct {
	// PCVs describes each PCV by name.
	PCVs map[string]string `yaml:"pcvs"`
	// Maps lists, per map type (cilium/ebpf's MapType names) and
	// operation, the PCVs the operation reports, in order.
	Maps map[string]map[string][]string `yaml:"maps"`
	// Loops lists the PCVs of a loop.
	Loops []string `yaml:"loops"`
}

// Model returns the PCV table, read once from the embedded file. It is
// shared: callers must not change it.
func Model() *PCVModel { return model() }

var model = sync.OnceValue(func() *PCVModel {
	var m PCVModel
	if err := yaml.Unmarshal(pcvYAML, &m); err != nil {
		panic(fmt.Sprintf("pcv.yaml: %v", err)) // embedded: a broken file is a build error
	}
	return &m
})

// Names returns the PCVs an operation on a map of type mapType reports,
// and whether the table knows the operation.
func (m *PCVModel) Names(mapType, op string) ([]string, bool) {
	ops, ok := m.Maps[mapType]
	if !ok {
		return nil, false
	}
	names, ok := ops[op]
	return names, ok
}

// mapOps names the map operation a helper performs, as pcv.yaml does.
var mapOps = map[asm.BuiltinFunc]string{asm.FnMapLookupElem: "lookup", asm.FnMapUpdateElem: "update", asm.FnMapDeleteElem: "delete"}

// OfHelper returns the PCVs a helper call on a map of type mt reports (none
// for helpers that are not map operations), and whether the table knows
// the operation.
func (m *PCVModel) OfHelper(mt ebpf.MapType, fn asm.BuiltinFunc) ([]string, bool) {
	op, ok := mapOps[fn]
	if !ok {
		return nil, false
	}
	return m.Names(mt.String(), op)
}
