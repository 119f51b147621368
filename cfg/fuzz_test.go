package cfg

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/internal/testobj"
)

// FuzzBuild decodes arbitrary bytes as BPF instructions and builds their
// graph: it may reject them, but must not panic or loop forever.
func FuzzBuild(f *testing.F) {
	for _, name := range []string{"fig2", "loop", "call", "parser"} {
		p, err := bpfprog.LoadFile(filepath.Join(testobj.Root(), "build", "bpf", name+".o"), "")
		if err != nil {
			continue
		}
		var buf bytes.Buffer
		if err := p.Insns.Marshal(&buf, binary.LittleEndian); err == nil {
			f.Add(buf.Bytes())
		}
	}
	f.Add(bytes.Repeat([]byte{0x95, 0, 0, 0, 0, 0, 0, 0}, 2))
	f.Fuzz(func(t *testing.T, data []byte) {
		insns, err := asm.AppendInstructions(nil, bytes.NewReader(data), binary.LittleEndian, "linux")
		if err != nil || len(insns) == 0 {
			return
		}
		for i := range insns {
			insns[i] = insns[i].WithReference("").WithSymbol("")
			if insns[i].IsLoadFromMap() {
				insns[i].Src = 0
			}
		}
		p, err := bpfprog.New("fuzz", ebpf.XDP, insns, nil)
		if err != nil {
			return
		}
		Build(p, Options{Unroll: 4, MaxTrips: 16, MaxNodes: 20000})
	})
}

// FuzzLoad feeds arbitrary bytes to the object loader and the graph builder.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"fig2", "call"} {
		if data, err := os.ReadFile(filepath.Join(testobj.Root(), "build", "bpf", name+".o")); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := bpfprog.Load(bytes.NewReader(data), "fuzz.o", "")
		if err != nil {
			return
		}
		Build(p, Options{Unroll: 4, MaxTrips: 16, MaxNodes: 20000})
	})
}
