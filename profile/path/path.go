// Package path answers "which kernel events does a request pass, and what
// lies between them?": it describes I/O paths as data: a chain of stages
// (software switches), each between two observable events, with a queueing
// class, a cause class used for bottleneck localization, and the
// correlation key that tells which events belong to the same request. Paths
// come from YAML (see format.md); two are built in: block and nvme-tcp.
//
// A Path is pure data: it never needs a running kernel.
package path

import (
	"fmt"
	"strings"

	"github.com/dpperf/dpperf/profile/event"
)

// Queue is the queueing class of a stage, after the document's Kendall
// notation models.
type Queue string

// Queueing classes.
const (
	CentralFCFS Queue = "central-fcfs" // G/G/1/Q/X/FCFS: many producers, one FCFS server
	SplitFCFS   Queue = "split-fcfs"   // G/G/X/Q/1/FCFS: work split over X FCFS servers
	CentralPS   Queue = "central-ps"   // G/G/1/Q/X/PS: processor sharing (network stack)
)

// Cause is the class of resource a congested stage points to.
type Cause string

// Cause classes named by compare.
const (
	CauseCPU     Cause = "cpu"
	CauseQueue   Cause = "queue"
	CauseDevice  Cause = "device"
	CauseNetwork Cause = "network"
)

// MaxEvents bounds the events of one path.
const MaxEvents = event.MaxEvents

// KeyField is a field an event can be correlated on.
type KeyField uint8

// The key fields.
const (
	KeyDev KeyField = iota
	KeySector
	KeyQID // NVMe queue id
	KeyCID // NVMe command id
)

// keyFields names the key fields as path files write them.
var keyFields = map[string]KeyField{"dev": KeyDev, "sector": KeySector, "qid": KeyQID, "cid": KeyCID}

// Event is one observable point of the path.
type Event struct {
	Name       string   `yaml:"name"`
	Tracepoint string   `yaml:"tracepoint,omitempty"` // "system:event"
	Kprobe     string   `yaml:"kprobe,omitempty"`     // kernel function
	Key        []string `yaml:"key,omitempty"`        // overrides Path.Key
	Join       string   `yaml:"join,omitempty"`       // event whose record on the same CPU this one joins
	// Args says, for a kprobe, how to fetch each key field from the
	// function's arguments: kprobe_events fetch-args, e.g.
	// cid: "+2(+0($arg1)):u16" (Documentation/trace/kprobetrace.rst).
	Args map[string]string `yaml:"args,omitempty"`
	Doc  string            `yaml:"doc,omitempty"`
	line int
}

// System and name of the tracepoint ("block", "block_rq_issue"); empty for
// kprobe events.
func (e *Event) TraceName() (system, name string) {
	s, n, ok := strings.Cut(e.Tracepoint, ":")
	if !ok {
		return "", e.Tracepoint
	}
	return s, n
}

// Stage is the time between two consecutive events of the path.
type Stage struct {
	Name   string   `yaml:"name"`
	From   string   `yaml:"from"`
	To     string   `yaml:"to"`
	Queue  Queue    `yaml:"queue"`
	Cause  Cause    `yaml:"cause"`
	Side   string   `yaml:"side,omitempty"`   // host, target or both
	Merged []string `yaml:"merged,omitempty"` // finer stages this one contains because no event separates them
	Doc    string   `yaml:"doc,omitempty"`
	line   int
}

// Path is a chain of stages over an ordered list of events.
type Path struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description,omitempty"`
	Key         []string `yaml:"key"`
	Events      []Event  `yaml:"events"`
	Stages      []Stage  `yaml:"stages"`
}

// EventIndex returns the index of the named event, or -1.
func (p *Path) EventIndex(name string) int {
	for i := range p.Events {
		if p.Events[i].Name == name {
			return i
		}
	}
	return -1
}

// EventKey returns the key fields of event i.
func (p *Path) EventKey(i int) []string {
	if len(p.Events[i].Key) > 0 {
		return p.Events[i].Key
	}
	return p.Key
}

// EventKeyFields returns the key fields of event i of a validated path.
func (p *Path) EventKeyFields(i int) []KeyField {
	names := p.EventKey(i)
	fs := make([]KeyField, len(names))
	for j, name := range names {
		fs[j] = keyFields[name]
	}
	return fs
}

// MergedName names the stage that spans events from..to (indexes) when the
// events between them were not observed: the names of the covered stages
// joined by "+".
func (p *Path) MergedName(from, to int) string {
	names := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		names = append(names, p.Stages[i].Name)
	}
	return strings.Join(names, "+")
}

