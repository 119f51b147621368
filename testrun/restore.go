package testrun

import (
	"bytes"
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/mapstate"
)

// An Undo puts back the map entries one run changed: the entries it wrote
// get their old values again and the ones it added are deleted (array
// elements are zeroed). Applying it costs a syscall per changed entry
// rather than a clear and refill of every map, so the caches keep what
// the program itself left in them, as they do between the packets of a
// real stream.
type Undo struct {
	ops []undoOp
}

type undoOp struct {
	name  string
	key   []byte
	entry *mapstate.Entry // nil: delete the key (zero it in an array)
}

// Len is the number of entries the undo writes or deletes.
func (u *Undo) Len() int { return len(u.ops) }

// UndoTo compares the maps now with before (a state read with State) and
// returns the Undo that brings them back to before.
func (r *Runner) UndoTo(before *mapstate.State) (*Undo, error) {
	after, err := r.State()
	if err != nil {
		return nil, err
	}
	before = before.Canonical(r.prog)
	u := &Undo{}
	for _, name := range sortedNames(r.maps) {
		pm := r.prog.Maps[name]
		if !mapstate.Fillable(pm.Type) || r.readOnly[name] {
			continue
		}
		old, now := entriesOf(before, name), entriesOf(after, name)
		oldBy, nowBy := byKey(old), byKey(now)
		for i := range old {
			e := &old[i]
			if n := nowBy[string(e.Key)]; n == nil || !sameEntry(n, e) {
				u.ops = append(u.ops, undoOp{name: name, key: e.Key, entry: e})
			}
		}
		for _, e := range now {
			if oldBy[string(e.Key)] == nil {
				u.ops = append(u.ops, undoOp{name: name, key: e.Key})
			}
		}
	}
	return u, nil
}

// Apply writes the undo's entries back.
func (r *Runner) Apply(u *Undo) error {
	return r.pinned(func() error {
		for _, op := range u.ops {
			pm := r.prog.Maps[op.name]
			m := r.maps[op.name]
			var err error
			switch {
			case op.entry != nil:
				err = r.put(m, pm.Type, *op.entry)
			case mapstate.IsArray(pm.Type):
				err = r.put(m, pm.Type, mapstate.Entry{Key: op.key, Value: make([]byte, pm.ValueSize)})
			default:
				err = m.Delete(op.key)
			}
			if err != nil {
				return fmt.Errorf("map %s: restore key %x: %w", op.name, op.key, err)
			}
		}
		return nil
	})
}

// put writes one entry, its value repeated on every CPU for a per-CPU map
// given one value.
func (r *Runner) put(m *ebpf.Map, t ebpf.MapType, e mapstate.Entry) error {
	if !mapstate.PerCPU(t) {
		return m.Update([]byte(e.Key), []byte(e.Value), ebpf.UpdateAny)
	}
	vals := e.Values
	if vals == nil {
		vals = make([]mapstate.Hex, r.ncpu)
		for i := range vals {
			vals[i] = e.Value
		}
	}
	if len(vals) != r.ncpu {
		return fmt.Errorf("%d per-CPU values, want %d", len(vals), r.ncpu)
	}
	return m.Update([]byte(e.Key), toBytes(vals), ebpf.UpdateAny)
}

func byKey(es []mapstate.Entry) map[string]*mapstate.Entry {
	out := make(map[string]*mapstate.Entry, len(es))
	for i := range es {
		out[string(es[i].Key)] = &es[i]
	}
	return out
}

func sameEntry(a, b *mapstate.Entry) bool {
	if !bytes.Equal(a.Value, b.Value) || len(a.Values) != len(b.Values) {
		return false
	}
	for i := range a.Values {
		if !bytes.Equal(a.Values[i], b.Values[i]) {
			return false
		}
	}
	return true
}
