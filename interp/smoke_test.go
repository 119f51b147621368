package interp

import (
	"path/filepath"
	"testing"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/testobj"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/cilium/ebpf"
)

func TestSmoke(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testobj.Root(), "build/bpf/*.o"))
	files = append(files, testobj.LibXDP(t)...)
	pkt := make([]byte, 60)
	pkt[12], pkt[13] = 8, 0
	pkt[14] = 0x45
	pkt[23] = 6
	for _, f := range files {
		spec, _ := ebpf.LoadCollectionSpec(f)
		for _, name := range bpfprog.Names(spec) {
			p, err := bpfprog.LoadFile(f, name)
			if err != nil { t.Error(err); continue }
			if p.Type != ebpf.XDP { continue }
			it, err := New(p, Options{})
			if err != nil { t.Error(f, err); continue }
			def, _ := mapstate.ObjectDefaults(p)
			ms, err := NewMaps(p, def, MapOptions{NumCPU: 2})
			if err != nil { t.Error(f, err); continue }
			r, err := it.Run(Input{Packet: pkt}, ms)
			if err != nil { t.Error(f, err); continue }
			t.Logf("%s %s: verdict %d count %d calls %d", filepath.Base(f), name, r.Verdict, r.Count, len(r.Calls))
		}
	}
}
