package interp

import (
	"path/filepath"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/mapstate"
)

// examplePrograms loads every XDP program of the examples, of
// test_xdp_noinline and of libxdp1's objects.
func examplePrograms(t testing.TB, withLibXDP bool) []*bpfprog.Program {
	t.Helper()
	srcs, _ := filepath.Glob(filepath.Join(testobj.Root(), "examples", "xdp", "*.c"))
	var files []string
	for _, c := range srcs {
		files = append(files, testobj.Built(t, filepath.Base(c[:len(c)-2])))
	}
	files = append(files, testobj.Built(t, "test_xdp_noinline"))
	if withLibXDP {
		files = append(files, testobj.LibXDP(t)...)
	}
	var progs []*bpfprog.Program
	for _, f := range files {
		ps, err := bpfprog.XDPPrograms(f)
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, ps...)
	}
	return progs
}

// setup builds an interpreter and maps for p from the object's defaults
// laid under start.
func setup(t testing.TB, p *bpfprog.Program, start *mapstate.State) (*Interp, *Maps) {
	t.Helper()
	maps, err := ObjectMaps(p, start, MapOptions{NumCPU: 2})
	if err != nil {
		t.Fatal(err)
	}
	it, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return it, maps
}

func name(p *bpfprog.Program) string { return filepath.Base(p.File) + "/" + p.Name }
