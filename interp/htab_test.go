package interp

import (
	"encoding/binary"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/interp/interptest"
	"github.com/dpperf/dpperf/mapstate"
)

// TestHashBucket: the exported bucket is the one the model chains a key
// in (Order walks buckets in index order, so the buckets of its keys never
// decrease), and n_buckets is max_entries rounded up to a power of two.
func TestHashBucket(t *testing.T) {
	for _, ks := range []uint32{4, 6, 16} {
		pm := &bpfprog.Map{Name: "h", Type: ebpf.Hash, KeySize: ks, ValueSize: 8, MaxEntries: 100}
		p, err := interptest.MapProgram(pm)
		if err != nil {
			t.Fatal(err)
		}
		s := mapstate.New()
		for i := range 90 {
			k := make([]byte, ks)
			binary.LittleEndian.PutUint16(k, uint16(i*7919))
			s.Set("h", mapstate.Entry{Key: k, Value: make([]byte, 8)})
		}
		const seed = 0x1234
		ms, err := NewMaps(p, s, MapOptions{HashSeed: seed})
		if err != nil {
			t.Fatal(err)
		}
		prev := uint32(0)
		for i, k := range ms.Order("h") {
			b := HashBucket(k, 100, seed)
			if b < prev || b >= 128 {
				t.Fatalf("key size %d: key %d (%x) in bucket %d after bucket %d of 128", ks, i, k, b, prev)
			}
			prev = b
			if b2 := HashBucket(k, 128, seed); b2 != b {
				t.Errorf("max_entries 100 gives bucket %d, 128 gives %d", b, b2)
			}
			if b3 := HashBucket(k, 64, seed); b3 != b&63 {
				t.Errorf("max_entries 64 gives bucket %d, want %d", b3, b&63)
			}
		}
		if prev == 0 {
			t.Errorf("key size %d: every key in bucket 0", ks)
		}
	}
	if b := HashBucket([]byte{1, 2, 3, 4}, 1, 0); b != 0 {
		t.Errorf("one bucket: got %d", b)
	}
}
