package analyze

import (
	"bufio"
	"io"
	"strconv"

	"github.com/dpperf/dpperf/profile/event"
	"github.com/dpperf/dpperf/profile/path"
)

// RecordWriter streams records as CSV (format in profile/report/schema.md,
// "Record files"): one header line naming the path's events, then one
// line per record with the request's attributes and, per event, the time
// in ns since the record's first event (empty when not observed). Memory
// stays bounded however many records are written.
type RecordWriter struct {
	w    *bufio.Writer
	p    *path.Path
	line []byte
	err  error
}

// NewRecordWriter writes the header for path p to w.
func NewRecordWriter(w io.Writer, p *path.Path) *RecordWriter {
	rw := &RecordWriter{w: bufio.NewWriterSize(w, 1<<16), p: p}
	rw.line = append(rw.line, "start_ns,op,bytes,dev,cpu"...)
	for _, e := range p.Events {
		rw.line = append(rw.line, ',')
		rw.line = append(rw.line, e.Name...)
	}
	rw.line = append(rw.line, '\n')
	_, rw.err = rw.w.Write(rw.line)
	return rw
}

// Write appends one record.
func (rw *RecordWriter) Write(r *event.Record) {
	if rw.err != nil {
		return
	}
	start := r.Start()
	b := rw.line[:0]
	b = strconv.AppendInt(b, start, 10)
	b = append(b, ',')
	b = append(b, r.Op.String()...)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.Bytes), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.Dev.Major()), 10) // major:minor, no comma
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(r.Dev.Minor()), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.CPU), 10)
	for i := range rw.p.Events {
		b = append(b, ',')
		if t := r.TS[i]; t != 0 {
			b = strconv.AppendInt(b, t-start, 10)
		}
	}
	b = append(b, '\n')
	rw.line = b
	_, rw.err = rw.w.Write(b)
}

// Close flushes and returns the first write error.
func (rw *RecordWriter) Close() error {
	if rw.err != nil {
		return rw.err
	}
	return rw.w.Flush()
}
