package peer

import (
	"sync"

	"github.com/dpperf/dpperf/profile/event"
)

// Store keeps the target's events in the order they were recorded, for
// the Handler to serve. It is safe for concurrent use.
type Store struct {
	mu      sync.Mutex
	evs     []event.Event
	stopped bool
}

// Add appends events.
func (s *Store) Add(evs ...event.Event) {
	s.mu.Lock()
	s.evs = append(s.evs, evs...)
	s.mu.Unlock()
}

// Stop marks the recording finished: nothing follows what is stored.
func (s *Store) Stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

// since returns up to max events after sequence number after (events
// are numbered from 1), whether more follow, and whether the recording
// stopped.
func (s *Store) since(after uint64, max int) (evs []event.Event, more, stopped bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if after >= uint64(len(s.evs)) {
		return nil, false, s.stopped
	}
	end := min(uint64(len(s.evs)), after+uint64(max))
	return append([]event.Event(nil), s.evs[after:end]...), end < uint64(len(s.evs)), s.stopped
}
