package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

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

// WriteFile writes a report to name atomically: into a temporary file in
// the same directory, renamed over name only when complete.
func WriteFile(name string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}

// AtomicFile is a file written under a temporary name and renamed to its
// real name by Commit, so that readers never see it half written.
type AtomicFile struct {
	*os.File
	name string
}

// CreateAtomic starts writing name.
func CreateAtomic(name string) (*AtomicFile, error) {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	return &AtomicFile{File: f, name: name}, nil
}

// Commit closes the file and gives it its name.
func (a *AtomicFile) Commit() error {
	if err := a.Close(); err != nil {
		os.Remove(a.File.Name())
		return fmt.Errorf("write %s: %w", a.name, err)
	}
	if err := os.Chmod(a.File.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(a.File.Name(), a.name)
}

// Abort closes and removes the temporary file.
func (a *AtomicFile) Abort() {
	a.Close()
	os.Remove(a.File.Name())
}
