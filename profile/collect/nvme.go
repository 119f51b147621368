package collect

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/dpperf/dpperf/profile/path"
)

// nvmeTracepoints lists the tracepoints bpf/nvme.c handles, in the order of
// its TP_* constants, with the program for each; TP_KPROBE follows them.
var nvmeTracepoints = []struct{ sys, name, prog string }{
	{"nvme", "nvme_setup_cmd", "setup_cmd"},
	{"nvme", "nvme_complete_rq", "complete_rq"},
	{"nvmet", "nvmet_req_init", "req_init"},
	{"nvmet", "nvmet_req_complete", "req_complete"},
	{"block", "block_rq_issue", "nv_rq_issue"},
	{"block", "block_rq_complete", "nv_rq_complete"},
}

const (
	nvmeTPs      = 7 // TP_MAX of bpf/nvme.c
	nvmeKprobeTP = 6
	noField      = 0xffff
	spaceBlock   = 0
	spaceNVMe    = 1
)

// nvmeSetup is what openNVMe derives from a path before loading anything.
type nvmeSetup struct {
	kinds, spaces, joins [nvmeTPs]uint8
	layouts              [nvmeTPs]nvmeLayout
	joinKind             uint8
	first, last          uint8
	kprobe               *path.Event // the path's kprobe event, if observed
	fetch                map[string]nvmeFetch
	status               []Status
}

// planNVMe maps the path's events onto bpf/nvme.c. format reads a
// tracepoint's field offsets (nil error: the tracepoint exists); kprobeOK
// says whether a kprobe event can be attached, and why not.
func planNVMe(p *path.Path, format func(sys, name string) (map[string]uint32, error), kprobeOK func(*path.Event, []string) (bool, string)) (*nvmeSetup, error) {
	s := &nvmeSetup{joinKind: noKind, first: noKind, last: noKind, fetch: map[string]nvmeFetch{}}
	for i := range s.kinds {
		s.kinds[i] = noKind
	}
	for i := range p.Events {
		e := &p.Events[i]
		st := Status{Name: e.Name, Probe: e.Tracepoint}
		key := p.EventKey(i)
		space := uint8(spaceBlock)
		if slices.Contains(key, "qid") {
			space = spaceNVMe
		}
		tp := -1
		if e.Kprobe != "" {
			st.Probe = "kprobe:" + e.Kprobe
			if s.kprobe != nil {
				return nil, fmt.Errorf("bpf collector: path %s has more than one kprobe; use --collector tracefs", p.Name)
			}
			ok, why := kprobeOK(e, key)
			if ok {
				var err error
				if why, err = s.planFetch(e, key); err != nil {
					return nil, err
				}
				ok = why == ""
			}
			if !ok {
				st.Reason = why
				s.status = append(s.status, st)
				continue
			}
			tp, s.kprobe = nvmeKprobeTP, e
		} else {
			sys, name := e.TraceName()
			for j, t := range nvmeTracepoints {
				if t.sys == sys && t.name == name {
					tp = j
				}
			}
			if tp < 0 {
				return nil, fmt.Errorf("bpf collector: path %s needs %s, which it does not handle; use --collector tracefs", p.Name, e.Tracepoint)
			}
			f, err := format(sys, name)
			if err != nil {
				st.Reason = "tracepoint absent in this kernel (module not loaded?)"
				s.status = append(s.status, st)
				continue
			}
			l, why := layoutOf(f, space)
			if why != "" {
				st.Reason = e.Tracepoint + ": " + why
				s.status = append(s.status, st)
				continue
			}
			s.layouts[tp] = l
		}
		if s.kinds[tp] != noKind {
			return nil, fmt.Errorf("bpf collector: path %s uses %s twice; use --collector tracefs", p.Name, st.Probe)
		}
		s.kinds[tp], s.spaces[tp] = uint8(i), space
		if e.Join != "" {
			j := uint8(p.EventIndex(e.Join))
			if s.joinKind != noKind && s.joinKind != j {
				return nil, fmt.Errorf("bpf collector: path %s joins more than one event; use --collector tracefs", p.Name)
			}
			s.joinKind, s.joins[tp] = j, 1
		}
		if s.first == noKind {
			s.first = uint8(i)
		}
		s.last = uint8(i)
		st.Attached = true
		s.status = append(s.status, st)
	}
	if s.first == noKind || s.first == s.last {
		return nil, fmt.Errorf("bpf collector: fewer than two events of path %s can be observed", p.Name)
	}
	return s, nil
}

