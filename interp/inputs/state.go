package inputs

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/mapstate"
)

// StartState gives a program's maps some contents: keys from the packet
// pools (addresses, MACs, ports) so lookups hit, random values, and for
// test_xdp_noinline the entries its selftest installs.
func StartState(p *bpfprog.Program, seed uint64) *mapstate.State {
	r := rand.New(rand.NewPCG(seed, 11))
	s := mapstate.New()
	val := func(n int) mapstate.Hex {
		v := make([]byte, n)
		for i := range v {
			v[i] = byte(r.IntN(256))
		}
		if r.IntN(3) == 0 {
			clear(v)
			v[0] = 1
		}
		return v
	}
	for name, m := range p.Maps {
		if !mapstate.Fillable(m.Type) || name[0] == '.' || m.Type == ebpf.DevMap || m.Type == ebpf.CPUMap || m.Type == ebpf.DevMapHash {
			continue
		}
		var keys [][]byte
		switch {
		case mapstate.IsArray(m.Type):
			for i := 0; i < 6; i++ {
				keys = append(keys, binary.LittleEndian.AppendUint32(nil, uint32(r.IntN(int(m.MaxEntries)))))
			}
			for _, port := range portPool {
				if uint32(port) < m.MaxEntries {
					keys = append(keys, binary.LittleEndian.AppendUint32(nil, uint32(port)))
				}
			}
		case m.KeySize == 4:
			for _, ip := range ip4Pool[:3] {
				keys = append(keys, ip.To4())
			}
		case m.KeySize == 16:
			for _, ip := range ip6Pool[:2] {
				keys = append(keys, ip.To16())
			}
		case m.KeySize == 6:
			for _, mac := range macPool[:2] {
				keys = append(keys, mac)
			}
		}
		for _, k := range keys {
			if uint32(len(k)) != m.KeySize || slices.ContainsFunc(entries(s, name), func(e mapstate.Entry) bool { return slices.Equal(e.Key, k) }) {
				continue
			}
			e := mapstate.Entry{Key: k, Value: val(int(m.ValueSize))}
			if mapstate.PerCPU(m.Type) && r.IntN(2) == 0 {
				e.Value, e.Values = nil, []mapstate.Hex{val(int(m.ValueSize)), val(int(m.ValueSize))}
			}
			s.Set(name, e)
		}
	}
	if p.Maps["vip_map"] != nil && p.Maps["ch_rings"] != nil {
		// prog_tests/xdp_noinline.c: VIP 0/TCP → vip_num 5; ring slot 11 →
		// real 3, whose address is the magic value the test checks.
		vip := make([]byte, 24)
		vip[20] = 6
		s.Set("vip_map", mapstate.Entry{Key: vip, Value: []byte{0, 0, 0, 0, 5, 0, 0, 0}})
		s.Set("ch_rings", mapstate.Entry{Key: []byte{11, 0, 0, 0}, Value: []byte{3, 0, 0, 0}})
		real := make([]byte, 20)
		binary.LittleEndian.PutUint32(real, 0x1234)
		s.Set("reals", mapstate.Entry{Key: []byte{3, 0, 0, 0}, Value: real})
	}
	return s
}

func entries(s *mapstate.State, name string) []mapstate.Entry {
	if m := s.Maps[name]; m != nil {
		return m.Entries
	}
	return nil
}
