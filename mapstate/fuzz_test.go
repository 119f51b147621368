package mapstate

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any input parses or fails with an error, never a panic, and a
// state that validates survives writing and reading back unchanged.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.json")
	for _, file := range files {
		data, _ := os.ReadFile(file)
		f.Add(data)
	}
	p := testProg(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		if s.Validate(p, "fuzz") != nil {
			return
		}
		var buf bytes.Buffer
		if err := s.Write(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := Parse(&buf, "back")
		if err != nil {
			t.Fatalf("written state does not parse: %v\n%s", err, buf.String())
		}
		if d := Diff(p, s, back); len(d) != 0 {
			t.Fatalf("round trip differs: %v", d)
		}
	})
}
