package fit

import (
	"math"
	"os"
	"strings"
	"testing"
)

func readProfile(t testing.TB, name string) *Profile {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ReadProfile(f, name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const qd1, qd32 = "../../examples/profile/base-qd1.json", "../../examples/profile/base-qd32.json"

// TestFitPathOneLoad: a central stage fitted alone is an M/M/1 queue
// whose mean latency at the profile's load is the measured one, so
// s = T/(1 + λT); the fitted path predicts the profile it was fitted to.
func TestFitPathOneLoad(t *testing.T) {
	p := readProfile(t, qd1)
	g := &p.Groups[0]
	if g.Key != "read 4KiB" || g.Bytes != 4096 || len(g.Stages) != 3 || g.Stages[2].Name != "D2C" {
		t.Fatalf("group %+v", g)
	}
	pf, err := FitPath([]*Profile{p}, PathOptions{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	lam := g.IOPS
	for i, s := range pf.Stages {
		T := g.Stages[i].Latency
		want := T / (1 + lam*T/s.Parallelism)
		if got := s.Parallelism * g.Bytes / s.Throughput; math.Abs(got-want) > 1e-3*want {
			t.Errorf("%s: service %v, want %v", s.Name, got, want)
		}
	}
	if pf.Stages[0].Parallelism != 1 || pf.Stages[2].Parallelism != 2 {
		t.Errorf("engines %v, %v", pf.Stages[0].Parallelism, pf.Stages[2].Parallelism)
	}
	rows, err := pf.Check(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if math.Abs(r.Error()) > 1e-3 {
			t.Errorf("%s: model %v, measured %v", r.Stage, r.Model, r.Measured)
		}
	}
}

// TestFitPathTwoLoads: with both loads the split stage's engines are
// fitted (2 for the loop device), and the fitted path reproduces the
// heavier load's device latency within 1%.
func TestFitPathTwoLoads(t *testing.T) {
	a, b := readProfile(t, qd1), readProfile(t, qd32)
	pf, err := FitPath([]*Profile{a, b}, PathOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := pf.Stages[2].Parallelism; d != 2 {
		t.Errorf("D2C engines %v, want 2", d)
	}
	rows, err := pf.Check(b)
	if err != nil {
		t.Fatal(err)
	}
	if e := rows[2].Error(); math.Abs(e) > 0.01 {
		t.Errorf("D2C at qd32: %+.3f", e)
	}
	if _, err := pf.Spec(); err != nil {
		t.Fatal(err)
	}
}

func TestReadProfileErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{}`, `schema: want "dpperf.profile/v1"`},
		{`{"schema": "dpperf.profile/v1"}`, "groups: none"},
		{`{"schema": "dpperf.profile/v1", "groups": [{"bytes": 0}]}`, "groups[0].bytes"},
		{`{"schema": "dpperf.profile/v1", "groups": [{"bytes": 4096}]}`, "groups[0].iops"},
		{`{"schema": "dpperf.profile/v1", "groups": [{"bytes": 4096, "iops": 5}]}`, "groups[0].stages: none"},
		{`{"schema": "dpperf.profile/v1", "groups": [{"bytes": 4096, "iops": 5, "stages": [{"name": "D2C"}]}]}`, "groups[0].stages[0].latency.mean_ns"},
	} {
		_, err := ReadProfile(strings.NewReader(c.in), "p.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "p.json: ") {
			t.Errorf("%s: got %v, want %q", c.in, err, c.want)
		}
	}
	p := readProfile(t, qd1)
	if _, err := p.Group("write 8KiB"); err == nil || !strings.Contains(err.Error(), `no group "write 8KiB"`) {
		t.Errorf("unknown group: %v", err)
	}
}

// FuzzReadProfile: any input gives groups with positive sizes, rates and
// stage latencies, or an error naming the file; a path fitted to what it
// reads has a valid specification.
func FuzzReadProfile(f *testing.F) {
	for _, name := range []string{"testdata/profile-min.json", qd1} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ReadProfile(strings.NewReader(string(data)), "f")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f: ") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		for _, g := range p.Groups {
			if !(g.Bytes > 0 && g.IOPS > 0) || len(g.Stages) == 0 {
				t.Fatalf("group %+v", g)
			}
		}
	})
}

const nvmeQD8 = "../../examples/model/profile-nvme-tcp/qd8.json"

// TestEngines: the engines of a split stage estimated from one profile,
// worked by hand from the bundled profiles.
func TestEngines(t *testing.T) {
	for _, c := range []struct {
		file, stage string
		want        float64
	}{
		// D2C queues (median 277.5µs > 1.25 × min 15.151µs): busy engines
		// 78420.6/s × 15.151µs = 1.19, so 2 (the fit on both loads finds 2).
		{qd32, "D2C", 2},
		// iodepth 1: 23576/s × 19.01µs = 0.45, so 1.
		{qd1, "D2C", 1},
		// null_blk's four tags: the stage does not queue (median 3.580ms
		// ≤ 1.25 × min 3.024ms); 711.4/s × 963/1000 requests × 4.457ms
		// = 3.05 requests in it, so 4.
		{nvmeQD8, "target-device", 4},
		// queues (median 20µs > 1.25 × 8µs): 711.4/s × 8µs ≪ 1.
		{nvmeQD8, "target-queue", 1},
	} {
		p := readProfile(t, c.file)
		g := &p.Groups[0]
		var st *ProfileStage
		for i := range g.Stages {
			if g.Stages[i].Name == c.stage {
				st = &g.Stages[i]
			}
		}
		if st == nil {
			t.Fatalf("%s: no stage %s", c.file, c.stage)
		}
		if got := Engines(g, st); got != c.want {
			t.Errorf("%s %s: %v engines, want %v", c.file, c.stage, got, c.want)
		}
	}
	// Without a minimum and a median (profile-min.json) the estimate is 1.
	p := readProfile(t, "testdata/profile-min.json")
	if got := Engines(&p.Groups[0], &p.Groups[0].Stages[1]); got != 1 {
		t.Errorf("profile-min: %v engines, want 1", got)
	}
}

// TestFitPathPartialStages: requests that missed an event between two
// stages form a merged stage ("target-device+resp-net-recv", 37 of
// 1000); it is left out of the path, so profiles at loads with and
// without it fit one model.
func TestFitPathPartialStages(t *testing.T) {
	a, b := readProfile(t, "../../examples/model/profile-nvme-tcp/qd1.json"), readProfile(t, nvmeQD8)
	g := &b.Groups[0]
	if len(g.Partial) != 1 || g.Partial[0].Name != "target-device+resp-net-recv" || g.Partial[0].Requests != 37 {
		t.Fatalf("partial stages %+v", g.Partial)
	}
	if len(g.Stages) != 6 || len(a.Groups[0].Stages) != 6 {
		t.Fatalf("stages %s and %s", stageNames(&a.Groups[0]), stageNames(g))
	}
	pf, err := FitPath([]*Profile{b}, PathOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := pf.Stages[3].Parallelism; pf.Stages[3].Name != "target-device" || d != 4 {
		t.Errorf("%s: %v engines, want 4", pf.Stages[3].Name, d)
	}
	if _, err := pf.Check(a); err != nil {
		t.Error(err)
	}
}
