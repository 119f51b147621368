package calibrate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dpperf/dpperf/target"
)

// Models: how instruction classes with both micro-programs are priced.
const (
	Throughput = "throughput" // independent operations: what a superscalar core sustains
	Latency    = "latency"    // dependent chains: every instruction waits for the previous
	// Chain prices classes by their throughput and, in the target's chain
	// section, the instructions of each block's longest dependency chain
	// by their latency (target.Chain).
	Chain = "chain"
)

// Keys of the chain micro-programs: a load on a dependency chain
// (target.ChainLoad), a spill and fill of a stack slot (target.ChainStack).
const (
	chainLoadKey  = "chain.load"
	chainStackKey = "chain.stack"
)

// floor is the least cost written: a measured difference below it is noise
// around a cost the core hides entirely.
const floor = 0.01

// deriver picks, for each cost, the dearest of its measured variants.
type deriver struct {
	res    *Result
	model  string
	spread map[string]target.Spread
	missed []string
}

// pick returns the cost measured under key (the High of its dearest
// variant; under Throughput and Chain, chains only when nothing else
// measured it).
func (d *deriver) pick(key string) (float64, bool) {
	var best *Measurement
	indep := false
	for _, m := range d.res.Measurements {
		if m.Key == key && m.Err == nil && !m.Chain {
			indep = true
		}
	}
	for _, m := range d.res.Measurements {
		if m.Key != key || m.Err != nil || (m.Chain && indep && d.model != Latency) {
			continue
		}
		if best == nil || m.Spread.High > best.Spread.High {
			best = m
		}
	}
	if best == nil {
		d.missed = append(d.missed, key)
		return 0, false
	}
	d.spread[key] = best.Spread
	return best.Spread.High, true
}

// Target turns the measurements into a target named name, of the shape
// of the built-in x86-64 target; costs nothing measured keep that
// target's estimates and are listed as estimated. model is Throughput or
// Latency.
func (r *Result) Target(name, model string) (*target.Target, error) {
	if model != Throughput && model != Latency && model != Chain {
		return nil, fmt.Errorf("calibrate: model must be %s, %s or %s, got %q", Throughput, Latency, Chain, model)
	}
	t, err := target.Load("x86-64")
	if err != nil {
		return nil, err
	}
	d := &deriver{res: r, model: model, spread: map[string]target.Spread{}}
	const cpu = 0 // the built-in x86-64 target's one component
	estimated := map[string]bool{}
	set := func(v *target.Vec, key string, x float64, ok bool) {
		if !ok {
			estimated[key] = true
			return
		}
		*v = target.Vec{}
		v[cpu] = RoundUp(x, floor)
	}
	vec := func(x float64) target.Vec {
		var v target.Vec
		v[cpu] = RoundUp(x, floor)
		return v
	}
	x, ok := d.pick("per_packet")
	set(&t.PerPacket, "per_packet", x, ok)
	d.pick(SpeedKey) // no cost: its spread is kept for timing beside replays
	for _, c := range []string{"alu32", "alu64", "shift32", "shift64", "shift64_reg", "mul", "div", "mod", "swap", "ld_imm64", "jump"} {
		v := t.Classes[c]
		x, ok := d.pick("classes." + c)
		set(&v, "classes."+c, x, ok)
		t.Classes[c] = v
	}
	if model == Chain {
		r.deriveChain(d, t, vec)
	}
	// A call and its return come in pairs on every path: each is half the
	// pair. The main program's exit costs nothing of its own: per_packet
	// is the time of a program that exits, so its epilogue and return are
	// in per_packet already (pricing them again added 6.4 ns to every path
	// on the AMD guest, where a return goes through a return thunk).
	if x, ok := d.pick("call+return"); ok {
		t.Classes["call"], t.Classes["return"], t.Classes["exit"] = vec(x/2), vec(x/2), target.Vec{}
	} else {
		estimated["classes.call"], estimated["classes.return"], estimated["classes.exit"] = true, true, true
	}
	// Conditional jumps: cond + not_taken and cond + taken must cover
	// the measured not-taken and taken jumps of both widths.
	nt64, ok1 := d.pick("cond64.not_taken")
	nt32, ok2 := d.pick("cond32.not_taken")
	tk64, ok3 := d.pick("cond64.taken")
	tk32, ok4 := d.pick("cond32.taken")
	if ok1 && ok2 && ok3 && ok4 {
		nt := max(min(nt64, nt32)/2, floor)
		c64, c32 := max(nt64-nt, floor), max(nt32-nt, floor)
		t.NotTaken, t.Classes["cond64"], t.Classes["cond32"] = vec(nt), vec(c64), vec(c32)
		t.Taken = vec(max(tk64-RoundUp(c64, floor), tk32-RoundUp(c32, floor), floor))
	} else {
		estimated["branch"] = true
	}
	r.deriveMemory(d, t, vec, estimated)
	r.deriveHelpers(d, t, vec, estimated)
	r.deriveOutcomes(d, t, vec)
	notes := r.derivePCV(d, t, vec, estimated)
	t.Estimated = estimated
	t.Name = name
	t.Basis = target.BasisCalibrated
	key := ThisHost()
	cpuName, kernel := key.CPU, key.Kernel
	date := r.Date.UTC().Format("2006-01-02")
	t.Description = fmt.Sprintf("x86-64 host core calibrated with BPF_PROG_TEST_RUN: %s, Linux %s, %s", cpuName, kernel, date)
	model0 := "independent operations (throughput)"
	switch model {
	case Latency:
		model0 = "dependent chains (latency)"
	case Chain:
		model0 = "independent operations (throughput), each block's longest dependency chain at its latency (chain)"
	}
	t.Source = fmt.Sprintf("measured by dpperf targets calibrate: each cost is the p%g of %d interleaved runs on CPU %d "+
		"of XDP micro-programs under BPF_PROG_TEST_RUN (difference of N+K and N copies); instruction classes as %s; "+
		"the dearest variant of each cost (calibrate/method.md); estimated: copied from the built-in x86-64 table",
		r.Options.Percentile, r.Options.Runs, r.Options.CPU, model0)
	t.Calibration = &target.Calibration{
		CPU: cpuName, Microcode: key.Microcode, Kernel: kernel, JIT: key.JIT,
		Date: r.Date.UTC().Format("2006-01-02T15:04:05Z"), Processor: r.Options.CPU,
		Runs: r.Options.Runs, Percentile: r.Options.Percentile, Model: model, Spread: d.spread, Notes: notes,
	}
	typ, err := r.typical()
	if err != nil {
		return nil, err
	}
	t.Calibration.TypicalSpread = typ
	return t, nil
}

