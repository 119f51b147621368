package mapstate

import (
	"encoding/binary"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/bpfprog"
)

// ObjectDefaults returns the contents the object file of p gives the maps p
// uses: the initial bytes of global data sections (.data, .rodata, .bss)
// and any statically initialised entries of byte-valued maps. It is the
// state a program starts from before a user's state is laid over it (see
// Overlay).
func ObjectDefaults(p *bpfprog.Program) (*State, error) {
	spec, err := bpfprog.SpecFile(p)
	if err != nil {
		return nil, err
	}
	return FromSpec(spec, p), nil
}

// FromSpec is ObjectDefaults for an already parsed object.
func FromSpec(spec *ebpf.CollectionSpec, p *bpfprog.Program) *State {
	s := New()
	for name, pm := range p.Maps {
		ms := spec.Maps[name]
		if ms == nil || !Fillable(pm.Type) {
			continue
		}
		for _, kv := range ms.Contents {
			key, ok1 := toBytes(kv.Key, int(pm.KeySize))
			val, ok2 := toBytes(kv.Value, int(pm.ValueSize))
			if ok1 && ok2 {
				s.Set(name, Entry{Key: key, Value: val})
			}
		}
	}
	return s
}

func toBytes(v any, size int) (Hex, bool) {
	var b []byte
	switch x := v.(type) {
	case []byte:
		b = append([]byte(nil), x...)
	case uint32:
		b = binary.LittleEndian.AppendUint32(nil, x)
	case uint64:
		b = binary.LittleEndian.AppendUint64(nil, x)
	default:
		return nil, false
	}
	if len(b) > size {
		return nil, false
	}
	for len(b) < size {
		b = append(b, 0)
	}
	return b, true
}
