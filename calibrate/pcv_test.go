package calibrate

import (
	"bytes"
	"context"
	"encoding/binary"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/internal/bpftest"
	"github.com/dpperf/dpperf/interp"
	"github.com/dpperf/dpperf/target"
	"github.com/dpperf/dpperf/testrun"
)

// TestPCVPrograms: on the interpreter, every PCV micro-program reports the
// PCV its variant names on every operation, at a few copies and at the
// counts calibrate loads; a chain built in the wrong order is caught.
func TestPCVPrograms(t *testing.T) {
	bs := pcvBenches(2)
	if len(bs) != 2*7 {
		t.Fatalf("%d PCV micro-programs, want two for each of 7 costs", len(bs))
	}
	for _, bn := range bs {
		for _, k := range []int{1, helperGroup.copies(true) / 4, helperGroup.copies(false) * 5 / 4} {
			if _, err := bn.pcv.interp(bn.build(k)); err != nil {
				t.Errorf("%s with %d copies: %v", bn.ID(), k, err)
			}
		}
	}
	// The looked-up key last in, so first in its chain: one traversal.
	long := bs[1]
	if long.ID() != "pcv.hash.traversals/chain17" {
		t.Fatalf("second micro-program is %s", long.ID())
	}
	bad := *long.pcv
	bad.maps = []mapDef{long.maps[0]}
	bad.maps[0].contents = slices.Clone(long.maps[0].contents)
	slices.Reverse(bad.maps[0].contents)
	if _, err := bad.interp(long.build(4)); err == nil || !strings.Contains(err.Error(), "traversals = 1") {
		t.Errorf("reversed chain: error %v, want one traversal reported", err)
	}
}

// TestChainKeysOneKernelBucket: a known answer from the kernel. The keys
// chainKeys finds for the looked-up key share its bucket in the kernel:
// inserted among keys of other buckets into a map with BPF_F_ZERO_SEED,
// BPF_MAP_GET_NEXT_KEY (buckets in order, each chain from its head)
// returns them in one run, the last inserted first and the looked-up key
// last, on every hash map type.
func TestChainKeysOneKernelBucket(t *testing.T) {
	chain := chainKeys(chainExtra)
	bucket := interp.HashBucket(chain[0], chainMax, 0)
	var others [][]byte
	for i := uint32(1 << 20); len(others) < 40; i++ {
		k := binary.LittleEndian.AppendUint32(nil, i)
		if interp.HashBucket(k, chainMax, 0) != bucket {
			others = append(others, k)
		}
	}
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []ebpf.MapType{ebpf.Hash, ebpf.PerCPUHash, ebpf.LRUHash, ebpf.LRUCPUHash} {
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: typ, KeySize: 4, ValueSize: 8, MaxEntries: chainMax, Flags: zeroSeed})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		for _, k := range slices.Concat(others[:20], chain, others[20:]) {
			if err := m.Put(k, mapValue(typ, 0, ncpu)); err != nil {
				t.Fatal(err)
			}
		}
		walk, err := testrun.MapKeys(m)
		if err != nil {
			t.Fatal(err)
		}
		at := slices.IndexFunc(walk, func(k []byte) bool { return bytes.Equal(k, chain[0]) })
		if len(walk) != len(chain)+len(others) || at < chainExtra {
			t.Fatalf("%v: %d keys walked, looked-up key at %d", typ, len(walk), at)
		}
		want := slices.Clone(chain)
		slices.Reverse(want)
		if got := walk[at-chainExtra : at+1]; !reflect.DeepEqual(got, want) {
			t.Errorf("%v: the kernel walks %x around the looked-up key, want its bucket's chain %x", typ, got, want)
		}
	}
}

// TestKernelOrderRandomSeed: without BPF_F_ZERO_SEED the kernel draws a
// seed, its buckets are not the model's, and the check says so.
func TestKernelOrderRandomSeed(t *testing.T) {
	bn := traversalBenches(ebpf.Hash, 1)[1]
	def := bn.maps[0]
	def.flags = 0
	c, err := newCollection(bn.build(1).spec([]mapDef{def}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	order, err := bn.pcv.interp(bn.build(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := kernelOrder(c.Maps["m"], order); err == nil || !strings.Contains(err.Error(), "not the model's") {
		t.Errorf("error %v, want buckets not the model's", err)
	}
	def.flags = zeroSeed
	c2, err := newCollection(bn.build(1).spec([]mapDef{def}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := kernelOrder(c2.Maps["m"], order); err != nil {
		t.Errorf("with BPF_F_ZERO_SEED: %v", err)
	}
}

// TestPCVQuick: a quick calibration of the PCVs alone prices every PCV of
// every map type with a positive cost per unit, from its own spread,
// leaves no program loaded, and the target reads back the same.
// A cost is its p90 rounded up; a difference that is not positive (an
// eviction often: an overwrite of an LRU key can cost as much as an
// insert that evicts, method.md) is the floor with a note. Which of the
// two a PCV gets depends on the machine's timings, so both are accepted.
func TestPCVQuick(t *testing.T) {
	var l loads
	res, err := Run(context.Background(), Options{Quick: true, Loaded: l.hook(t),
		only: func(id string) bool { return strings.HasPrefix(id, "pcv.") }})
	if err != nil {
		t.Fatal(err)
	}
	if left := bpftest.StillLoaded(l.progs); len(left) > 0 {
		t.Errorf("programs %v still loaded", left)
	}
	for _, m := range res.Measurements {
		if m.Err != nil {
			t.Errorf("%s: %v", m.ID(), m.Err)
		}
	}
	tg, err := res.Target("host-test", Throughput)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range pcvKinds {
		mt := target.MapTypeName(k.typ)
		for _, name := range k.names {
			key := "pcv." + mt + "." + name
			s, ok := tg.Calibration.Spread[key]
			cost := tg.PCV[mt][name][0]
			t.Logf("%s: %g ns per unit (min %.3f median %.3f high %.3f max %.3f)", key, cost, s.Min, s.Median, s.High, s.Max)
			noted := slices.ContainsFunc(tg.Calibration.Notes, func(n string) bool { return strings.HasPrefix(n, key+":") })
			switch {
			case !ok || tg.Estimated[key] || cost <= 0:
				t.Errorf("%s: cost %g, spread %+v (measured %v)", key, cost, s, ok)
			case s.High > 0 && (cost != RoundUp(s.High, floor) || cost < s.High*(1-NoiseTolerance) || noted):
				t.Errorf("%s: cost %g is not its p90 %g rounded up, or noted %v", key, cost, s.High, tg.Calibration.Notes)
			case s.High <= 0 && (cost != floor || !noted):
				// A difference that is not positive (a noisy machine can
				// measure one for any PCV) is written as the floor, with a
				// note.
				t.Errorf("%s: difference %g not positive: cost %g, notes %v", key, s.High, cost, tg.Calibration.Notes)
			}
		}
	}
	back := roundTrip(t, tg)
	if !reflect.DeepEqual(back.PCV, tg.PCV) || !reflect.DeepEqual(back.Calibration, tg.Calibration) {
		t.Errorf("read back: pcv %v, calibration %+v\nwant %v, %+v", back.PCV, back.Calibration, tg.PCV, tg.Calibration)
	}
}
