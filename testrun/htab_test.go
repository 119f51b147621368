package testrun_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/bpfprog"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/interp/interptest"
	"github.com/dpperf/dpperf/mapstate"
)

// TestHashBucketOrder checks the interpreter's hash table model against the
// kernel's: with BPF_F_ZERO_SEED both hash with seed 0, and
// BPF_MAP_GET_NEXT_KEY walks the buckets in order, each chain from its
// head, so equal key orders mean equal buckets and chains.
func TestHashBucketOrder(t *testing.T) {
	const zeroSeed = 1 << 6 // BPF_F_ZERO_SEED
	for _, ks := range []uint32{4, 6, 16} {
		spec := &ebpf.MapSpec{Type: ebpf.Hash, KeySize: ks, ValueSize: 8, MaxEntries: 64, Flags: zeroSeed}
		km, err := ebpf.NewMap(spec)
		if err != nil {
			t.Fatal(err)
		}
		defer km.Close()
		pm := &bpfprog.Map{Name: "h", Type: ebpf.Hash, KeySize: ks, ValueSize: 8, MaxEntries: 64}
		p, err := interptest.MapProgram(pm)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(uint64(ks), 1))
		s := mapstate.New()
		for i := 0; i < 48; i++ {
			k := make([]byte, ks)
			for j := range k {
				k[j] = byte(r.IntN(4)) // few distinct bytes: shared buckets
			}
			if err := km.Update(k, make([]byte, 8), ebpf.UpdateAny); err != nil {
				t.Fatal(err)
			}
			s.Set("h", mapstate.Entry{Key: k, Value: make([]byte, 8)})
		}
		// Replace one key: the kernel moves it to the head of its chain.
		first := s.Maps["h"].Entries[0]
		km.Update([]byte(first.Key), make([]byte, 8), ebpf.UpdateAny)
		s.Maps["h"].Entries = append(s.Maps["h"].Entries[1:], first)
		ms, err := interp.NewMaps(p, s, interp.MapOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var kernel [][]byte
		var prev any
		for {
			var k []byte
			if km.NextKey(prev, &k) != nil {
				break
			}
			kernel, prev = append(kernel, k), k
		}
		model := ms.Order("h")
		if len(kernel) != len(model) {
			t.Fatalf("key size %d: kernel holds %d keys, model %d", ks, len(kernel), len(model))
		}
		for i := range kernel {
			if !bytes.Equal(kernel[i], model[i]) {
				t.Fatalf("key size %d: key %d is %x in the kernel, %x in the model", ks, i, kernel[i], model[i])
			}
		}
	}
}
