package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// LabelPath turns a component label into a relative directory path: the
// label's elements (separated by "/" or " -> ") with characters other than
// letters, digits, '.', '_' and '-' replaced by '_'. Elements "." and ".."
// become "_", so a path never leaves the recording directory.
func LabelPath(label string) string {
	label = strings.ReplaceAll(label, " -> ", "/")
	var parts []string
	for _, e := range strings.Split(label, "/") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		parts = append(parts, fileName(e))
	}
	if len(parts) == 0 {
		return "unlabeled"
	}
	return filepath.Join(parts...)
}

// fileName makes s safe as one path element.
func fileName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			b[i] = '_'
		}
	}
	s = string(b)
	if s == "." || s == ".." || s == "" {
		return "_"
	}
	return s
}

// ThreadFile is the stream file name of thread: fileName of it, with
// "metadata" (the CTF metadata file) and names starting with '.' (which
// CTF readers skip) changed.
func ThreadFile(thread string) string {
	s := fileName(thread)
	if s == "metadata" || strings.HasPrefix(s, ".") {
		s = "_" + s
	}
	return s
}

// NewRecordingDir creates and returns a new directory under root named
// after the current time, as every enabling of the recorder does.
func NewRecordingDir(root string, now time.Time) (string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("create target root: %w", err)
	}
	base := filepath.Join(root, now.UTC().Format("2006-01-02T15-04-05.000"))
	for i := 1; i < 1000; i++ {
		dir := base
		if i > 1 {
			dir = fmt.Sprintf("%s-%d", base, i)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("create recording directory: %w", err)
		}
	}
	return "", fmt.Errorf("create recording directory: %s-* all exist", base)
}
