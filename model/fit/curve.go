package fit

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dpperf/dpperf/units"
)

// Point is one measurement: the load the stage carried, the mean latency
// of a request at that load and the mean request size.
type Point struct {
	Load    float64 // B/s
	Latency float64 // s
	Size    float64 // bytes
}

// MaxInput is the largest curve file the readers accept.
const MaxInput = 64 << 20

// ReadCSV reads a latency-vs-load curve in the CSV format of format.md:
// a header naming the columns load (or iops), latency and optionally
// size; cells with units; lines starting with # are comments. size is
// the request size for rows without a size column (0: none).
func ReadCSV(r io.Reader, name string, size float64) ([]Point, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > MaxInput {
		return nil, fmt.Errorf("%s: larger than 64 MiB", name)
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comment = '#'
	cr.TrimLeadingSpace = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: want a header line (load,latency[,size]): %v", name, csvErr(err))
	}
	col := map[string]int{}
	for i, h := range head {
		h = strings.ToLower(strings.TrimSpace(h))
		switch h {
		case "load", "iops", "latency", "size":
		default:
			return nil, fmt.Errorf("%s:1: unknown column %q (load or iops, latency, size)", name, h)
		}
		if _, dup := col[h]; dup {
			return nil, fmt.Errorf("%s:1: column %q given twice", name, h)
		}
		col[h] = i
	}
	_, hasLoad := col["load"]
	_, hasIOPS := col["iops"]
	_, hasLat := col["latency"]
	_, hasSize := col["size"]
	if hasLoad == hasIOPS || !hasLat {
		return nil, fmt.Errorf("%s:1: want columns load (or iops) and latency", name)
	}
	if !hasSize && size <= 0 {
		return nil, fmt.Errorf("%s: no size column: give the request size", name)
	}
	var pts []Point
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, csvErr(err))
		}
		line, _ := cr.FieldPos(0)
		cell := func(c string, k units.Kind) (float64, error) {
			v, err := units.Parse(rec[col[c]], k)
			if err == nil && (v <= 0 || math.IsInf(v, 0)) {
				err = fmt.Errorf("%q must be positive", rec[col[c]])
			}
			if err != nil {
				return 0, fmt.Errorf("%s:%d: %s: %v", name, line, c, err)
			}
			return v, nil
		}
		p := Point{Size: size}
		if hasSize {
			if p.Size, err = cell("size", units.Size); err != nil {
				return nil, err
			}
		}
		if p.Latency, err = cell("latency", units.Time); err != nil {
			return nil, err
		}
		if hasLoad {
			p.Load, err = cell("load", units.Rate)
		} else {
			var iops float64
			iops, err = strconv.ParseFloat(strings.TrimSpace(rec[col["iops"]]), 64)
			if err != nil || !(iops > 0) || math.IsInf(iops, 0) {
				err = fmt.Errorf("%s:%d: iops: want a positive number, got %q", name, line, rec[col["iops"]])
			}
			if p.Load = iops * p.Size; math.IsInf(p.Load, 0) {
				err = fmt.Errorf("%s:%d: iops × size is too large", name, line)
			}
		}
		if err != nil {
			return nil, err
		}
		pts = append(pts, p)
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("%s: no measurements", name)
	}
	return pts, nil
}

func csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
	}
	return err
}

// fioJSON is the part of fio's JSON output (--output-format=json) that a
// curve needs.
type fioJSON struct {
	Jobs []struct {
		Name  string `json:"jobname"`
		Read  fioDir `json:"read"`
		Write fioDir `json:"write"`
	} `json:"jobs"`
}

type fioDir struct {
	IOBytes float64 `json:"io_bytes"`
	BW      float64 `json:"bw_bytes"`
	IOPS    float64 `json:"iops"`
	Lat     struct {
		Mean float64 `json:"mean"`
	} `json:"lat_ns"`
}

// ReadFio reads fio's JSON output: every job (e.g. one per iodepth, run
// one after the other with stonewall) is one point, with reads and writes
// together: the load is their bandwidth, the latency the IOPS-weighted
// mean of their total latency (lat_ns: submission to completion) and the
// size the mean request size. Text before the JSON object (fio prints
// warnings there) is skipped.
func ReadFio(r io.Reader, name string) ([]Point, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > MaxInput {
		return nil, fmt.Errorf("%s: larger than 64 MiB", name)
	}
	i := bytes.IndexByte(data, '{')
	if i < 0 {
		return nil, fmt.Errorf("%s: no JSON object (run fio with --output-format=json)", name)
	}
	var f fioJSON
	dec := json.NewDecoder(bytes.NewReader(data[i:]))
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: fio JSON: %v", name, err)
	}
	var pts []Point
	for k, j := range f.Jobs {
		bw, iops, lat := 0.0, 0.0, 0.0
		for _, d := range []fioDir{j.Read, j.Write} {
			if d.IOPS <= 0 || d.BW <= 0 {
				continue
			}
			bw += d.BW
			iops += d.IOPS
			lat += d.IOPS * d.Lat.Mean * 1e-9
		}
		if iops <= 0 || lat <= 0 {
			return nil, fmt.Errorf("%s: job %d (%s): no reads or writes with latency", name, k, j.Name)
		}
		if math.IsInf(bw, 0) || math.IsInf(lat, 0) || math.IsNaN(lat) || math.IsInf(bw/iops, 0) || math.IsInf(lat/iops, 0) {
			return nil, fmt.Errorf("%s: job %d (%s): bad numbers", name, k, j.Name)
		}
		pts = append(pts, Point{Load: bw, Latency: lat / iops, Size: bw / iops})
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("%s: no fio jobs", name)
	}
	return pts, nil
}
