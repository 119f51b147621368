package collect

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/internal/tracefs"
	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
)

// Tracefs is where tracefs is mounted.
var Tracefs = tracefs.Root

// Config says what to collect.
type Config struct {
	Path     *path.Path
	Dev      event.Dev // 0: any device
	Op       event.Op  // with HasOp: only this type
	HasOp    bool
	MinBytes uint32
	MaxBytes uint32 // 0: unbounded
	Sample   uint32 // in-kernel 1-of-N sampling (BPF only)
	BufferKB int    // kernel buffer size (ring buffer, or per CPU for tracefs)
	Programs string // BPF program type: auto (tp_btf when the kernel has BTF), tp_btf or tracepoint
	Stats    bool   // measure the BPF programs' own run time (costs a little itself)
	// Skip, when set, names the path's events this host does not record
	// because the other host of a two-host run does (tracefs only): a
	// target busy with local I/O would otherwise fill its buffer with
	// block events it never serves, and lose its own.
	Skip func(event int) bool
}

// Status reports whether one path event could be attached.
type Status struct {
	Name     string
	Probe    string
	Attached bool
	Reason   string
}

// Collector streams events from the kernel until closed.
type Collector interface {
	// Next blocks for the next event; it returns io.EOF once Close was
	// called and buffered events are drained.
	Next() (event.Event, error)
	// Status lists every path event and whether it is attached.
	Status() []Status
	// Lost returns how many events the kernel dropped so far.
	Lost() int64
	// Stop ends collection: Next returns the events still buffered,
	// then io.EOF.
	Stop()
	// Close detaches everything. It is safe to call more than once.
	Close() error
}

// Kind is a collector: BPF programs or a tracefs instance.
type Kind uint8

// Collectors.
const (
	KindAuto    Kind = iota // BPF when it has programs for every event of the path, else tracefs
	KindBPF                 // OpenBPF
	KindTraceFS             // OpenTraceFS
)

// ParseKind parses "auto", "bpf" or "tracefs".
func ParseKind(s string) (Kind, error) {
	for k := KindAuto; k <= KindTraceFS; k++ {
		if s == k.String() {
			return k, nil
		}
	}
	return 0, fmt.Errorf("%q (want bpf, tracefs or auto)", s)
}

func (k Kind) String() string {
	switch k {
	case KindBPF:
		return "bpf"
	case KindTraceFS:
		return "tracefs"
	}
	return "auto"
}

// For returns the collector for path p: k itself, or for KindAuto the
// BPF collector where it has programs for every event of p (BPFHandles).
func (k Kind) For(p *path.Path) Kind {
	if k != KindAuto {
		return k
	}
	if BPFHandles(p) {
		return KindBPF
	}
	return KindTraceFS
}

// Open opens a collector of kind k (KindAuto chooses with For).
func Open(k Kind, cfg Config) (Collector, error) {
	var c Collector
	var err error
	if k.For(cfg.Path) == KindBPF {
		c, err = OpenBPF(cfg)
	} else {
		c, err = OpenTraceFS(cfg)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// ErrNotRoot is returned when attaching needs privileges the process lacks.
var ErrNotRoot = errors.New("attaching to kernel tracepoints needs root (run dpperf profile run as root)")

func needRoot() error {
	if os.Geteuid() != 0 {
		return ErrNotRoot
	}
	return nil
}

// ResolveDev turns "loop0", "/dev/loop0", "7,0" or "7:0" into a device
// number; "" and "all" give 0 (any device).
func ResolveDev(s string) (event.Dev, error) {
	if s == "" || s == "all" {
		return 0, nil
	}
	if d, err := event.ParseDev(s); err == nil {
		return d, nil
	}
	name := filepath.Base(s)
	data, err := os.ReadFile(filepath.Join("/sys/class/block", name, "dev"))
	if err != nil {
		return 0, fmt.Errorf("device %q: no block device of that name", s)
	}
	return event.ParseDev(strings.TrimSpace(string(data)))
}

// tracepointFormat reads the field offsets of a tracepoint from tracefs.
func tracepointFormat(system, name string) (map[string]uint32, error) {
	f, err := os.Open(filepath.Join(Tracefs, "events", system, name, "format"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]uint32{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "field:") {
			continue
		}
		parts := strings.Split(line, ";")
		if len(parts) < 2 {
			continue
		}
		decl := strings.Fields(strings.TrimPrefix(parts[0], "field:"))
		if len(decl) == 0 {
			continue
		}
		field := decl[len(decl)-1]
		if i := strings.IndexByte(field, '['); i >= 0 {
			field = field[:i]
		}
		off, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(parts[1]), "offset:"), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("format of %s:%s: bad offset in %q", system, name, line)
		}
		out[field] = uint32(off)
	}
	return out, sc.Err()
}

// EnsureTracefs mounts tracefs when it is not mounted yet.
func EnsureTracefs() error { return tracefs.Ensure(Tracefs) }
