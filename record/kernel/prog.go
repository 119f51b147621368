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
	slotKey      = frameBase - 4                // fp offset of the per-CPU map's key
)

// cpuSlot is the value of the per-CPU map "dpperf_cpu", one per CPU:
//
//	+0  uint64 since: bpf_ktime_get_ns read just before the running
//	    program of the recorder stamped its sample; 0 when none runs
//	+8  uint64 lost: samples the ring buffer had no room for
//
// Tracepoint programs do not nest on a CPU (the kernel skips a program
// while another one runs there), so one slot per CPU describes the only
// program that can be between stamping and publishing a sample. The drain
// reads since to know up to which time it has every sample (watermark).
type cpuSlot struct {
	Since uint64
	Lost  uint64
}

// capture is how many record bytes to copy for f: the fixed part, plus
// room for dynamic strings, at most maxCapture.
func capture(f *Format) int {
	n := f.Size
	if f.DataLoc {
		n += 256
	}
	return min(max(n, 8), maxCapture)
}

// program builds the BPF program of tracepoint index idx. It marks its
// CPU's slot as running (an atomic exchange, so the mark is visible before
// the timestamp is read), copies the record into a sample on the stack,
// outputs it to the ring buffer, counts the sample in the slot's lost
// counter when the ring is full, and clears the mark once the sample is
// published (again an atomic exchange, ordered after the publication).
func program(f *Format, idx int, ring, slots *ebpf.Map) (*ebpf.Program, error) {
	n := capture(f)
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.StoreImm(asm.RFP, slotKey, 0, asm.Word),
		asm.LoadMapPtr(asm.R1, slots.FD()),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, slotKey),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "exit"),
		asm.Mov.Reg(asm.R7, asm.R0),
		asm.FnKtimeGetNs.Call(),
		asm.Mov.Reg(asm.R1, asm.R0),
		asm.Xchg.Mem(asm.R7, asm.R1, asm.DWord, 0),
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
		asm.JEq.Imm(asm.R0, 0, "done"),
		asm.LoadMem(asm.R1, asm.R7, 8, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R7, 8, asm.R1, asm.DWord),
		asm.Mov.Imm(asm.R1, 0).WithSymbol("done"),
		asm.Xchg.Mem(asm.R7, asm.R1, asm.DWord, 0),
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
