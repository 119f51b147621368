package collect

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/profile/path"
)

// TestTraceFSSkip opens the tracefs collector on the block path with
// its issue and completion events left to another host: those two are
// reported not attached, with the reason, and left disabled in the
// instance; the others are enabled.
func TestTraceFSSkip(t *testing.T) {
	needLive(t)
	p, err := path.Builtin("block")
	if err != nil {
		t.Fatal(err)
	}
	skip := func(i int) bool {
		n := p.Events[i].Tracepoint
		return strings.HasSuffix(n, "block_rq_issue") || strings.HasSuffix(n, "block_rq_complete")
	}
	col, err := OpenTraceFS(Config{Path: p, Skip: skip})
	if err != nil {
		t.Fatal(err)
	}
	defer col.Close()
	inst := filepath.Join(Tracefs, "instances", "dpperf-"+strconv.Itoa(os.Getpid()))
	skipped := 0
	for i, st := range col.Status() {
		sys, name := p.Events[i].TraceName()
		en, err := os.ReadFile(filepath.Join(inst, "events", sys, name, "enable"))
		if err != nil {
			t.Fatal(err)
		}
		enabled := strings.TrimSpace(string(en)) == "1"
		if skip(i) {
			skipped++
			if st.Attached || enabled || st.Reason != "recorded by the other host" {
				t.Errorf("%s: skipped but attached %v, enabled %v, reason %q", st.Name, st.Attached, enabled, st.Reason)
			}
		} else if !st.Attached || !enabled {
			t.Errorf("%s: attached %v, enabled %v (%s)", st.Name, st.Attached, enabled, st.Reason)
		}
	}
	if skipped != 2 {
		t.Errorf("%d events skipped, want 2", skipped)
	}
}
