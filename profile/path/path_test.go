package path

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuiltins(t *testing.T) {
	names := Names()
	if strings.Join(names, ",") != "block,nvme-tcp" {
		t.Fatalf("Names() = %v", names)
	}
	for _, n := range names {
		p, err := Builtin(n)
		if err != nil {
			t.Fatalf("Builtin(%s): %v", n, err)
		}
		if len(p.Stages) != len(p.Events)-1 {
			t.Errorf("%s: %d stages for %d events", n, len(p.Stages), len(p.Events))
		}
	}
	b, _ := Builtin("block")
	var got []string
	for _, s := range b.Stages {
		got = append(got, s.Name+":"+string(s.Cause))
	}
	if want := "Q2G:queue,G2I:cpu,I2D:queue,D2C:device"; strings.Join(got, ",") != want {
		t.Errorf("block stages %s, want %s", strings.Join(got, ","), want)
	}
	if b.MergedName(1, 3) != "G2I+I2D" || b.MergedName(3, 4) != "D2C" {
		t.Errorf("MergedName: %q %q", b.MergedName(1, 3), b.MergedName(3, 4))
	}
	n, _ := Builtin("nvme-tcp")
	if k := n.EventKey(n.EventIndex("BLK_ISSUE")); strings.Join(k, ",") != "dev,sector" {
		t.Errorf("BLK_ISSUE key %v", k)
	}
	if k := n.EventKey(0); strings.Join(k, ",") != "qid,cid" {
		t.Errorf("QUEUE_RQ key %v", k)
	}
	if k := n.EventKeyFields(n.EventIndex("BLK_ISSUE")); !slices.Equal(k, []KeyField{KeyDev, KeySector}) {
		t.Errorf("BLK_ISSUE key fields %v", k)
	}
	if k := n.EventKeyFields(0); !slices.Equal(k, []KeyField{KeyQID, KeyCID}) {
		t.Errorf("QUEUE_RQ key fields %v", k)
	}
	if _, err := Builtin("nope"); err == nil || !strings.Contains(err.Error(), "block, nvme-tcp") {
		t.Errorf("Builtin(nope) = %v", err)
	}
}

// Each testdata/*.bad.yaml starts with "# error: <text>" that the error
// must contain; *.good.yaml must load.
func TestFiles(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.yaml")
	if len(files) < 5 {
		t.Fatalf("only %d test files", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Lookup(f)
			if strings.HasSuffix(f, ".good.yaml") {
				if err != nil {
					t.Fatalf("load: %v", err)
				}
				return
			}
			first, _, _ := strings.Cut(string(data), "\n")
			want := strings.TrimPrefix(first, "# error: ")
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want it to contain %q", err, want)
			}
			if !strings.HasPrefix(err.Error(), f+": ") {
				t.Errorf("error %q does not name the file", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, n := range Names() {
		data, _ := Source(n)
		f.Add(data)
	}
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, name := range files {
		data, _ := os.ReadFile(name)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		// A valid path is a chain: every stage has events on both ends.
		for i, s := range p.Stages {
			if p.EventIndex(s.From) != i || p.EventIndex(s.To) != i+1 {
				t.Fatalf("accepted broken chain at stage %d", i)
			}
		}
	})
}
