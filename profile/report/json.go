package report

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/dpperf/dpperf/profile/analyze"
)

// JSON writes v (a Profile or a Comparison) as indented JSON.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ReadProfile reads a profile written by JSON and checks its schema.
func ReadProfile(r io.Reader) (*analyze.Profile, error) {
	var p analyze.Profile
	dec := json.NewDecoder(r)
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("decode profile: %w", err)
	}
	if p.Schema != analyze.Schema {
		return nil, fmt.Errorf("not a profile: schema %q, want %q", p.Schema, analyze.Schema)
	}
	return &p, nil
}
