package perfiface

import (
	"math"
	"strings"
	"testing"

	"github.com/dpperf/dpperf/replay"
)

// Validate numbers the rows by class, takes the median prediction and,
// under a counting metric, the figures of a representative that
// disagrees with the interpreter.
func TestValidateRows(t *testing.T) {
	v := (&Deployment{It: &Interface{Metric: MetricInsns}}).Validator()
	v.class = map[string]int{"class 10": 10, "class 2": 2}
	v.preds = map[int]prediction{
		1: {cost: 7, counted: 7}, 4: {cost: 7, counted: 7},
		2: {cost: 30, counted: 30}, 5: {cost: 31, counted: 33}, 6: {cost: 30, counted: 30},
	}
	reps := []replay.Rep{{Class: "class 10", Index: 2}, {Class: "class 10", Index: 5}, {Class: "class 10", Index: 6},
		{Class: "class 2", Index: 1}, {Class: "class 2", Index: 4}}
	got := v.Validate(reps, Measurement{Runs: 3, Overhead: 20, Classes: []Measured{
		{Name: "class 10", Reps: 3, Net: 50, Repeat: math.NaN()}, {Name: "class 2", Reps: 2, Net: 12, Repeat: 11}}})
	if len(got.Rows) != 2 || got.Rows[0].Class != 2 || got.Rows[1].Class != 10 {
		t.Fatalf("rows %+v, want classes 2 and 10 in order", got.Rows)
	}
	if r := got.Rows[0]; r.Predicted != 7 || r.Measured != 7 || r.Error != 0 || r.Net != 12 {
		t.Errorf("class 2: %+v", r)
	}
	if r := got.Rows[1]; r.Predicted != 31 || r.Measured != 33 || r.Error != (31.0-33)/33 {
		t.Errorf("class 10: %+v, want the disagreeing representative's 31 and 33", r)
	}
	var b strings.Builder
	if err := got.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"interpreter", "class 2 ", "class 10 ", "-6.1%", "error over 2 classes"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}
