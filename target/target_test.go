package target

import (
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestBuiltinsLoad(t *testing.T) {
	names := Names()
	if len(names) < 2 {
		t.Fatalf("built-in targets: %v", names)
	}
	for _, n := range names {
		tg, err := Load(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if tg.Name != n {
			t.Errorf("file %s.yaml names itself %q", n, tg.Name)
		}
	}
}

// TestNFPPublishedConstants pins the document's constants.
func TestNFPPublishedConstants(t *testing.T) {
	tg, err := Load("nfp-agilio-cx")
	if err != nil {
		t.Fatal(err)
	}
	cores, dram := tg.ComponentIndex("cores"), tg.ComponentIndex("dram")
	checks := []struct {
		what      string
		got, want float64
	}{
		{"core capacity (800 MHz x 50)", tg.Components[cores].Capacity, 40e9},
		{"DRAM engine capacity", tg.Components[dram].Capacity, 800e6},
		{"per-packet overhead", tg.PerPacket[cores], 224},
		{"MAC limit", tg.PacketRate, 54.4e6},
		{"line rate", tg.LineRate, 80e9},
		{"min packet", float64(tg.MinPacket), 60},
		{"taken branch", tg.Taken[cores], 4},
		{"not-taken branch", tg.NotTaken[cores], 1},
		{"jump", tg.Classes["jump"][cores], 4},
		{"blocking minimum", tg.BlockMin, 3},
		{"packet latency", tg.Memory["packet"]["load"].Latency, 16},
		{"DRAM latency", tg.Memory["map_value"]["load"].Latency, 25},
		{"DRAM read", tg.Memory["map_value"]["load"].Cost[dram], 4.052463035413383},
		{"DRAM atomic add", tg.Memory["map_value"]["atomic"].Cost[dram], 3.219818925010342},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %g, want %g", c.what, c.got, c.want)
		}
	}
	// ≥ 197.4 Mops/s of reads and ≥ 248.5 Mops/s of atomic adds.
	if r := 800e6 / 4.052463035413383; math.Abs(r-197.4e6) > 0.05e6 {
		t.Errorf("DRAM read rate %g", r)
	}
}

func TestParseErrors(t *testing.T) {
	good, err := os.ReadFile("targets/x86-64.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ from, to, msg string }{
		{"alu64: {cpu: 0.3}", "alu64: {gpu: 0.3}", `line 23: classes.alu64: unknown component "gpu"`},
		{"basis: estimated", "basis: guessed", "basis must be calibrated or estimated"},
		{"alu64: {cpu: 0.3}", "alu64: {cpu: -1}", "negative cost"},
		{"alu64: {cpu: 0.3}", "", `classes: missing "alu64"`},
		{"  mul: {cpu: 1.0}", "  mul: {cpu: 1.0}\n  fma: {cpu: 1}", `unknown class "fma"`},
		{"min_packet: 60", "min_packet: 0", "min_packet must be positive"},
		{"name: x86-64", "nam: x86-64", "field nam not found"},
		{"    capacity: 1e9", "    capacity: 0", "positive capacity"},
		{"  default: {default: {cpu: 50}}", "", `helpers: missing "default"`},
	}
	for _, c := range cases {
		if !strings.Contains(string(good), c.from) {
			t.Fatalf("test case: %q not in the file", c.from)
		}
		_, err := Parse([]byte(strings.Replace(string(good), c.from, c.to, 1)))
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q -> %q: error %v, want %q", c.from, c.to, err, c.msg)
		}
	}
	if _, err := Load("no-such-target"); err == nil || !strings.Contains(err.Error(), "built-in targets: nfp-agilio-cx, nfp-agilio-cx-fwhash, x86-64") {
		t.Errorf("unknown target: %v", err)
	}
}

func TestRate(t *testing.T) {
	tg, _ := Load("nfp-agilio-cx")
	r := tg.Rate(Vec{400, 0})
	if r[0] != 1e8 || !math.IsInf(r[1], 1) {
		t.Fatalf("rates %v", r)
	}
}

