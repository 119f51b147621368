package interptest

import (
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// MapProgram returns an XDP program that only loads the pointer of map m
// and passes the packet: the smallest program that holds m, for tests of
// how maps are modelled and filled.
func MapProgram(m *bpfprog.Map) (*bpfprog.Program, error) {
	return bpfprog.New(m.Name, ebpf.XDP, asm.Instructions{
		asm.LoadMapPtr(asm.R1, 0).WithReference(m.Name), asm.Mov.Imm(asm.R0, 2), asm.Return()},
		map[string]*bpfprog.Map{m.Name: m})
}
