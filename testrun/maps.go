package testrun

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/mapstate"
)

// Fill makes the maps hold exactly s (laid over nothing: maps s does not
// name are emptied, arrays zeroed). Read-only global data (.rodata) keeps
// what it was loaded with.
func (r *Runner) Fill(s *mapstate.State) error {
	if err := s.Validate(r.prog, "map state"); err != nil {
		return err
	}
	return r.fill(s)
}

func (r *Runner) fill(s *mapstate.State) error {
	return r.pinned(func() error {
		for _, name := range sortedNames(r.maps) {
			pm := r.prog.Maps[name]
			m := r.maps[name]
			if mapstate.Sockets(pm.Type) {
				if err := r.fillSockets(name, m, entriesOf(s, name)); err != nil {
					return fmt.Errorf("map %s: %w", name, err)
				}
				continue
			}
			if !mapstate.Fillable(pm.Type) || r.readOnly[name] {
				continue
			}
			if err := clearMap(m, pm.Type, int(pm.ValueSize), r.ncpu); err != nil {
				return fmt.Errorf("map %s: clear: %w", name, err)
			}
			for i, e := range entriesOf(s, name) {
				if err := r.put(m, pm.Type, e); err != nil {
					return fmt.Errorf("map %s: entry %d: %w", name, i, err)
				}
			}
		}
		return nil
	})
}

func toBytes(vals []mapstate.Hex) [][]byte {
	out := make([][]byte, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}

// clearMap deletes every entry of a map, or zeroes every array index.
func clearMap(m *ebpf.Map, t ebpf.MapType, vs, ncpu int) error {
	if mapstate.IsArray(t) {
		keys, vals, err := readAll(m, t, vs, ncpu)
		if err != nil {
			return err
		}
		zero := make([]byte, vs)
		for i, k := range keys {
			if allZero(vals[i]) {
				continue
			}
			var v any = zero
			if mapstate.PerCPU(t) {
				v = slices.Repeat([][]byte{zero}, ncpu)
			}
			if err := m.Update(k, v, ebpf.UpdateAny); err != nil {
				return err
			}
		}
		return nil
	}
	return Empty(m)
}

// Empty deletes every key of a map that has keys to delete (not an
// array).
func Empty(m *ebpf.Map) error {
	for {
		var k []byte
		if err := m.NextKey(nil, &k); err != nil {
			if errors.Is(err, ebpf.ErrKeyNotExist) {
				return nil
			}
			return err
		}
		if err := m.Delete(k); err != nil {
			return err
		}
	}
}

// readAll returns every key with its per-CPU values (one value for
// ordinary maps).
func readAll(m *ebpf.Map, t ebpf.MapType, vs, ncpu int) ([][]byte, [][][]byte, error) {
	var keys [][]byte
	var vals [][][]byte
	var k []byte
	it := m.Iterate()
	if mapstate.PerCPU(t) {
		var v [][]byte
		for it.Next(&k, &v) {
			keys = append(keys, slices.Clone(k))
			vals = append(vals, clone2(v))
		}
	} else {
		var v []byte
		for it.Next(&k, &v) {
			keys = append(keys, slices.Clone(k))
			vals = append(vals, [][]byte{slices.Clone(v)})
		}
	}
	return keys, vals, it.Err()
}

func clone2(v [][]byte) [][]byte {
	out := make([][]byte, len(v))
	for i := range v {
		out[i] = slices.Clone(v[i])
	}
	return out
}

func allZero(vs [][]byte) bool {
	for _, v := range vs {
		if !bytes.Equal(v, make([]byte, len(v))) {
			return false
		}
	}
	return true
}

// State reads every byte-valued map back, canonical for the program.
func (r *Runner) State() (*mapstate.State, error) {
	s := mapstate.New()
	err := r.pinned(func() error {
		for _, name := range sortedNames(r.maps) {
			pm := r.prog.Maps[name]
			if !mapstate.Fillable(pm.Type) {
				continue
			}
			keys, vals, err := readAll(r.maps[name], pm.Type, int(pm.ValueSize), r.ncpu)
			if err != nil {
				return fmt.Errorf("map %s: read: %w", name, err)
			}
			m := &mapstate.Map{}
			for i, k := range keys {
				e := mapstate.Entry{Key: k}
				if mapstate.PerCPU(pm.Type) {
					for _, v := range vals[i] {
						e.Values = append(e.Values, v)
					}
				} else {
					e.Value = vals[i][0]
				}
				m.Entries = append(m.Entries, e)
			}
			s.Maps[name] = m
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.Canonical(r.prog), nil
}

// Keys lists a map's keys in the kernel's iteration order
// (BPF_MAP_GET_NEXT_KEY from the start).
func (r *Runner) Keys(name string) ([][]byte, error) {
	m := r.maps[name]
	if m == nil {
		return nil, fmt.Errorf("no map %s", name)
	}
	return MapKeys(m)
}

// MapKeys returns the keys of m in the order BPF_MAP_GET_NEXT_KEY walks
// them (for a hash map: bucket by bucket, each chain from its head).
func MapKeys(m *ebpf.Map) ([][]byte, error) {
	var keys [][]byte
	var prev any
	for {
		var k []byte
		if err := m.NextKey(prev, &k); err != nil {
			if errors.Is(err, ebpf.ErrKeyNotExist) {
				return keys, nil
			}
			return nil, fmt.Errorf("walking map %s: %w", m, err)
		}
		keys, prev = append(keys, k), k
	}
}

func sortedNames(m map[string]*ebpf.Map) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