// planFetch parses the kprobe's fetch arguments of its key fields; a
// non-empty reason says why the kprobe cannot be followed in BPF.
func (s *nvmeSetup) planFetch(e *path.Event, key []string) (string, error) {
	for _, k := range key {
		f, err := parseFetchArg(e.Args[k])
		if err != nil {
			return "", fmt.Errorf("path event %s: %w", e.Name, err)
		}
		d, err := f.bpfFetch()
		if err != nil {
			return err.Error(), nil
		}
		s.fetch[k] = d
	}
	return "", nil
}

// layoutOf takes the offsets bpf/common.h reads from a tracepoint's
// format (struct layout, the same in both programs); a non-empty reason
// says what is missing.
func layoutOf(f map[string]uint32, space uint8) (nvmeLayout, string) {
	l := nvmeLayout{Dev: noField, Sector: noField, NrSector: noField, Rwbs: noField, Bytes: noField, Qid: noField, Cid: noField, Opcode: noField}
	get := func(name string, dst *uint16) bool {
		off, ok := f[name]
		if ok {
			*dst = uint16(off)
		}
		return ok
	}
	if space == spaceNVMe {
		get("opcode", &l.Opcode)
		if !get("qid", &l.Qid) || !get("cid", &l.Cid) {
			return l, "lacks qid or cid"
		}
		return l, ""
	}
	get("bytes", &l.Bytes)
	if !get("dev", &l.Dev) || !get("sector", &l.Sector) || !get("nr_sector", &l.NrSector) || !get("rwbs", &l.Rwbs) {
		return l, "lacks dev, sector, nr_sector or rwbs"
	}
	return l, ""
}

// nvmeSpec loads bpf/nvme.c with the constants of s set, keeping only
// the programs the path uses.
func nvmeSpec(s *nvmeSetup, cfg Config) (*ebpf.CollectionSpec, error) {
	spec, err := loadNvme()
	if err != nil {
		return nil, fmt.Errorf("load bpf spec: %w", err)
	}
	set := map[string]any{
		"kinds": s.kinds, "spaces": s.spaces, "joins": s.joins, "join_kind": s.joinKind, "layouts": s.layouts,
		"first_kind": s.first, "last_kind": s.last,
	}
	for k, d := range s.fetch {
		set["kprobe_"+k] = d
	}
	if err := configure(spec, cfg, set); err != nil {
		return nil, err
	}
	for tp, t := range nvmeTracepoints {
		if s.kinds[tp] == noKind {
			delete(spec.Programs, t.prog)
		}
	}
	if s.kprobe == nil {
		delete(spec.Programs, "path_kprobe")
	}
	return spec, nil
}

// openNVMe loads bpf/nvme.c for a path of nvme, nvmet and block
// tracepoints and at most one kprobe.
func openNVMe(cfg Config) (*BPF, error) {
	s, err := planNVMe(cfg.Path, tracepointFormat, kprobeStatus)
	if err != nil {
		return nil, err
	}
	spec, err := nvmeSpec(s, cfg)
	if err != nil {
		return nil, err
	}
	c := &BPF{set: ProgramsTracepoint, status: s.status}
	if s.kprobe != nil {
		c.set = ProgramsTracepointKprobe
	}
	c.rd.dec = decoder{&nvmeRecord, s.kinds[:]}
	if err := c.load(spec, cfg.Stats); err != nil {
		return nil, err
	}
	for tp, t := range nvmeTracepoints {
		if s.kinds[tp] == noKind {
			continue
		}
		prog := c.coll.Programs[t.prog]
		c.addProgram(t.name, t.sys+":"+t.name, prog, func() (link.Link, error) { return link.Tracepoint(t.sys, t.name, prog, nil) })
	}
	if s.kprobe != nil {
		prog := c.coll.Programs["path_kprobe"]
		fn := s.kprobe.Kprobe
		c.addProgram("kprobe:"+fn, "kprobe "+fn, prog, func() (link.Link, error) { return link.Kprobe(fn, prog, nil) })
	}
	return c.start()
}

// BPFHandles reports whether the BPF collector has programs for every
// event of p: block tracepoints only (bpf/block.c), or the nvme, nvmet,
// block_rq_issue/complete tracepoints and at most one kprobe whose fetch
// arguments it can follow (bpf/nvme.c).
func BPFHandles(p *path.Path) bool {
	block := true
	for i := range p.Events {
		sys, name := p.Events[i].TraceName()
		known := false
		for _, t := range blockTracepoints {
			known = known || (sys == "block" && name == t.name)
		}
		block = block && known && p.Events[i].Kprobe == ""
	}
	if block {
		return true
	}
	always := func(*path.Event, []string) (bool, string) { return true, "" }
	fields := func(string, string) (map[string]uint32, error) {
		return map[string]uint32{"dev": 0, "sector": 0, "nr_sector": 0, "rwbs": 0, "qid": 0, "cid": 0}, nil
	}
	_, err := planNVMe(p, fields, always)
	return err == nil
}