// validate checks the path; errors name the YAML line where one is known.
func (p *Path) validate() error {
	if p.Name == "" {
		return fmt.Errorf("path: missing name")
	}
	if err := checkKey(p.Key); err != nil {
		return fmt.Errorf("path %s: key: %w", p.Name, err)
	}
	if len(p.Events) < 2 {
		return fmt.Errorf("path %s: needs at least two events", p.Name)
	}
	if len(p.Events) > MaxEvents {
		return fmt.Errorf("path %s: %d events, at most %d", p.Name, len(p.Events), MaxEvents)
	}
	seen := map[string]bool{}
	probes := map[string]bool{}
	for i := range p.Events {
		e := &p.Events[i]
		at := fmt.Sprintf("line %d: event %q", e.line, e.Name)
		switch {
		case e.Name == "":
			return fmt.Errorf("line %d: event without a name", e.line)
		case seen[e.Name]:
			return fmt.Errorf("%s: defined twice", at)
		case (e.Tracepoint == "") == (e.Kprobe == ""):
			return fmt.Errorf("%s: give exactly one of tracepoint or kprobe", at)
		case e.Tracepoint != "" && !strings.Contains(e.Tracepoint, ":"):
			return fmt.Errorf("%s: tracepoint %q is not system:event", at, e.Tracepoint)
		}
		probe := e.Tracepoint + e.Kprobe
		if probes[probe] {
			return fmt.Errorf("%s: %s is used by two events", at, probe)
		}
		probes[probe] = true
		if err := checkKey(e.Key); len(e.Key) > 0 && err != nil {
			return fmt.Errorf("%s: key: %w", at, err)
		}
		if err := checkArgs(e, p.EventKey(i)); err != nil {
			return fmt.Errorf("%s: args: %w", at, err)
		}
		if e.Join != "" {
			j := p.EventIndex(e.Join)
			if j < 0 || j >= i {
				return fmt.Errorf("%s: join %q must name an earlier event", at, e.Join)
			}
		}
		seen[e.Name] = true
	}
	if len(p.Stages) != len(p.Events)-1 {
		return fmt.Errorf("path %s: %d events need %d stages, have %d", p.Name, len(p.Events), len(p.Events)-1, len(p.Stages))
	}
	names := map[string]bool{}
	for i := range p.Stages {
		s := &p.Stages[i]
		at := fmt.Sprintf("line %d: stage %q", s.line, s.Name)
		switch {
		case s.Name == "" || strings.Contains(s.Name, "+"):
			return fmt.Errorf("line %d: stage needs a name without '+'", s.line)
		case names[s.Name]:
			return fmt.Errorf("%s: defined twice", at)
		case s.From != p.Events[i].Name || s.To != p.Events[i+1].Name:
			return fmt.Errorf("%s: must run from %s to %s (stages follow the event order)", at, p.Events[i].Name, p.Events[i+1].Name)
		}
		switch s.Queue {
		case CentralFCFS, SplitFCFS, CentralPS:
		default:
			return fmt.Errorf("%s: queue %q (want central-fcfs, split-fcfs or central-ps)", at, s.Queue)
		}
		switch s.Cause {
		case CauseCPU, CauseQueue, CauseDevice, CauseNetwork:
		default:
			return fmt.Errorf("%s: cause %q (want cpu, queue, device or network)", at, s.Cause)
		}
		names[s.Name] = true
	}
	return nil
}

// checkArgs: only kprobes have args; they name key fields, with fetch
// arguments that cannot break the kprobe_events line; a kprobe with args
// fetches every field of its key.
func checkArgs(e *Event, key []string) error {
	if len(e.Args) == 0 {
		return nil
	}
	if e.Kprobe == "" {
		return fmt.Errorf("only kprobe events fetch arguments")
	}
	for name, fetch := range e.Args {
		if _, ok := keyFields[name]; !ok {
			return fmt.Errorf("unknown field %q (want dev, sector, qid or cid)", name)
		}
		if fetch == "" || strings.ContainsAny(fetch, " \t\n=;") {
			return fmt.Errorf("%s: fetch argument %q is empty or has spaces, '=' or ';'", name, fetch)
		}
	}
	for _, f := range key {
		if e.Args[f] == "" {
			return fmt.Errorf("no fetch argument for key field %s", f)
		}
	}
	return nil
}

func checkKey(k []string) error {
	if len(k) == 0 || len(k) > 2 {
		return fmt.Errorf("want one or two of dev, sector, qid, cid")
	}
	for _, f := range k {
		if _, ok := keyFields[f]; !ok {
			return fmt.Errorf("unknown key field %q (want dev, sector, qid or cid)", f)
		}
	}
	return nil
}
