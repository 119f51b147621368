package target

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Keys of Chain besides the classes: ChainLoad prices a load whose address
// waits for an earlier instruction, ChainStack a load of a stack slot
// stored earlier in the block (store-to-load forwarding, or the memory
// renaming of newer cores).
const (
	ChainLoad  = "load"
	ChainStack = "stack"
)

// ChainKeys are the keys a chain section may hold, in the order it is
// written: the classes an instruction on a dependency chain executes, and
// loads.
var ChainKeys = []string{"alu32", "alu64", "shift32", "shift64", "shift64_reg", "mul", "div", "mod", "swap", ChainLoad, ChainStack}

// A target with a chain section prices a basic block as the sum of two
// bounds of an out-of-order core: Classes and Memory are what independent
// operations cost (the core's throughput), and the block's longest
// dependency chain adds its latency (Chain, the chain cost group). A class
// or load without a chain price adds nothing to a chain it is on.
func (f *file) chain(t *Target) error {
	if len(f.Chain) == 0 {
		return nil
	}
	t.Chain = map[string]Vec{}
	for key, c := range f.Chain {
		if !slices.Contains(ChainKeys, key) {
			return fmt.Errorf("line %d: chain: unknown key %q (known: %s)", c.line, key, strings.Join(ChainKeys, ", "))
		}
		v, err := t.vecOf("chain."+key, c)
		if err != nil {
			return err
		}
		t.Chain[key] = v
	}
	return nil
}

// chainNode writes the chain section, or nil when t has none.
func (t *Target) chainNode() *yaml.Node {
	if len(t.Chain) == 0 {
		return nil
	}
	m := mapping(false)
	for _, k := range ChainKeys {
		if v, ok := t.Chain[k]; ok {
			add(m, k, t.vec(v))
		}
	}
	return m
}
