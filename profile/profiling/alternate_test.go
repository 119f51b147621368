package profiling

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakePausable counts the collector's transitions and, when stop is set,
// calls it at the transition numbered after.
type fakePausable struct {
	mu              sync.Mutex
	pauses, resumes int
	after           int
	stop            func()
}

func (f *fakePausable) Pause() {
	f.mu.Lock()
	f.pauses++
	f.stopAt()
	f.mu.Unlock()
}

func (f *fakePausable) Resume() error {
	f.mu.Lock()
	f.resumes++
	f.stopAt()
	f.mu.Unlock()
	return nil
}

func (f *fakePausable) stopAt() {
	if f.stop != nil && f.pauses+f.resumes == f.after {
		f.stop()
	}
}

// The windows alternate on/off starting with on, follow each other in
// time without overlap, and match the collector's transitions: ended at
// the fifth transition, the log holds six windows whatever the machine's
// speed.
func TestAlternateWindows(t *testing.T) {
	log := filepath.Join(t.TempDir(), "windows.txt")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	col := &fakePausable{after: 5, stop: cancel}
	done, err := alternate(ctx, col, 10*time.Millisecond, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if !strings.HasPrefix(lines[0], "#") {
		t.Fatalf("no header: %q", lines[0])
	}
	wins := lines[1:]
	if len(wins) != 6 {
		t.Fatalf("%d windows after 5 transitions, want 6: %q", len(wins), data)
	}
	var prevEnd int64
	for i, w := range wins {
		f := strings.Fields(w)
		if len(f) != 3 {
			t.Fatalf("window %d: %q", i, w)
		}
		want := []string{"on", "off"}[i%2]
		start, err1 := strconv.ParseInt(f[1], 10, 64)
		end, err2 := strconv.ParseInt(f[2], 10, 64)
		if f[0] != want || err1 != nil || err2 != nil || end < start || start < prevEnd {
			t.Fatalf("window %d: %q (want state %s, start ≥ %d, end ≥ start)", i, w, want, prevEnd)
		}
		prevEnd = end
	}
	// Every window but the last ended with a transition.
	if col.pauses != 3 || col.resumes != 2 {
		t.Errorf("%d pauses and %d resumes for %d windows", col.pauses, col.resumes, len(wins))
	}
}

func TestAlternateBadLog(t *testing.T) {
	_, err := alternate(context.Background(), &fakePausable{}, time.Second, filepath.Join(t.TempDir(), "no", "such", "dir"))
	if err == nil {
		t.Fatal("no error for a log in a missing directory")
	}
}
