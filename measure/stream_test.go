package measure

import (
	"bytes"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/mapstate"
)

func TestDenseArrays(t *testing.T) {
	p := &bpfprog.Program{Maps: map[string]*bpfprog.Map{
		"ring":  {Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 8},
		"two":   {Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 8},
		"huge":  {Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: denseLimit + 1},
		"ro":    {Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1, Flags: unix.BPF_F_RDONLY_PROG},
		"flows": {Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: 8},
	}}
	one := func(k, v byte) mapstate.Entry {
		return mapstate.Entry{Key: []byte{k, 0, 0, 0}, Value: []byte{v, 0, 0, 0}}
	}
	s := mapstate.New()
	s.Maps["ring"] = &mapstate.Map{Entries: []mapstate.Entry{one(5, 7)}}
	s.Maps["two"] = &mapstate.Map{Entries: []mapstate.Entry{one(1, 1), one(2, 2)}}
	s.Maps["huge"] = &mapstate.Map{Entries: []mapstate.Entry{one(1, 1)}}
	s.Maps["ro"] = &mapstate.Map{Entries: []mapstate.Entry{one(0, 1)}}
	s.Maps["flows"] = &mapstate.Map{Entries: []mapstate.Entry{one(9, 9)}}
	d := denseArrays(p, s)
	if d == nil {
		t.Fatal("no dense state")
	}
	ring := d.Maps["ring"].Entries
	if len(ring) != 8 {
		t.Fatalf("ring holds %d entries, want all 8", len(ring))
	}
	for i, e := range ring {
		if !bytes.Equal(e.Key, []byte{byte(i), 0, 0, 0}) || !bytes.Equal(e.Value, []byte{7, 0, 0, 0}) {
			t.Errorf("ring entry %d: %x = %x, want the example's value 07000000", i, e.Key, e.Value)
		}
	}
	for _, name := range []string{"two", "huge", "ro", "flows"} {
		if got, want := len(d.Maps[name].Entries), len(s.Maps[name].Entries); got != want {
			t.Errorf("%s: %d entries, want %d (left as it was)", name, got, want)
		}
	}
	if len(s.Maps["ring"].Entries) != 1 {
		t.Error("the example's state was changed")
	}
	delete(s.Maps, "ring")
	if denseArrays(p, s) != nil {
		t.Error("a dense state without an array to fill")
	}
}

func TestFreeOf(t *testing.T) {
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	p := &bpfprog.Program{Maps: map[string]*bpfprog.Map{
		"flows":   {Type: ebpf.Hash, MaxEntries: 100},
		"lru":     {Type: ebpf.LRUHash, MaxEntries: uint32(64 * ncpu), Flags: unix.BPF_F_NO_COMMON_LRU},
		"counter": {Type: ebpf.Array, MaxEntries: 4},
	}}
	entries := func(n int) *mapstate.Map {
		m := &mapstate.Map{}
		for i := range n {
			m.Entries = append(m.Entries, mapstate.Entry{Key: []byte{byte(i)}})
		}
		return m
	}
	before, after := mapstate.New(), mapstate.New()
	before.Maps["flows"], after.Maps["flows"] = entries(10), entries(30)
	before.Maps["counter"], after.Maps["counter"] = entries(1), entries(4)
	if got := freeOf(p, before, after); got != 90 {
		t.Errorf("free room %d, want 90 (the hash's 100 less the 10 it held)", got)
	}
	before.Maps["lru"], after.Maps["lru"] = entries(4), entries(5)
	if got := freeOf(p, before, after); got != 60 {
		t.Errorf("free room %d, want 60 (one CPU's 64 of the LRU with per-CPU lists, less 4)", got)
	}
	after.Maps["flows"] = entries(10)
	after.Maps["lru"] = entries(4)
	if got := freeOf(p, before, after); got < 1<<30 {
		t.Errorf("free room %d when no map grew, want no limit", got)
	}
}
