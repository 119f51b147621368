package bound

import (
	"encoding/hex"
	"encoding/json"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/dpperf/dpperf/mapstate"
)

// WriteExamplePcap writes the example packets of r's paths as a pcap file,
// one packet per path that has one, at 1 s apart from the epoch.
func (r *Result) WriteExamplePcap(w io.Writer) error {
	pw := pcapgo.NewWriter(w)
	if err := pw.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		return err
	}
	for i, p := range r.Paths {
		if p.Example == nil {
			continue
		}
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(int64(i), 0).UTC(), CaptureLength: len(p.Example.Raw), Length: len(p.Example.Raw)}
		if err := pw.WritePacket(ci, p.Example.Raw); err != nil {
			return err
		}
	}
	return nil
}

// ExampleState is the map contents the example packets need, as a
// mapstate: the first value asked of each key wins.
func (r *Result) ExampleState() (*mapstate.State, error) {
	st := mapstate.New()
	for _, p := range r.Paths {
		if p.Example == nil {
			continue
		}
		if err := p.Example.addState(st, false); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// State is the map contents the example needs: absent keys are left out,
// and a global variable's section is its map's key 0.
func (ex *Example) State() (*mapstate.State, error) {
	st := mapstate.New()
	return st, ex.addState(st, true)
}

// addState sets ex's entries in st; a key st holds already keeps its
// value unless replace.
func (ex *Example) addState(st *mapstate.State, replace bool) error {
	for _, m := range ex.Maps {
		if m.Absent {
			continue
		}
		key := m.Key
		if m.Global {
			key = hex.EncodeToString(make([]byte, 4))
		}
		k, err := mapstate.ParseHex(key)
		if err != nil {
			return err
		}
		if !replace && st.Has(m.Map, k) {
			continue
		}
		v, err := mapstate.ParseHex(m.Value)
		if err != nil {
			return err
		}
		st.Set(m.Map, mapstate.Entry{Key: k, Value: v})
	}
	return nil
}

// StreamLine is one line of --stream output (json.md).
type StreamLine struct {
	Type    string  `json:"type"` // "progress" or "result"
	Seconds float64 `json:"seconds,omitempty"`
	Checked int     `json:"checked,omitempty"`
	Refuted int     `json:"refuted,omitempty"`
	Bound   float64 `json:"bound,omitempty"`
	SSP     bool    `json:"ssp,omitempty"`
	Result  *Result `json:"result,omitempty"`
}

// Streamer returns a Progress callback that writes each report to w as a
// StreamLine, flushing w when it can be flushed.
func Streamer(w io.Writer) func(Progress) {
	enc := json.NewEncoder(w)
	return func(p Progress) {
		enc.Encode(StreamLine{Type: "progress", Seconds: p.Elapsed.Seconds(), Checked: p.Checked, Refuted: p.Refuted, Bound: p.Bound, SSP: p.SSP})
		if f, ok := w.(interface{ Flush() error }); ok {
			f.Flush()
		}
	}
}
