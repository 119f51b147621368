package layers

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// A Layer is a group of packages with the same import rights.
type Layer string

// The layers, from the top.
const (
	CLI      Layer = "cli"
	Kernel   Layer = "kernel"
	Analysis Layer = "analysis"
	Runtime  Layer = "runtime"
	Base     Layer = "base"
	Testing  Layer = "testing"
	Example  Layer = "example"
)

// mayImport lists, for each layer, the layers its packages may import.
var mayImport = map[Layer][]Layer{
	CLI:      {CLI, Kernel, Analysis, Runtime, Base},
	Kernel:   {Kernel, Analysis, Runtime, Base},
	Analysis: {Analysis, Base},
	Runtime:  {Runtime, Base},
	Base:     {Base},
	Testing:  {Testing, Kernel, Analysis, Runtime, Base},
	Example:  {Kernel, Analysis, Runtime, Base},
}

// Of maps each package of the module (path below the module) to its layer.
var Of = map[string]Layer{
	"cmd/dpperf":              CLI,
	"internal/cmd/evidence":   CLI,
	"internal/cmd/mutants":    CLI,
	"internal/cmd/fleetcheck": CLI,
	"internal/cmd/twohost":    CLI,
	"internal/cli":            CLI,

	"calibrate":         Kernel,
	"classtime":         Kernel,
	"measure":           Kernel,
	"testrun":           Kernel,
	"record/kernel":     Kernel,
	"record/capture":    Kernel,
	"profile/collect":   Kernel,
	"profile/profiling": Kernel,
	"internal/tracefs":  Kernel,

	"cfg":                 Analysis,
	"target/nfp":          Analysis,
	"interp":              Analysis,
	"interp/inputs":       Analysis,
	"symex":               Analysis,
	"bound":               Analysis,
	"perfiface":           Analysis,
	"replay":              Analysis,
	"replay/dist":         Analysis,
	"replay/rootcause":    Analysis,
	"model/analytic":      Analysis,
	"model/sim":           Analysis,
	"model/compare":       Analysis,
	"model/fit":           Analysis,
	"model/opt":           Analysis,
	"model/sweep":         Analysis,
	"model/lognic":        Analysis,
	"model/program":       Analysis,
	"profile/analyze":     Analysis,
	"profile/hostjoin":    Analysis,
	"profile/peer":        Analysis,
	"profile/tracetext":   Analysis,
	"profile/ctftrace":    Analysis,
	"profile/report":      Analysis,
	"record/analyze":      Analysis,
	"record/tracecompass": Analysis,

	"record":                  Runtime,
	"record/pipeline":         Runtime,
	"record/internal/cputime": Runtime,

	"internal/fail":           Base,
	"internal/atomicfile":     Base,
	"units":                   Base,
	"stats":                   Base,
	"smt":                     Base,
	"pathenum":                Base,
	"bpfprog":                 Base,
	"mapstate":                Base,
	"target":                  Base,
	"record/trace":            Base,
	"record/ctf":              Base,
	"record/pcapng":           Base,
	"profile/event":           Base,
	"profile/path":            Base,
	"profile/task":            Base,
	"model/internal/yamlnode": Base,
	"model/flow":              Base,
	"model/queue":             Base,
	"model/spec":              Base,

	"interp/interptest": Testing,
	"internal/testobj":  Testing,
	"internal/golden":   Testing,
	"internal/bpftest":  Testing,
	"internal/layers":   Testing,

	"examples/interface/report":   Example,
	"examples/interface/workload": Example,
	"examples/profile/fleet":      Example,
}

// kernelOnly are outside packages that load, attach or read the kernel's
// tracing state; only the kernel layer, the runtime (thread priorities and
// CPU times), the CLI and test helpers use them.
var kernelOnly = []string{
	"github.com/cilium/ebpf/link",
	"github.com/cilium/ebpf/ringbuf",
	"github.com/cilium/ebpf/perf",
	"github.com/cilium/ebpf/rlimit",
	"golang.org/x/sys/unix",
}

// notImports are single edges the layers alone would allow but the design
// forbids, each with its reason.
var notImports = []struct{ from, to, why string }{
	{"profile/collect", "profile/analyze", "the collector emits the record type of a base package; analysis happens after collection"},
	{"profile/collect", "profile/report", "the collector emits the record type of a base package; reports are rendered from analyses"},
	{"record/kernel", "record/analyze", "the kernel recorder writes CTF; reading it back is analysis"},
}

// Check returns one line per broken rule in graph, which maps each package
// of module (by full import path) to its imports; nil when every rule holds.
func Check(module string, graph map[string][]string) []string {
	var bad []string
	rel := func(p string) (string, bool) {
		if p == module {
			return ".", true
		}
		r, ok := strings.CutPrefix(p, module+"/")
		return r, ok
	}
	for pkg, imports := range graph {
		from, ok := rel(pkg)
		if !ok {
			continue
		}
		layer, known := Of[from]
		if !known {
			bad = append(bad, fmt.Sprintf("%s: package in no layer (add it to layers.Of)", from))
			continue
		}
		for _, imp := range imports {
			to, ours := rel(imp)
			if !ours {
				if slices.Contains(kernelOnly, imp) && (layer == Analysis || layer == Base || layer == Example) {
					bad = append(bad, fmt.Sprintf("%s (%s) imports %s, which only the kernel layer may use", from, layer, imp))
				}
				continue
			}
			toLayer, known := Of[to]
			if !known {
				continue // reported as a package of its own
			}
			if !slices.Contains(mayImport[layer], toLayer) {
				bad = append(bad, fmt.Sprintf("%s (%s) imports %s (%s)", from, layer, to, toLayer))
			}
			for _, n := range notImports {
				if n.from == from && n.to == to {
					bad = append(bad, fmt.Sprintf("%s imports %s: %s", from, to, n.why))
				}
			}
		}
	}
	sort.Strings(bad)
	return bad
}
