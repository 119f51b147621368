package path

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// UnmarshalYAML records the line of an event for error messages.
func (e *Event) UnmarshalYAML(n *yaml.Node) error {
	type plain Event
	if err := n.Decode((*plain)(e)); err != nil {
		return err
	}
	e.line = n.Line
	return nil
}

// UnmarshalYAML records the line of a stage for error messages.
func (s *Stage) UnmarshalYAML(n *yaml.Node) error {
	type plain Stage
	if err := n.Decode((*plain)(s)); err != nil {
		return err
	}
	s.line = n.Line
	return nil
}

// Parse reads one path from YAML. Unknown fields are errors; the error
// names the line.
func Parse(data []byte) (*Path, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var p Path
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("empty path file")
		}
		return nil, fmt.Errorf("parse path: %s", oneLine(err))
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// oneLine folds yaml's multi-line error messages into one line.
func oneLine(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	s = strings.ReplaceAll(s, "unmarshal errors:\n  ", "")
	return strings.Join(strings.Fields(s), " ")
}

// Builtin returns the built-in path of that name.
func Builtin(name string) (*Path, error) {
	data, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("unknown path %q (built in: %s)", name, strings.Join(Names(), ", "))
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("built-in path %s: %w", name, err)
	}
	return p, nil
}

// Names lists the built-in paths.
func Names() []string {
	ents, _ := builtinFS.ReadDir("builtin")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// Summary names a built-in path, says what it is and lists its stages.
type Summary struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Stages      []string `json:"stages"`
}

// List is the JSON of `dpperf profile paths --json` (format.md).
type List struct {
	Schema string    `json:"schema"`
	Paths  []Summary `json:"paths"`
}

// Summaries describes the built-in paths, in the order of Names.
func Summaries() ([]Summary, error) {
	var list []Summary
	for _, n := range Names() {
		p, err := Builtin(n)
		if err != nil {
			return nil, err
		}
		s := Summary{Name: n, Description: p.Description, Stages: []string{}}
		for _, st := range p.Stages {
			s.Stages = append(s.Stages, st.Name)
		}
		list = append(list, s)
	}
	return list, nil
}

// Lookup returns a built-in path by name, or loads a YAML file when arg
// names one (contains a '/' or ends in .yaml/.yml).
func Lookup(arg string) (*Path, error) {
	if !strings.Contains(arg, "/") && !strings.HasSuffix(arg, ".yaml") && !strings.HasSuffix(arg, ".yml") {
		return Builtin(arg)
	}
	data, err := os.ReadFile(arg)
	if err != nil {
		return nil, err
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", arg, err)
	}
	return p, nil
}

// Source returns the YAML text of a built-in path.
func Source(name string) ([]byte, error) {
	data, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("unknown path %q (built in: %s)", name, strings.Join(Names(), ", "))
	}
	return data, nil
}
