// Package tracefs makes sure the kernel's tracing file system is mounted
// before a collector or recorder reads tracepoint formats or enables
// events: a fresh machine often has it unmounted until the first tool
// that needs it mounts it.
package tracefs

import (
	"fmt"
	"os"
	"path/filepath"
)

// Root is where tracefs is mounted on current kernels.
const Root = "/sys/kernel/tracing"

// Ensure mounts tracefs on dir when dir holds no tracefs yet (root needed).
func Ensure(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "events")); err == nil {
		return nil
	}
	if err := mount(dir); err != nil {
		return fmt.Errorf("mount tracefs on %s: %w", dir, err)
	}
	return nil
}