func FuzzParse(f *testing.F) {
	for _, n := range Names() {
		data, _ := Raw(n)
		f.Add(data)
	}
	if data, err := os.ReadFile("testdata/calibrated.yaml"); err == nil {
		f.Add(data)
	}
	// A file that parses is a target Marshal writes back faithfully:
	// parse, write, parse gives the same target.
	f.Fuzz(func(t *testing.T, data []byte) {
		tg, err := Parse(data)
		if err != nil {
			return
		}
		out, err := Marshal(tg)
		if err != nil {
			t.Fatalf("Marshal of a parsed target: %v", err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("the written target does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(tg, back) {
			t.Fatalf("read back differs\n%#v\n%#v\n%s", tg, back, out)
		}
	})
}

// TestMarshalRoundTrip: every built-in target, written and read back, is
// the same target; so is one with a calibration.
func TestMarshalRoundTrip(t *testing.T) {
	for _, n := range Names() {
		tg, err := Load(n)
		if err != nil {
			t.Fatal(err)
		}
		if n == "x86-64" {
			tg.Calibration = &Calibration{CPU: "Example CPU: 8 cores", Kernel: "6.1.0", Date: "2025-01-02T03:04:05Z",
				Runs: 5, Percentile: 90, Model: "throughput", Spread: map[string]Spread{
					"classes.alu64": {Min: -0.01, Median: 0.12, High: 0.125, Max: 0.5, Variant: "indep"},
					"per_packet":    {Min: 7, Median: 8, High: 9, Max: 12},
				},
				Notes: []string{"pcv.hash.traversals: the p90 difference is -0.2 ns, not positive: written as 0.01 ns"}}
		}
		data, err := Marshal(tg)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", n, err, data)
		}
		if !reflect.DeepEqual(tg, back) {
			t.Errorf("%s: read back differs\n%#v\n%#v\n%s", n, tg, back, data)
		}
	}
}

func TestCalibrationChecked(t *testing.T) {
	good, _ := os.ReadFile("targets/x86-64.yaml")
	for _, c := range []struct{ add, msg string }{
		{"calibration: {runs: 0, percentile: 90}", "runs must be positive"},
		{"calibration: {runs: 3, percentile: 90, spread: {per_packet: {min: 2, median: 1, high: 3, max: 4}}}", "calibration.spread.per_packet"},
		{"calibration: {runs: 3, percentile: 90, colour: red}", "field colour not found"},
	} {
		_, err := Parse(append(slices.Clone(good), "\n"+c.add+"\n"...))
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want %q", c.add, err, c.msg)
		}
	}
}

