package fit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LoadCurve reads the curve file at path: fio's JSON output for .json
// files, else CSV, whose rows without a size column get size (bytes).
func LoadCurve(path string, size float64) ([]Point, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open curve: %w", err)
	}
	defer f.Close()
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return ReadFio(f, path)
	}
	return ReadCSV(f, path, size)
}

// LoadProfile reads the profile report at path.
func LoadProfile(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: open profile: %w", path, err)
	}
	defer f.Close()
	return ReadProfile(f, path)
}
