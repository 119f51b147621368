package record

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseConfig feeds arbitrary YAML to the configuration parser: it
// must accept or reject it with an error, never panic, and an accepted
// configuration must be usable.
func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yml")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		if c.Period <= 0 || c.Buffer <= 0 || c.TargetRoot == "" {
			t.Fatalf("accepted configuration without defaults: %+v", c)
		}
		_ = c.Match("a/b", "t")
	})
}
