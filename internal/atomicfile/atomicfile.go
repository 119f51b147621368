// Package atomicfile writes a file so that its name never holds a partial
// one: the content goes to a temporary file in the same directory, which is
// renamed over the name only once everything was written and closed.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"

	"github.com/dpperf/dpperf/internal/fail"
)

// File is a file being written under a temporary name beside its final one.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts writing path. Commit makes the file appear under path;
// Abort (safe to defer after Commit) removes it. An error creating the
// temporary file is an input error naming path.
func Create(path string) (*File, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return nil, fail.Input(path, err)
	}
	return &File{File: tmp, path: path}, nil
}

// Commit closes the file, gives it mode 0644 and renames it to its path.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	err := f.File.Close()
	if err == nil {
		err = os.Chmod(f.File.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.File.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.File.Name())
	}
	return err
}

// Abort closes and removes the temporary file, unless Commit ran.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.File.Name())
}

// Write writes path through a temporary file with write, and commits it
// only when write returns nil.
func Write(path string, write func(io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// WriteFile is os.WriteFile through a temporary file: path ends up holding
// data or what it held before, never part of data.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
