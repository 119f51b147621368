package report

import (
	"fmt"
	"html/template"
	"io"
	"math"

	"github.com/dpperf/dpperf/profile/analyze"
)

var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

type bar struct {
	X, W   float64
	Color  string
	Label  string
	Legend string
}

type htmlGroup struct {
	Key     string
	Summary string
	Bars    []bar
	Table   []analyze.Stage
}

type ladRow struct {
	Group, Stage, Cause, Text string
	W                         float64
	Color                     string
}

type htmlData struct {
	P        *analyze.Profile
	C        *analyze.Comparison
	Groups   []htmlGroup
	LAD      []ladRow
	LADMax   float64
	Verdicts []string
	Queue    bool // occupancy columns (report contents queue)
}

const svgWidth = 640.0

// HTML writes a self-contained report: per group a stacked bar of the mean
// time per stage and the stage table; with a comparison, the LAD of every
// stage as a bar chart and the verdicts. p may be nil when only c is given.
func HTML(w io.Writer, p *analyze.Profile, c *analyze.Comparison) error {
	d := htmlData{P: p, C: c, Queue: true}
	if p != nil {
		d.Queue = p.Contents.Has(analyze.ContentQueue)
		for _, g := range p.Groups {
			hg := htmlGroup{Key: g.Key, Table: g.Stages, Summary: summary(&g, profileSpan(p), p.Contents)}
			var sum float64
			for _, s := range g.Stages {
				sum += s.Latency.MeanNS * float64(s.Latency.Count)
			}
			x := 0.0
			for i, s := range g.Stages {
				if sum == 0 {
					break
				}
				width := svgWidth * s.Latency.MeanNS * float64(s.Latency.Count) / sum
				hg.Bars = append(hg.Bars, bar{X: x, W: width, Color: palette[i%len(palette)], Label: s.Name,
					Legend: fmt.Sprintf("%s %s (%.1f%%)", s.Name, analyze.FormatNS(s.Latency.MeanNS), 100*s.Share)})
				x += width
			}
			d.Groups = append(d.Groups, hg)
		}
	}
	if c != nil {
		for _, g := range c.Groups {
			for _, s := range g.Stages {
				d.LADMax = math.Max(d.LADMax, s.LAD)
			}
			d.Verdicts = append(d.Verdicts, g.Key+": "+g.Verdict)
		}
		for _, g := range c.Groups {
			for i, s := range g.Stages {
				row := ladRow{Group: g.Key, Stage: s.Name, Cause: s.Cause, Color: palette[i%len(palette)], Text: "n/a"}
				if s.LAD > 0 && d.LADMax > 0 {
					row.W = (svgWidth - 200) * s.LAD / d.LADMax
					row.Text = fmt.Sprintf("%.2f", s.LAD)
				}
				d.LAD = append(d.LAD, row)
			}
		}
	}
	return htmlTmpl.Execute(w, d)
}

// summary is the line under a group's heading: what the contents allow.
func summary(g *analyze.Group, span string, parts analyze.Contents) string {
	s := fmt.Sprintf("%d requests", g.Requests)
	if parts.Has(analyze.ContentThroughput) {
		s += fmt.Sprintf(", %.0f IOPS, %.1f MB/s", g.IOPS, g.MBps)
	}
	if parts.Has(analyze.ContentLatency) {
		s += fmt.Sprintf(", %s mean %s, p99 %s", span, analyze.FormatNS(g.Latency.MeanNS), analyze.FormatNS(float64(g.Latency.P(99))))
	}
	if parts.Has(analyze.ContentQueue) {
		s += fmt.Sprintf(", %.2f in flight on average", g.Occupancy)
	}
	return s
}

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"ns":  func(v float64) string { return analyze.FormatNS(v) },
	"nsi": func(v int64) string { return analyze.FormatNS(float64(v)) },
	"pct": func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
	"p":   func(d analyze.Dist, q float64) string { return analyze.FormatNS(float64(d.P(q))) },
	"add": func(a, b float64) float64 { return a + b },
	"y":   func(i int) int { return 4 + 22*i },
	"h":   func(n int) int { return 8 + 22*n },
}).Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>dpperf profile</title>
<style>body{font-family:sans-serif;margin:2em;max-width:60em}table{border-collapse:collapse}td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}td:first-child,th:first-child{text-align:left}svg text{font-size:12px}</style>
</head><body>
{{with .P}}<h1>dpperf profile: path {{.Path}}</h1>
<p>source {{.Source}}, window {{printf "%.3f" .Window.Seconds}} s, sample 1/{{.Sample}}{{if .Filter}}, filter {{.Filter}}{{end}}.
{{.Counts.Records}} complete records, {{.Counts.Analyzed}} analyzed, {{.Counts.Lost}} events lost.</p>
<ul>{{range .Events}}<li>{{.Name}} ({{.Probe}}): {{if and .Observed .Count}}{{.Count}} events{{else}}<b>not observed</b>: {{.Reason}}{{end}}</li>{{end}}</ul>
{{range .Warnings}}<p><b>warning:</b> {{.}}</p>{{end}}{{end}}
{{range .Groups}}<h2>group {{.Key}}</h2><p>{{.Summary}}</p>
{{if .Table}}<svg width="640" height="60" role="img" aria-label="mean time per stage">
{{range .Bars}}<rect x="{{.X}}" y="4" width="{{.W}}" height="24" fill="{{.Color}}"><title>{{.Legend}}</title></rect>{{end}}
</svg>
<p>{{range .Bars}}<span style="color:{{.Color}}">&#9632;</span> {{.Legend}} &nbsp; {{end}}</p>
<table><tr><th>stage</th><th>queue</th><th>cause</th><th>count</th><th>avg</th><th>p50</th><th>p90</th><th>p99</th><th>max</th><th>share</th>{{if $.Queue}}<th>occupancy</th>{{end}}</tr>
{{range .Table}}<tr><td>{{.Name}}{{if .Merged}} (merged){{end}}</td><td>{{.Queue}}</td><td>{{.Cause}}</td><td>{{.Latency.Count}}</td><td>{{ns .Latency.MeanNS}}</td><td>{{p .Latency 50}}</td><td>{{p .Latency 90}}</td><td>{{p .Latency 99}}</td><td>{{nsi .Latency.MaxNS}}</td><td>{{pct .Share}}</td>{{if $.Queue}}<td>{{printf "%.3f" .Occupancy}}</td>{{end}}</tr>{{end}}
</table>{{end}}{{end}}
{{if .C}}<h1>Latency amplification (loaded / base)</h1>
<p>base {{.C.Base}}, loaded {{.C.Loaded}}</p>
<ul>{{range .Verdicts}}<li>{{.}}</li>{{end}}</ul>
<svg width="640" height="{{h (len .LAD)}}" role="img" aria-label="LAD per stage">
{{range $i, $r := .LAD}}<text x="0" y="{{y $i | printf "%d"}}" dy="14">{{$r.Group}} {{$r.Stage}}</text><rect x="200" y="{{y $i}}" width="{{$r.W}}" height="18" fill="{{$r.Color}}"><title>{{$r.Cause}}</title></rect><text x="{{add 204 $r.W}}" y="{{y $i}}" dy="14">{{$r.Text}}</text>
{{end}}</svg>{{end}}
</body></html>
`))
