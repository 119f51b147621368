package kernel

import (
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Layout of a ring buffer sample: the program's stack frame from fp-504.
//
//	+0   uint64 timestamp (bpf_ktime_get_ns, CLOCK_MONOTONIC)
//	+8   uint32 cpu
//	+12  uint32 tracepoint index
//	+16  uint64 pid_tgid (tgid << 32 | tid)
//	+24  the first capture bytes of the raw tracepoint record
const (
	sampleHeader = 24
	maxCapture   = 480
	frameBase    = -(sampleHeader + maxCapture) // fp offset of the sample
	lostKey      = frameBase - 4                // fp offset of the lost-map key
)

// capture is how many record bytes to copy for f: the fixed part, plus
// room for dynamic strings, at most maxCapture.
func capture(f *Format) int {
	n := f.Size
	if f.DataLoc {
		n += 256
	}
	return min(max(n, 8), maxCapture)
}

// program builds the BPF program of tracepoint index idx: it copies the
// record into a sample on the stack, outputs it to the ring buffer, and
// counts a lost sample in the per-CPU lost map when the ring is full.
func program(f *Format, idx int, ring, lost *ebpf.Map) (*ebpf.Program, error) {
	n := capture(f)
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, frameBase, asm.R0, asm.DWord),
		asm.FnGetSmpProcessorId.Call(),
		asm.StoreMem(asm.RFP, frameBase+8, asm.R0, asm.Word),
		asm.StoreImm(asm.RFP, frameBase+12, int64(idx), asm.Word),
		asm.FnGetCurrentPidTgid.Call(),
		asm.StoreMem(asm.RFP, frameBase+16, asm.R0, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.RFP),
		asm.Add.Imm(asm.R1, frameBase+sampleHeader),
		asm.Mov.Imm(asm.R2, int32(n)),
		asm.Mov.Reg(asm.R3, asm.R6),
		asm.FnProbeReadKernel.Call(),
		asm.LoadMapPtr(asm.R1, ring.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, frameBase),
		asm.Mov.Imm(asm.R3, int32(sampleHeader+n)),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnRingbufOutput.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.StoreImm(asm.RFP, lostKey, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, lost.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, lostKey),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("exit"),
		asm.Return(),
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "dpperf_tp",
		Type:         ebpf.TracePoint,
		License:      "GPL",
		Instructions: insns,
	})
	if err != nil {
		return nil, fmt.Errorf("load BPF program for %s:%s: %w", f.Category, f.Name, err)
	}
	return prog, nil
}
