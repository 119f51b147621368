package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/internal/atomicfile"
	"github.com/dpperf/dpperf/units"
)

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressPrinter shows the search's bound on one terminal line.
func progressPrinter(w io.Writer, metric bound.Metric) func(bound.Progress) {
	return func(p bound.Progress) {
		v := units.PacketRate(p.Bound)
		if metric == bound.BitRate {
			v = units.BitRate(p.Bound)
		}
		state := "bound >="
		if p.SSP {
			state = "SSP:"
		}
		fmt.Fprintf(w, "\r\033[K%8.2fs  %d paths checked, %d impossible  %s %s", p.Elapsed.Seconds(), p.Checked, p.Refuted, state, v)
		if p.Final {
			fmt.Fprintln(w)
		}
	}
}

// streamLine is one line of --stream output.
type streamLine struct {
	Type    string        `json:"type"` // "progress" or "result"
	Seconds float64       `json:"seconds,omitempty"`
	Checked int           `json:"checked,omitempty"`
	Refuted int           `json:"refuted,omitempty"`
	Bound   float64       `json:"bound,omitempty"`
	SSP     bool          `json:"ssp,omitempty"`
	Result  *bound.Result `json:"result,omitempty"`
}

func streamer(w io.Writer) func(bound.Progress) {
	enc := json.NewEncoder(w)
	return func(p bound.Progress) {
		enc.Encode(streamLine{Type: "progress", Seconds: p.Elapsed.Seconds(), Checked: p.Checked, Refuted: p.Refuted, Bound: p.Bound, SSP: p.SSP})
		if f, ok := w.(interface{ Flush() error }); ok {
			f.Flush()
		}
	}
}

// writeExamplePcap writes the example packets of r's paths.
func writeExamplePcap(path string, r *bound.Result) error {
	return atomicfile.Write(path, func(w io.Writer) error {
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
	})
}

// mapFile is the map contents file (the mapstate format).
type mapFile struct {
	Maps map[string]*mapContents `json:"maps"`
}

type mapContents struct {
	Entries []mapEntry `json:"entries"`
}

type mapEntry struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// writeExampleMaps writes the map contents the example packets need.
func writeExampleMaps(path string, r *bound.Result) error {
	f := mapFile{Maps: map[string]*mapContents{}}
	seen := map[string]bool{}
	for _, p := range r.Paths {
		if p.Example == nil {
			continue
		}
		for _, m := range p.Example.Maps {
			if m.Absent {
				continue
			}
			key := m.Key
			if m.Global {
				key = hex.EncodeToString(make([]byte, 4))
			}
			if seen[m.Map+"/"+key] {
				continue
			}
			seen[m.Map+"/"+key] = true
			mc := f.Maps[m.Map]
			if mc == nil {
				mc = &mapContents{Entries: []mapEntry{}}
				f.Maps[m.Map] = mc
			}
			mc.Entries = append(mc.Entries, mapEntry{Key: key, Value: m.Value})
		}
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		return writeJSON(w, f)
	})
}
