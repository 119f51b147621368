package hostjoin

import (
	"fmt"

	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
)

// Sides says which events of a path the target records: the events of
// its stages marked side: target. First and Last are the first and last
// of them; the initiator sends before First and completes after Last.
type Sides struct {
	Target      [event.MaxEvents]bool
	First, Last int
}

// SidesOf finds the target's events of p. It fails when p has no target
// stage, or when a target event is not keyed by queue and command id.
func SidesOf(p *path.Path) (Sides, error) {
	s := Sides{First: -1, Last: -1}
	for _, st := range p.Stages {
		if st.Side != "target" {
			continue
		}
		for _, name := range []string{st.From, st.To} {
			if i := p.EventIndex(name); i >= 0 {
				s.Target[i] = true
			}
		}
	}
	for i := range p.Events {
		if !s.Target[i] {
			continue
		}
		if s.First < 0 {
			s.First = i
		}
		s.Last = i
		if !keyedByNVMe(p, i) {
			return s, fmt.Errorf("path %s: target event %s is not keyed by qid and cid; two hosts cannot be joined on it", p.Name, p.Events[i].Name)
		}
	}
	if s.First < 0 {
		return s, fmt.Errorf("path %s has no target stage (side: target); it runs on one host", p.Name)
	}
	if s.First == 0 || s.Last == len(p.Events)-1 {
		return s, fmt.Errorf("path %s: the initiator has no event before or after the target's", p.Name)
	}
	return s, nil
}

func keyedByNVMe(p *path.Path, i int) bool {
	var q, c bool
	for _, f := range p.EventKeyFields(i) {
		q = q || f == path.KeyQID
		c = c || f == path.KeyCID
	}
	return q && c
}

// Half is the target's part of one request: its times (target clock) at
// the target events of the path, and the request's queue and command id.
type Half struct {
	TS       [event.MaxEvents]int64
	QID, CID uint16
}

// Halves builds target halves from target events in time order: the
// first target event of the path opens one under its queue and command
// id, the last closes it. It returns the closed halves and how many were
// opened but never closed, or closed without being opened (the recording
// began or ended inside them, or lost an event).
func (s Sides) Halves(evs []event.Event) (halves []Half, incomplete int64) {
	open := map[uint32]*Half{}
	for i := range evs {
		ev := &evs[i]
		k := int(ev.Kind)
		if k >= event.MaxEvents || !s.Target[k] {
			continue
		}
		id := uint32(ev.QID)<<16 | uint32(ev.CID)
		h := open[id]
		if k == s.First {
			if h != nil {
				incomplete++
			}
			h = &Half{QID: ev.QID, CID: ev.CID}
			open[id] = h
		} else if h == nil {
			if k == s.Last {
				incomplete++
			}
			continue
		}
		h.TS[k] = ev.TS
		if k == s.Last {
			halves = append(halves, *h)
			delete(open, id)
		}
	}
	return halves, incomplete + int64(len(open))
}

// send and done are the initiator's last time before the target's events
// and first time after them (0 when the record has none).
func (s Sides) send(r *event.Record) int64 {
	var t int64
	for k := 0; k < s.First; k++ {
		if r.TS[k] != 0 {
			t = r.TS[k]
		}
	}
	return t
}

func (s Sides) done(r *event.Record) int64 {
	for k := s.Last + 1; k < event.MaxEvents; k++ {
		if r.TS[k] != 0 {
			return r.TS[k]
		}
	}
	return 0
}
