package task

import (
	"errors"
	"testing"
	"time"
)

func TestOverrides(t *testing.T) {
	tk, err := Load("testdata/paper.good.yaml", Overrides{Size: "8K-64K", Type: "write", GroupBy: "cpu,type", Interval: time.Second, Sample: 7})
	if err != nil {
		t.Fatal(err)
	}
	w := tk.Workload
	if w.Size != 0 || w.MinSize != 8192 || w.MaxSize != 65536 || w.Type != "write" || w.Device != "7,0" {
		t.Errorf("workload %+v", w)
	}
	if tk.Profiling.Mode != "online" || tk.Profiling.Sample != 7 || len(tk.Report.GroupBy) != 2 {
		t.Errorf("profiling %+v report %+v", tk.Profiling, tk.Report)
	}
	for _, o := range []Overrides{{Size: "64K-8K"}, {Size: "x"}, {Type: "trim"}, {GroupBy: "disk"}, {Interval: time.Millisecond}} {
		_, err := Load("", o)
		var fe *FlagError
		if !errors.As(err, &fe) {
			t.Errorf("%+v: error %v, want a flag error", o, err)
		}
	}
	if _, err := Load("testdata/missing.yaml", Overrides{}); err == nil {
		t.Error("missing task file accepted")
	}
}
