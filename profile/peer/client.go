package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/dpperf/dpperf/profile/event"
)

// maxBody bounds a reply: 65536 events of at most about 60 bytes each,
// with room to spare.
const maxBody = 64 << 20

// Batch is one decoded reply.
type Batch struct {
	Events  []event.Event
	NowNS   int64 // the target's clock when it replied
	Next    uint64
	More    bool
	Stopped bool
}

// Decode checks and decodes a reply body: path is the initiator's path,
// after the request's sequence number, target says which kinds the
// target records. Every problem is one error naming it.
func Decode(body []byte, path string, after uint64, target func(kind int) bool) (*Batch, error) {
	var rep reply
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("peer reply: %v", err)
	}
	if dec.More() {
		return nil, errors.New("peer reply: data after the JSON object")
	}
	switch {
	case rep.Schema != Schema:
		return nil, fmt.Errorf("peer reply: schema %q, want %s", rep.Schema, Schema)
	case rep.Path != path:
		return nil, fmt.Errorf("peer reply: the peer records path %q, this host %q", rep.Path, path)
	case rep.Next != after+uint64(len(rep.Events)):
		return nil, fmt.Errorf("peer reply: next %d after %d with %d events", rep.Next, after, len(rep.Events))
	}
	b := &Batch{NowNS: rep.NowNS, Next: rep.Next, More: rep.More, Stopped: rep.Stopped, Events: make([]event.Event, len(rep.Events))}
	var last int64
	for i, e := range rep.Events {
		ts, kind, qid, cid := e[0], e[1], e[2], e[3]
		switch {
		case ts <= 0 || ts < last:
			return nil, fmt.Errorf("peer reply: event %d: time %d before %d or not positive", i, ts, last)
		case kind < 0 || kind >= event.MaxEvents || !target(int(kind)):
			return nil, fmt.Errorf("peer reply: event %d: kind %d is no target event of path %s", i, kind, path)
		case qid < 0 || qid > 0xffff || cid < 0 || cid > 0xffff:
			return nil, fmt.Errorf("peer reply: event %d: queue or command id out of range", i)
		}
		b.Events[i] = event.Event{TS: ts, Kind: uint8(kind), QID: uint16(qid), CID: uint16(cid)}
		last = ts
	}
	return b, nil
}

// Client fetches a target's events.
type Client struct {
	URL     string // http://HOST:PORT
	Token   []byte
	Path    string
	Target  func(kind int) bool
	Timeout time.Duration // per request; 0: 5 s
	HTTP    *http.Client  // nil: a client of its own
}

// Sample is one clock exchange: the initiator's clock at send and at
// receipt around the target's NowNS.
type Sample struct{ SendNS, TargetNS, RecvNS int64 }

// Fetch asks for the events after after; now reads the initiator's
// monotonic clock, for the Sample.
func (c *Client) Fetch(ctx context.Context, after uint64, now func() int64) (*Batch, Sample, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/v1/events?after=%d&max=%d", c.URL, after, MaxBatch), nil)
	if err != nil {
		return nil, Sample{}, err
	}
	req.Header.Set("Authorization", "Bearer "+string(c.Token))
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{}
	}
	var s Sample
	s.SendNS = now()
	resp, err := hc.Do(req)
	if err != nil {
		return nil, s, fmt.Errorf("peer %s: %w", c.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	s.RecvNS = now()
	switch {
	case err != nil:
		return nil, s, fmt.Errorf("peer %s: reading the reply: %w", c.URL, err)
	case resp.StatusCode == http.StatusUnauthorized:
		return nil, s, fmt.Errorf("peer %s refused the token (401)", c.URL)
	case resp.StatusCode != http.StatusOK:
		return nil, s, fmt.Errorf("peer %s: %s", c.URL, resp.Status)
	case len(body) > maxBody:
		return nil, s, fmt.Errorf("peer %s: reply over %d bytes", c.URL, maxBody)
	}
	b, err := Decode(body, c.Path, after, c.Target)
	if err != nil {
		return nil, s, fmt.Errorf("peer %s: %w", c.URL, err)
	}
	s.TargetNS = b.NowNS
	return b, s, nil
}

// FetchAll asks again from where the last reply ended until the peer has
// nothing more; it returns what it got and the tightest clock exchange,
// and on an error the events so far with the error.
func (c *Client) FetchAll(ctx context.Context, after uint64, now func() int64) ([]event.Event, uint64, Sample, error) {
	var evs []event.Event
	var best Sample
	for {
		b, s, err := c.Fetch(ctx, after, now)
		if err != nil {
			return evs, after, best, err
		}
		if best.TargetNS == 0 || s.RecvNS-s.SendNS < best.RecvNS-best.SendNS {
			best = s
		}
		evs = append(evs, b.Events...)
		after = b.Next
		if !b.More {
			return evs, after, best, nil
		}
	}
}

// Hint is the range of offsets (target minus initiator) a clock exchange
// allows: the target read its clock between send and receipt.
func (s Sample) Hint() [2]float64 {
	return [2]float64{float64(s.TargetNS - s.RecvNS), float64(s.TargetNS - s.SendNS)}
}