// TestCalibratedFile: a file written by dpperf targets calibrate on a real
// host loads, with its spread.
func TestCalibratedFile(t *testing.T) {
	tg, err := Load("testdata/calibrated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := tg.Calibration
	if c == nil || c.Runs != 21 || c.Model != "throughput" || len(c.Spread) < 50 {
		t.Fatalf("calibration %+v", c)
	}
	if s := c.Spread["classes.alu64"]; s.Variant != "indep" || s.High > tg.Classes["alu64"][0] {
		t.Errorf("alu64 costs %g, spread %+v", tg.Classes["alu64"][0], s)
	}
}

func TestHelperKeyCost(t *testing.T) {
	tg, err := Load("x86-64")
	if err != nil {
		t.Fatal(err)
	}
	v := func(x float64) Vec { return Vec{x} }
	// 16 bytes measured cheaper than 4 (noise): a longer key never costs less.
	tg.HelperKeys = map[string]map[string][]KeyCost{"map_lookup_elem": {"hash": {{4, v(20)}, {16, v(18)}, {40, v(30)}}}}
	for _, c := range []struct {
		bytes  int
		want   float64
		extrap bool
	}{{1, 20, false}, {4, 20, false}, {8, 20, false}, {16, 20, false}, {17, 30, false}, {40, 30, false}, {52, 36, true}} {
		got, ok, ex := tg.HelperKeyCost("map_lookup_elem", "hash", c.bytes)
		if !ok || got[0] != c.want || ex != c.extrap {
			t.Errorf("%d-byte key: cost %g (ok %v, extrapolated %v), want %g (extrapolated %v)", c.bytes, got[0], ok, ex, c.want, c.extrap)
		}
	}
	// Without a key table, the map type's cost.
	want, _ := tg.HelperCost("map_lookup_elem", "array")
	if got, ok, _ := tg.HelperKeyCost("map_lookup_elem", "array", 4); !ok || got != want {
		t.Errorf("array lookup %v, want %v", got, want)
	}
	// The table survives a round trip through the file format and scaling.
	data, err := Marshal(tg.Scaled(map[string]float64{GroupHelper: 0.5}))
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := back.HelperKeyCost("map_lookup_elem", "hash", 40); got[0] != 15 {
		t.Errorf("after scaling by 0.5 and a round trip: %g, want 15", got[0])
	}
}

func TestScaledGroups(t *testing.T) {
	tg, err := Load("x86-64")
	if err != nil {
		t.Fatal(err)
	}
	s := tg.Scaled(map[string]float64{GroupALU: 0.5, GroupBranch: 2, GroupPerPacket: 0})
	if s.Classes["alu64"][0] != tg.Classes["alu64"][0]/2 || s.Classes["cond64"][0] != 2*tg.Classes["cond64"][0] ||
		s.Taken[0] != 2*tg.Taken[0] || s.PerPacket[0] != 0 || s.Classes["call"] != tg.Classes["call"] {
		t.Errorf("scaled costs wrong: alu64 %v cond64 %v taken %v per_packet %v call %v", s.Classes["alu64"], s.Classes["cond64"], s.Taken, s.PerPacket, s.Classes["call"])
	}
	if tg.Classes["alu64"][0] == s.Classes["alu64"][0] {
		t.Error("scaling changed the original target")
	}
	// Every cost is in exactly one group: the groups' Only targets add up.
	sum := 0.0
	for _, g := range Groups {
		o := tg.Only(g)
		sum += o.Classes["mul"][0] + o.Memory["packet"]["load"].Cost[0] + o.PerPacket[0]
	}
	if want := tg.Classes["mul"][0] + tg.Memory["packet"]["load"].Cost[0] + tg.PerPacket[0]; sum != want {
		t.Errorf("groups add up to %g, want %g", sum, want)
	}
}

// TestWithGroups: the named groups' costs come from the other target,
// every other cost stays, and neither input changes.
func TestWithGroups(t *testing.T) {
	tg, err := Load("x86-64")
	if err != nil {
		t.Fatal(err)
	}
	from := tg.Scaled(map[string]float64{GroupALU: 3, GroupMapWrite: 3, GroupPerPacket: 3, GroupHelper: 3})
	w := tg.WithGroups(from, GroupMapWrite, GroupPerPacket)
	upd, ok1 := tg.HelperCost("map_update_elem", "hash")
	look, ok2 := tg.HelperCost("map_lookup_elem", "hash")
	if !ok1 || !ok2 || upd[0] <= 0 || look[0] <= 0 {
		t.Fatalf("x86-64 prices no hash update or lookup: %v %v", upd, look)
	}
	gotUpd, _ := w.HelperCost("map_update_elem", "hash")
	gotLook, _ := w.HelperCost("map_lookup_elem", "hash")
	if gotUpd[0] != 3*upd[0] || gotLook[0] != look[0] || w.PerPacket[0] != 3*tg.PerPacket[0] ||
		w.Classes["alu64"] != tg.Classes["alu64"] {
		t.Errorf("update %g (want %g), lookup %g (want %g), per_packet %g (want %g), alu64 %g (want %g)",
			gotUpd[0], 3*upd[0], gotLook[0], look[0], w.PerPacket[0], 3*tg.PerPacket[0], w.Classes["alu64"][0], tg.Classes["alu64"][0])
	}
	if again, _ := tg.HelperCost("map_update_elem", "hash"); again != upd || from.Classes["alu64"][0] != 3*tg.Classes["alu64"][0] {
		t.Error("WithGroups changed a target it was given")
	}
}

// TestBasis: the built-in x86-64 table is an estimate, the NFP target
// rests on published measurements of the NIC, and a file that does not
// say is calibrated exactly when it carries a calibration section.
func TestBasis(t *testing.T) {
	for name, want := range map[string]string{"x86-64": BasisEstimated, "nfp-agilio-cx": BasisCalibrated, "nfp-agilio-cx-fwhash": BasisEstimated} {
		tg, err := Load(name)
		if err != nil || tg.Basis != want {
			t.Errorf("%s: basis %v, %v; want %s", name, tg, err, want)
		}
	}
	good, err := os.ReadFile("targets/x86-64.yaml")
	if err != nil {
		t.Fatal(err)
	}
	unsaid := strings.Replace(string(good), "basis: estimated", "", 1)
	tg, err := Parse([]byte(unsaid))
	if err != nil || tg.Basis != BasisEstimated {
		t.Fatalf("no basis, no calibration: %v, %v", tg, err)
	}
	tg.Calibration = &Calibration{CPU: "c", Kernel: "k", Date: "d", Runs: 1, Percentile: 90, Model: "throughput"}
	tg.Basis = ""
	data, err := Marshal(tg)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := Parse(data); err != nil || back.Basis != BasisCalibrated {
		t.Fatalf("no basis, a calibration: %v, %v", back, err)
	}
}

// TestFitRoundTrip: a fit's record, its expected scales included,
// survives the file format.
func TestFitRoundTrip(t *testing.T) {
	tg, err := Load("testdata/calibrated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := &Fit{Kind: "envelope", Scale: map[string]float64{GroupALU: 0.5, GroupMapWrite: 1.05},
		ExpectedScale: map[string]float64{GroupALU: 0.25, GroupMapWrite: 1}, Programs: []string{"a.o:a"}, Samples: 3,
		Percentile: 50, ErrMin: 0.01, ErrMedian: 0.1, ErrMax: 0.3, Margin: 0.05}
	tg.Calibration.Fit = f
	data, err := Marshal(tg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Calibration.Fit, f) {
		t.Errorf("fit after a round trip %+v, want %+v", back.Calibration.Fit, f)
	}
}
