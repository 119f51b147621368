package calibrate

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/dpperf/dpperf/target"
)

// Every copy of every run of a streamed insert inserts a key of its own:
// after a timing the map holds one key per copy run, none refused.
func TestStreamInsertFillsFreshKeys(t *testing.T) {
	for _, typ := range []ebpf.MapType{ebpf.Hash, ebpf.PerCPUHash, ebpf.LRUHash, ebpf.LRUCPUHash} {
		bn := streamInsertBench(mapKind{typ: typ}, 40)
		for _, copies := range []int{4, 20} {
			c, err := bn.load(copies, Options{})
			if err != nil {
				t.Fatalf("%s: %v", bn.ID(), err)
			}
			runs := bn.room / copies
			for range 2 { // the reset empties the map again
				if err := bn.reset(c); err != nil {
					t.Fatal(err)
				}
				if _, err := timeOnce(c, packet(), runs); err != nil {
					t.Fatal(err)
				}
				if n := countKeys(t, c.Maps["m"]); n != runs*copies {
					t.Errorf("%s, %d copies, %d runs: %d keys in the map, want %d", bn.ID(), copies, runs, n, runs*copies)
				}
			}
			c.Close()
		}
	}
}

func countKeys(t *testing.T, m *ebpf.Map) int {
	t.Helper()
	key := make([]byte, m.KeySize())
	n := 0
	it := m.Iterate()
	var v []byte
	if m.Type() == ebpf.PerCPUHash || m.Type() == ebpf.LRUCPUHash {
		var vs [][]byte
		for it.Next(&key, &vs) {
			n++
		}
	} else {
		for it.Next(&key, &v) {
			n++
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// The insert outcome is priced by the dearer of its two variants.
func TestStreamInsertPricesInsert(t *testing.T) {
	var l loads
	res, err := Run(context.Background(), Options{Quick: true, Runs: 3, Loaded: l.hook(t), only: func(id string) bool {
		return strings.HasPrefix(id, "helpers.map_update_elem.hash") || strings.HasPrefix(id, "helpers.map_delete_elem.hash") ||
			strings.HasPrefix(id, "classes.") || strings.HasPrefix(id, "memory.") || id == "per_packet"
	}})
	if err != nil {
		t.Fatal(err)
	}
	var insert, stream *Measurement
	for _, m := range res.Measurements {
		if m.Err != nil {
			t.Errorf("%s: %v", m.ID(), m.Err)
		}
		switch m.ID() {
		case "helpers.map_update_elem.hash/insert":
			insert = m
		case "helpers.map_update_elem.hash/insert_stream":
			stream = m
		}
	}
	if insert == nil || stream == nil {
		t.Fatalf("insert %v, streamed insert %v", insert, stream)
	}
	tg, err := res.Target("host-test", Throughput)
	if err != nil {
		t.Fatal(err)
	}
	got := tg.HelperOutcomes["map_update_elem"]["hash"][target.OutcomeInsert][0]
	t.Logf("insert %.1f ns, streamed %.1f ns, priced %.1f ns", insert.Spread.High, stream.Spread.High, got)
	if want := max(insert.Spread.High, stream.Spread.High); math.Abs(got-want) > 0.01*want {
		t.Errorf("insert priced %g, want the dearer variant's %g (the target keeps 3 digits)", got, want)
	}
}
