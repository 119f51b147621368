package trace

import (
	"os"
	"strings"
	"testing"
)

// TestPrefetchwDetected checks the CPUID test against the kernel's view of
// the CPU (flag 3dnowprefetch).
func TestPrefetchwDetected(t *testing.T) {
	info, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		t.Skip("no /proc/cpuinfo")
	}
	want := strings.Contains(string(info), " 3dnowprefetch")
	if hasPrefetchw != want {
		t.Errorf("hasPrefetchw = %v, /proc/cpuinfo says %v", hasPrefetchw, want)
	}
}
