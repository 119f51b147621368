package tracetext

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"testing"
)

// BenchmarkReader parses the captured fio trace (ftrace text). Reported:
// events/s.
func BenchmarkReader(b *testing.B) {
	f, err := os.Open("../testdata/block-qd32.txt.gz")
	if err != nil {
		b.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	p := mustPath(b, "block")
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	var n int
	for i := 0; i < b.N; i++ {
		r, _ := NewReader(bytes.NewReader(text), p)
		for {
			if _, err := r.Next(); err != nil {
				if !errors.Is(err, io.EOF) {
					b.Fatal(err)
				}
				break
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}
