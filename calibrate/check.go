package calibrate

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/testrun"
)

// pcvCheck verifies a PCV micro-program before it is timed, so that its
// difference is per unit of the PCV the interpreter (and so bound and
// interface) counts:
//   - the interpreter runs the program on the maps' contents, and every
//     op on map "m" succeeds and reports pcv = want;
//   - with ordered, the kernel's hash map "m" holds its keys as the model
//     does: BPF_MAP_GET_NEXT_KEY walks the buckets in order and each chain
//     from its head, which the seed 0 of BPF_F_ZERO_SEED makes the
//     model's (interp.HashBucket).
type pcvCheck struct {
	maps       []mapDef
	op, pcv    string
	want, ncpu int
	ordered    bool
}

func (pc *pcvCheck) check(b *builder, c *ebpf.Collection) error {
	order, err := pc.interp(b)
	if err != nil || !pc.ordered {
		return err
	}
	return kernelOrder(c.Maps["m"], order)
}

// interp runs the check on the interpreter and returns the model's key
// order of map "m" before the run.
func (pc *pcvCheck) interp(b *builder) ([][]byte, error) {
	maps := pc.maps
	p, err := interpProgram(b.insns, maps)
	if err != nil {
		return nil, err
	}
	s, err := mapState(maps)
	if err != nil {
		return nil, err
	}
	ms, err := interp.NewMaps(p, s, interp.MapOptions{NumCPU: pc.ncpu})
	if err != nil {
		return nil, err
	}
	order := ms.Order("m")
	it, err := interp.New(p, interp.Options{})
	if err != nil {
		return nil, err
	}
	res, err := it.Run(interp.Input{Packet: packet()}, ms)
	if err != nil {
		return nil, fmt.Errorf("interpreter: %w", err)
	}
	n := 0
	for _, call := range res.Calls {
		if call.Map != "m" || call.Op != pc.op {
			continue
		}
		n++
		got := -1
		for _, v := range call.PCV {
			if v.Name == pc.pcv {
				got = v.Value
			}
		}
		okRet := call.Ret == 0
		if pc.op == "lookup" {
			okRet = call.Ret == 1 // a hit
		}
		if got != pc.want || !okRet {
			return nil, fmt.Errorf("the interpreter's %s %d reports %s = %d (returning %d), want %d: the map contents do not set the PCV",
				pc.op, n, pc.pcv, got, call.Ret, pc.want)
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("the interpreter saw no %s on the measured map", pc.op)
	}
	return order, nil
}

// kernelOrder compares the keys of a kernel hash map, in the order
// BPF_MAP_GET_NEXT_KEY returns them, with want.
func kernelOrder(m *ebpf.Map, want [][]byte) error {
	got, err := testrun.MapKeys(m)
	if err != nil {
		return err
	}
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) || !bytes.Equal(got[i], want[i]) {
			return fmt.Errorf("the kernel's hash buckets are not the model's (interp.HashBucket, BPF_F_ZERO_SEED): "+
				"the kernel walks %d keys, the model %d; key %d is %s in the kernel, %s in the model",
				len(got), len(want), i, keyAt(got, i), keyAt(want, i))
		}
	}
	return nil
}

func keyAt(keys [][]byte, i int) string {
	if i < len(keys) {
		return fmt.Sprintf("%x", keys[i])
	}
	return "none"
}

// interpProgram is the program of insns for the interpreter. bpfprog
// starts a function at every symbol, so jump labels are resolved into
// offsets and dropped (the PCV programs have no subprograms).
func interpProgram(insns asm.Instructions, maps []mapDef) (*bpfprog.Program, error) {
	insns = append(asm.Instructions(nil), insns...)
	at := map[string]int{}
	off := 0
	for _, ins := range insns {
		if s := ins.Symbol(); s != "" {
			at[s] = off
		}
		off += int(ins.Size() / asm.InstructionSize)
	}
	off = 0
	for i, ins := range insns {
		if ref := ins.Reference(); ref != "" && ins.OpCode.Class().IsJump() && !ins.IsFunctionCall() {
			t, ok := at[ref]
			if !ok {
				return nil, fmt.Errorf("jump to unknown label %q", ref)
			}
			ins.Offset = int16(t - off - 1)
			ins = ins.WithReference("")
		}
		insns[i] = ins.WithSymbol("")
		off += int(ins.Size() / asm.InstructionSize)
	}
	pm := map[string]*bpfprog.Map{}
	for _, m := range maps {
		pm[m.name] = &bpfprog.Map{Name: m.name, Type: m.typ, KeySize: m.key, ValueSize: m.value, MaxEntries: m.max, Flags: m.flags}
	}
	return bpfprog.New("calib", ebpf.XDP, insns, pm)
}

// mapState is the contents of maps as a map state. Keys are byte strings
// (or uint32 indices); values byte strings or uint64s, per-CPU values
// []uint64.
func mapState(maps []mapDef) (*mapstate.State, error) {
	s := mapstate.New()
	for _, m := range maps {
		for _, kv := range m.contents {
			var e mapstate.Entry
			switch k := kv.Key.(type) {
			case []byte:
				e.Key = k
			case uint32:
				e.Key = binary.LittleEndian.AppendUint32(nil, k)
			default:
				return nil, fmt.Errorf("map %s: key of type %T", m.name, kv.Key)
			}
			switch v := kv.Value.(type) {
			case []byte:
				e.Value = v
			case uint64:
				e.Value = binary.LittleEndian.AppendUint64(nil, v)
			case []uint64:
				for _, x := range v {
					e.Values = append(e.Values, binary.LittleEndian.AppendUint64(nil, x))
				}
			default:
				return nil, fmt.Errorf("map %s: value of type %T", m.name, kv.Value)
			}
			s.Set(m.name, e)
		}
	}
	return s, nil
}
