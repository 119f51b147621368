package mapstate

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/internal/fail"
)

// State is the contents of some maps of one program, by map name.
type State struct {
	Maps map[string]*Map `json:"maps"`
}

// Map is the entries of one map.
type Map struct {
	Entries []Entry `json:"entries"`
}

// Entry is one key with its value: Value for ordinary maps (and per-CPU
// maps holding the same bytes on every CPU), Values with one value per CPU
// for per-CPU maps.
type Entry struct {
	Key    Hex   `json:"key"`
	Value  Hex   `json:"value,omitempty"`
	Values []Hex `json:"values,omitempty"`
}

// Hex is a byte string written as hexadecimal in JSON.
type Hex []byte

// MarshalJSON writes the bytes as a hex string without separators.
func (h Hex) MarshalJSON() ([]byte, error) {
	return json.Marshal(hex.EncodeToString(h))
}

// UnmarshalJSON reads a hex string, ignoring a leading 0x and the
// separators ' ', '_', ':', '-'.
func (h *Hex) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return errors.New("want a hex string")
	}
	b, err := ParseHex(s)
	if err != nil {
		return err
	}
	*h = b
	return nil
}

// ParseHex decodes hex bytes, ignoring a leading 0x and the separators
// ' ', '_', ':', '-'.
func ParseHex(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "0x"), "0X")
	clean := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '_', ':', '-', '\t', '\n':
			return -1
		}
		return r
	}, s)
	if len(clean)%2 != 0 {
		return nil, fmt.Errorf("hex %q has an odd number of digits", s)
	}
	b, err := hex.DecodeString(clean)
	if err != nil {
		return nil, fmt.Errorf("hex %q: not hexadecimal", s)
	}
	return b, nil
}

// New returns an empty state.
func New() *State { return &State{Maps: map[string]*Map{}} }

// ParseFile reads a state from a JSON file.
func ParseFile(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fail.Input(path, fmt.Errorf("read map state: %w", errors.Unwrap(err)))
	}
	return Parse(bytes.NewReader(data), path)
}

// Parse reads a state; file names the input in errors, which are input
// errors naming the map and entry at fault. Parse checks the form only;
// Validate checks sizes against a program's maps.
func Parse(r io.Reader, file string) (*State, error) {
	var raw struct {
		Maps map[string]json.RawMessage `json:"maps"`
	}
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fail.Inputf(file, "map state: %v", err)
	}
	if raw.Maps == nil {
		return nil, fail.Inputf(file, `map state: no "maps" object`)
	}
	s := New()
	for _, name := range sortedKeys(raw.Maps) {
		var m struct {
			Entries []json.RawMessage `json:"entries"`
		}
		d := json.NewDecoder(bytes.NewReader(raw.Maps[name]))
		d.DisallowUnknownFields()
		if err := d.Decode(&m); err != nil {
			return nil, fail.Inputf(file, "map %s: %v", name, err)
		}
		mm := &Map{}
		for i, re := range m.Entries {
			var e Entry
			d := json.NewDecoder(bytes.NewReader(re))
			d.DisallowUnknownFields()
			if err := d.Decode(&e); err != nil {
				return nil, fail.Inputf(file, "map %s: entry %d: %v", name, i, err)
			}
			if e.Key == nil {
				return nil, fail.Inputf(file, "map %s: entry %d: no key", name, i)
			}
			if (e.Value == nil) == (e.Values == nil) {
				return nil, fail.Inputf(file, "map %s: entry %d: want exactly one of value and values", name, i)
			}
			mm.Entries = append(mm.Entries, e)
		}
		s.Maps[name] = mm
	}
	return s, nil
}

// Write writes the state as indented JSON, canonical order.
func (s *State) Write(w io.Writer) error {
	c := s.Clone()
	c.sort()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// WriteFile writes the state to path, through a temporary file so that
// path never holds part of it.
func (s *State) WriteFile(path string) error {
	return atomicfile.Write(path, s.Write)
}

// Clone returns a deep copy.
func (s *State) Clone() *State {
	c := New()
	for name, m := range s.Maps {
		cm := &Map{Entries: make([]Entry, len(m.Entries))}
		for i, e := range m.Entries {
			ce := Entry{Key: slices.Clone(e.Key), Value: slices.Clone(e.Value)}
			for _, v := range e.Values {
				ce.Values = append(ce.Values, slices.Clone(v))
			}
			cm.Entries[i] = ce
		}
		c.Maps[name] = cm
	}
	return c
}

// Set adds or replaces the entry for key in the named map.
func (s *State) Set(mapName string, e Entry) {
	m := s.Maps[mapName]
	if m == nil {
		m = &Map{}
		s.Maps[mapName] = m
	}
	if i := m.index(e.Key); i >= 0 {
		m.Entries[i] = e
		return
	}
	m.Entries = append(m.Entries, e)
}

// Has reports whether the named map holds key.
func (s *State) Has(mapName string, key []byte) bool {
	m := s.Maps[mapName]
	return m != nil && m.index(key) >= 0
}

// index is the position of key among m's entries, or -1.
func (m *Map) index(key []byte) int {
	return slices.IndexFunc(m.Entries, func(e Entry) bool { return bytes.Equal(e.Key, key) })
}

// Overlay returns base with the maps named in over replacing base's.
func Overlay(base, over *State) *State {
	c := base.Clone()
	for name, m := range over.Clone().Maps {
		c.Maps[name] = m
	}
	return c
}

// sort orders every map's entries by key.
func (s *State) sort() {
	for _, m := range s.Maps {
		slices.SortFunc(m.Entries, func(a, b Entry) int { return bytes.Compare(a.Key, b.Key) })
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