// typical is the spread of every cost from the runs as measured, under
// the throughput model: nil when no run was carried to the slow state
// (then Spread is the runs as measured).
func (r *Result) typical() (map[string]target.Spread, error) {
	carried := false
	c := &Result{Options: r.Options, Date: r.Date, Elapsed: r.Elapsed}
	for _, m := range r.Measurements {
		cm := *m
		if m.SlowRuns != nil {
			carried = true
			cm.Spread, cm.SlowRuns = m.Typical, nil
		}
		c.Measurements = append(c.Measurements, &cm)
	}
	if !carried {
		return nil, nil
	}
	t, err := c.Target("typical", Throughput)
	if err != nil {
		return nil, err
	}
	return t.Calibration.Spread, nil
}

// deriveMemory prices loads, stores and atomics per region. Accesses the
// verifier refuses in XDP programs are priced as the dearest region and
// marked unsupported; the unknown region is the dearest of all.
func (r *Result) deriveMemory(d *deriver, t *target.Target, vec func(float64) target.Vec, estimated map[string]bool) {
	refused := map[string]string{
		"packet.atomic": "the verifier refuses atomics on packet memory",
		"ctx.store":     "the verifier refuses writes to the XDP context",
		"ctx.atomic":    "the verifier refuses atomics on the context",
	}
	if t.Unsupported == nil {
		t.Unsupported = map[string]string{}
	}
	worst := map[string]float64{}
	for _, region := range []string{"packet", "stack", "ctx", "map_value"} {
		for _, kind := range []string{"load", "store", "atomic"} {
			if _, no := refused[region+"."+kind]; no {
				continue
			}
			key := "memory." + region + "." + kind
			x, ok := d.pick(key)
			if !ok {
				estimated[key] = true
				worst[kind] = max(worst[kind], t.Memory[region][kind].Cost[0])
				continue
			}
			t.Memory[region][kind] = target.Access{Cost: vec(x)}
			worst[kind] = max(worst[kind], x)
		}
	}
	for rk, why := range refused {
		region, kind, _ := strings.Cut(rk, ".")
		t.Memory[region][kind] = target.Access{Cost: vec(worst[kind])}
		t.Unsupported[rk] = why + "; priced as the dearest region"
	}
	for _, kind := range []string{"load", "store", "atomic"} {
		t.Memory["unknown"][kind] = target.Access{Cost: vec(worst[kind])}
	}
}

