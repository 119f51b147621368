package main

import (
	"fmt"
	"io"

	"github.com/dpperf/dpperf/bound"
	"github.com/dpperf/dpperf/units"
)

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

// writeExampleMaps writes the map contents the example packets need
// (mapstate/format.md).
func writeExampleMaps(path string, r *bound.Result) error {
	st, err := r.ExampleState()
	if err != nil {
		return err
	}
	return st.WriteFile(path)
}
