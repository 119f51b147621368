package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/units"
	"go.yaml.in/yaml/v3"
)

// Error is a problem in a specification file, at a line and field.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// dec walks a YAML tree and stops at the first error.
type dec struct {
	file string
	err  *Error
}

func (d *dec) fail(n *yaml.Node, field, format string, args ...any) {
	if d.err != nil {
		return
	}
	line := 0
	if n != nil {
		line = n.Line
	}
	d.err = &Error{File: d.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// fields returns the entries of a mapping node keyed by name, and rejects
// keys outside allowed.
func (d *dec) fields(n *yaml.Node, path string, allowed ...string) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	if n == nil || d.err != nil {
		return m
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "want a mapping, got %s", kindName(n))
		return m
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ok := false
		for _, a := range allowed {
			ok = ok || a == k.Value
		}
		if !ok {
			d.fail(k, join(path, k.Value), "unknown field (known: %s)", strings.Join(allowed, ", "))
			return m
		}
		if _, dup := m[k.Value]; dup {
			d.fail(k, join(path, k.Value), "given twice")
			return m
		}
		m[k.Value] = v
	}
	return m
}

func join(path, f string) string {
	if path == "" {
		return f
	}
	return path + "." + f
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	}
	if n.Tag == "!!null" {
		return "nothing"
	}
	return fmt.Sprintf("%q", n.Value)
}

func (d *dec) seq(n *yaml.Node, path string) []*yaml.Node {
	if n == nil || d.err != nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n, path, "want a list, got %s", kindName(n))
		return nil
	}
	return n.Content
}

func (d *dec) scalar(n *yaml.Node, path string) (string, bool) {
	if n == nil || d.err != nil {
		return "", false
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.fail(n, path, "want a value, got %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

func (d *dec) str(n *yaml.Node, path string, required bool) string {
	if n == nil {
		if required {
			d.fail(nil, path, "missing")
		}
		return ""
	}
	s, _ := d.scalar(n, path)
	return s
}

// quantity reads a value with a unit; def is returned when n is absent.
func (d *dec) quantity(n *yaml.Node, path string, k units.Kind, def float64) float64 {
	if n == nil {
		return def
	}
	s, ok := d.scalar(n, path)
	if !ok {
		return def
	}
	v, err := units.Parse(s, k)
	if err != nil {
		d.fail(n, path, "%v", err)
		return def
	}
	if v <= 0 && k != units.Time || v < 0 {
		d.fail(n, path, "must be positive, got %s", s)
		return def
	}
	return v
}

// number reads a plain number within [lo, hi].
func (d *dec) number(n *yaml.Node, path string, def, lo, hi float64) float64 {
	if n == nil {
		return def
	}
	s, ok := d.scalar(n, path)
	if !ok {
		return def
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) {
		d.fail(n, path, "want a number, got %q", s)
		return def
	}
	if v < lo || v > hi {
		d.fail(n, path, "%v is out of range [%v, %v]", v, lo, hi)
		return def
	}
	return v
}

// integer reads a whole number within [lo, hi]; "unbounded"/"inf" gives
// +Inf when allowInf.
func (d *dec) integer(n *yaml.Node, path string, def float64, lo float64, allowInf bool) float64 {
	if n == nil {
		return def
	}
	s, ok := d.scalar(n, path)
	if !ok {
		return def
	}
	if allowInf && (s == "unbounded" || s == "inf") {
		return math.Inf(1)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		d.fail(n, path, "want a whole number, got %q", s)
		return def
	}
	if float64(v) < lo {
		d.fail(n, path, "must be at least %v, got %d", lo, v)
		return def
	}
	return float64(v)
}
