package target

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// chainTarget is the built-in x86-64 table with a chain section.
func chainTarget(t *testing.T, section string) (*Target, error) {
	t.Helper()
	good, err := os.ReadFile("targets/x86-64.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return Parse(append(good, []byte("\nchain:\n"+section)...))
}

func TestChainSection(t *testing.T) {
	tg, err := chainTarget(t, "  alu64: {cpu: 1.5}\n  load: {cpu: 4}\n  stack: {cpu: 0.25}\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Vec{"alu64": {1.5}, ChainLoad: {4}, ChainStack: {0.25}}
	if !reflect.DeepEqual(tg.Chain, want) {
		t.Fatalf("chain %v, want %v", tg.Chain, want)
	}
	data, err := Marshal(tg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(data)
	if err != nil || !reflect.DeepEqual(back, tg) {
		t.Fatalf("read back differs (%v)\n%s", err, data)
	}
	// The chain group scales the chain section, and only it.
	s := tg.Scaled(map[string]float64{GroupChain: 0.5, GroupALU: 3, GroupMemory: 3})
	if s.Chain["alu64"][0] != 0.75 || s.Chain[ChainLoad][0] != 2 || s.Classes["alu64"][0] != 3*tg.Classes["alu64"][0] {
		t.Errorf("scaled: chain %v, alu64 %v", s.Chain, s.Classes["alu64"])
	}
	if o := tg.Only(GroupALU); o.Chain["alu64"][0] != 0 {
		t.Errorf("the alu group's share keeps the chain: %v", o.Chain)
	}
	if tg.Chain["alu64"][0] != 1.5 {
		t.Error("scaling changed the original target")
	}
	for section, msg := range map[string]string{
		"  branch: {cpu: 1}\n":  `chain: unknown key "branch"`,
		"  alu64: {gpu: 1}\n":   `chain.alu64: unknown component "gpu"`,
		"  load: {cpu: -0.5}\n": "chain.load: negative cost",
	} {
		if _, err := chainTarget(t, section); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", section, err, msg)
		}
	}
}
