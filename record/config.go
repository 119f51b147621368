package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/dpperf/dpperf/internal/fail"
)

// Defaults of a configuration. DefaultBuffer holds 60 ms of events at 10
// million 28-byte checkpoints/s: longer than the drainer was away in our
// measurements on a busy 2-core machine (docs/record.md, Performance). It
// is the memory of each traced worker.
const (
	DefaultBuffer  = 16 << 20
	DefaultSnapLen = 100
	DefaultRoot    = "dpperf-trace"
)

// Config is a recorder configuration.
type Config struct {
	Period     Duration `yaml:"period"`      // drain period (required)
	Enable     *bool    `yaml:"enable"`      // record from the start (default true)
	TargetRoot string   `yaml:"target_root"` // directory of the timestamped recordings
	Buffer     Size     `yaml:"buffer"`      // default buffer size per worker
	SnapLen    int      `yaml:"snap_len"`    // bytes kept of each captured packet
	Policies   []Policy `yaml:"policies"`
	Default    *Policy  `yaml:"default_policy"`
}

// Policy says how to trace the workers it matches.
type Policy struct {
	Label       string    `yaml:"label"`
	LabelPrefix string    `yaml:"label_prefix"`
	LabelSuffix string    `yaml:"label_suffix"`
	Thread      string    `yaml:"thread"`
	Buffer      Size      `yaml:"buffer"`
	Backends    []Backend `yaml:"backends"`
	line        int
}

// Backend is a writer of recorded events: "ctf" or "pcapng".
type Backend string

// Backends.
const (
	CTF    Backend = "ctf"
	PCAPNG Backend = "pcapng"
)

// Duration is a time.Duration written like "100ms" in YAML.
type Duration time.Duration

// UnmarshalYAML reads a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v <= 0 {
		return lineErr(n, "%q is not a positive duration such as 100ms", n.Value)
	}
	*d = Duration(v)
	return nil
}

// Size is a byte count written as an integer or with a KiB/MiB/GiB suffix.
type Size int

// UnmarshalYAML reads a size.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	v := strings.TrimSpace(n.Value)
	mult := 1
	for suffix, m := range map[string]int{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(v, suffix) {
			v, mult = strings.TrimSpace(strings.TrimSuffix(v, suffix)), m
		}
	}
	i, err := strconv.Atoi(v)
	if err != nil || i <= 0 || i > (1<<30)/mult {
		return lineErr(n, "%q is not a size between 1 and 1GiB (such as 4MiB)", n.Value)
	}
	*s = Size(i * mult)
	return nil
}

// UnmarshalYAML reads a backend name.
func (b *Backend) UnmarshalYAML(n *yaml.Node) error {
	switch Backend(n.Value) {
	case CTF, PCAPNG:
		*b = Backend(n.Value)
		return nil
	}
	return lineErr(n, "unknown backend %q (want ctf or pcapng)", n.Value)
}

// UnmarshalYAML reads a policy and checks that it names one label match.
func (p *Policy) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return lineErr(n, "a policy is a mapping of label, label_prefix, label_suffix, thread, buffer, backends")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i]; k.Value {
		case "label", "label_prefix", "label_suffix", "thread", "buffer", "backends":
		default:
			return lineErr(k, "unknown policy field %q", k.Value)
		}
	}
	type plain Policy
	var v plain
	if err := n.Decode(&v); err != nil {
		return err
	}
	*p = Policy(v)
	p.line = n.Line
	return nil
}

type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

func lineErr(n *yaml.Node, format string, args ...any) error {
	return &lineError{n.Line, fmt.Sprintf(format, args...)}
}

// ParseConfig reads a YAML configuration and checks it.
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		var le *lineError
		if errors.As(err, &le) {
			return nil, le
		}
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty configuration: period is required")
		}
		return nil, errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if c.Period == 0 {
		return nil, errors.New("period is required (such as period: 100ms)")
	}
	if c.TargetRoot == "" {
		c.TargetRoot = DefaultRoot
	}
	if c.Buffer == 0 {
		c.Buffer = DefaultBuffer
	}
	if c.SnapLen == 0 {
		c.SnapLen = DefaultSnapLen
	}
	if c.SnapLen < 0 || c.SnapLen > 9216 {
		return nil, fmt.Errorf("snap_len %d is outside 1..9216", c.SnapLen)
	}
	for i := range c.Policies {
		p := &c.Policies[i]
		set := 0
		for _, s := range []string{p.Label, p.LabelPrefix, p.LabelSuffix} {
			if s != "" {
				set++
			}
		}
		if set != 1 {
			return nil, fmt.Errorf("line %d: policy needs exactly one of label, label_prefix, label_suffix", p.line)
		}
		c.fill(p)
	}
	if c.Default != nil {
		if c.Default.Label != "" || c.Default.LabelPrefix != "" || c.Default.LabelSuffix != "" {
			return nil, fmt.Errorf("line %d: default_policy takes no label match", c.Default.line)
		}
		c.fill(c.Default)
	}
	return &c, nil
}

func (c *Config) fill(p *Policy) {
	if p.Buffer == 0 {
		p.Buffer = c.Buffer
	}
	if len(p.Backends) == 0 {
		p.Backends = []Backend{CTF}
	}
}

// LoadConfig reads the configuration file path; its errors name the file.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fail.Input(path, fmt.Errorf("read config: %w", err))
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fail.Input(path, err)
	}
	return c, nil
}

// Enabled tells whether recording starts right away.
func (c *Config) Enabled() bool { return c.Enable == nil || *c.Enable }

// Has tells whether the policy uses backend b.
func (p *Policy) Has(b Backend) bool {
	for _, x := range p.Backends {
		if x == b {
			return true
		}
	}
	return false
}

// Match returns the policy for a worker of component label named thread,
// or nil when it is not to be traced. An exact label match beats any prefix
// or suffix match, a longer prefix or suffix beats a shorter one, a policy
// with a matching thread filter beats one without, and earlier policies
// win ties. Without a match the default policy applies.
func (c *Config) Match(label, thread string) *Policy {
	var best *Policy
	bestScore := -1
	for i := range c.Policies {
		p := &c.Policies[i]
		if p.Thread != "" && p.Thread != thread {
			continue
		}
		score := -1
		switch {
		case p.Label != "":
			if p.Label == label {
				score = 1 << 20
			}
		case p.LabelPrefix != "":
			if strings.HasPrefix(label, p.LabelPrefix) {
				score = len(p.LabelPrefix) * 2
			}
		case p.LabelSuffix != "":
			if strings.HasSuffix(label, p.LabelSuffix) {
				score = len(p.LabelSuffix) * 2
			}
		}
		if score < 0 {
			continue
		}
		if p.Thread != "" {
			score++
		}
		if score > bestScore {
			best, bestScore = p, score
		}
	}
	if best == nil {
		return c.Default
	}
	return best
}