// deriveHelpers prices each measured helper per map type; a helper's
// default is its dearest map type, the helpers' default the dearest
// helper (or the built-in estimate, if dearer).
func (r *Result) deriveHelpers(d *deriver, t *target.Target, vec func(float64) target.Vec, estimated map[string]bool) {
	measured, seen := map[string]bool{}, map[string]bool{}
	worstAll := t.Helpers["default"]["default"][0]
	for _, m := range r.Measurements {
		rest, ok := strings.CutPrefix(m.Key, "helpers.")
		if !ok || seen[m.Key] {
			continue
		}
		seen[m.Key] = true
		x, ok := d.pick(m.Key)
		if !ok {
			continue
		}
		helper, mapType, byMap := strings.Cut(rest, ".")
		if !byMap {
			mapType = "default"
		}
		if !measured[helper] {
			measured[helper] = true
			t.Helpers[helper] = map[string]target.Vec{"default": vec(x)}
		}
		t.Helpers[helper][mapType] = vec(x)
		if byMap {
			t.Helpers[helper]["default"] = vec(max(t.Helpers[helper]["default"][0], x))
		}
		worstAll = max(worstAll, x)
	}
	t.Helpers["default"] = map[string]target.Vec{"default": vec(worstAll)}
	// Map helpers measured at several key sizes are priced by key size too.
	bySize := map[[2]string][]*Measurement{} // helper, map type → variants keyN
	for _, m := range r.Measurements {
		rest, ok := strings.CutPrefix(m.Key, "helpers.")
		if ok && strings.HasPrefix(m.Variant, "key") && m.Err == nil {
			helper, mapType, _ := strings.Cut(rest, ".")
			bySize[[2]string{helper, mapType}] = append(bySize[[2]string{helper, mapType}], m)
		}
	}
	t.HelperKeys = map[string]map[string][]target.KeyCost{}
	for hm, ms := range bySize {
		if len(ms) < 2 {
			continue // one size: the map type's cost says it all
		}
		// An outcome dearer than a hit with the largest key (a miss, an
		// insert; outcomeBenches) raises every size by the difference.
		extra, largest := 0.0, 0.0
		for _, m := range ms {
			largest = max(largest, m.Spread.High)
		}
		if sp, ok := d.spread["helpers."+hm[0]+"."+hm[1]]; ok {
			extra = max(0, sp.High-largest)
		}
		var ks []target.KeyCost
		for _, m := range ms {
			bytes, err := strconv.Atoi(strings.TrimPrefix(m.Variant, "key"))
			if err != nil {
				continue
			}
			ks = append(ks, target.KeyCost{Bytes: bytes, Cost: vec(m.Spread.High + extra)})
			d.spread[fmt.Sprintf("helper_keys.%s.%s.%d", hm[0], hm[1], bytes)] = m.Spread
		}
		slices.SortFunc(ks, func(a, b target.KeyCost) int { return a.Bytes - b.Bytes })
		if t.HelperKeys[hm[0]] == nil {
			t.HelperKeys[hm[0]] = map[string][]target.KeyCost{}
		}
		t.HelperKeys[hm[0]][hm[1]] = ks
	}
	for h := range t.Helpers {
		if !measured[h] {
			estimated["helpers."+h] = true
		}
	}
}

// derivePCV prices the PCVs per unit per map type (pcvKinds). A
// difference that is not positive (the PCV costs nothing this host can
// tell apart from noise) is written as the floor, and a note says so;
// PCVs not measured keep the built-in estimate.
func (r *Result) derivePCV(d *deriver, t *target.Target, vec func(float64) target.Vec, estimated map[string]bool) []string {
	var notes []string
	if t.PCV == nil {
		t.PCV = map[string]map[string]target.Vec{}
	}
	for _, k := range pcvKinds {
		mt := target.MapTypeName(k.typ)
		for _, name := range k.names {
			key := "pcv." + mt + "." + name
			x, ok := d.pick(key)
			if !ok {
				estimated[key] = true
				continue
			}
			if x <= 0 {
				notes = append(notes, fmt.Sprintf("%s: the p%g difference is %.3g ns, not positive: written as %g ns",
					key, r.Options.Percentile, x, floor))
			}
			if t.PCV[mt] == nil {
				t.PCV[mt] = map[string]target.Vec{}
			}
			t.PCV[mt][name] = vec(x)
		}
	}
	return notes
}

// hostCPU is the model name of the first processor in /proc/cpuinfo.
func hostCPU() string {
	if name := cpuinfoField("model name"); name != "unknown" {
		return name
	}
	return "unknown CPU"
}

func hostKernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// deriveChain writes the chain section: each class's dearest dependent
// chain, a load that waits for the previous one and a spill and fill. Its
// spreads are kept under "chain.KEY".
func (r *Result) deriveChain(d *deriver, t *target.Target, vec func(float64) target.Vec) {
	t.Chain = map[string]target.Vec{}
	for _, key := range target.ChainKeys {
		var best *Measurement
		for _, m := range r.Measurements {
			if m.Err == nil && m.Chain && (m.Key == "classes."+key || m.Key == "chain."+key) &&
				(best == nil || m.Spread.High > best.Spread.High) {
				best = m
			}
		}
		if best != nil {
			t.Chain[key] = vec(best.Spread.High)
			d.spread["chain."+key] = best.Spread
		}
	}
}
