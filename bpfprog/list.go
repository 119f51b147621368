package bpfprog

import "github.com/cilium/ebpf"

// TypeText names a program type as the table shows it.
func TypeText(t ebpf.ProgramType) string {
	if t == ebpf.UnspecifiedProgram {
		return "XDP (default)"
	}
	return t.String()
}

// List is the JSON of 'dpperf programs' (programs.md): the object's
// candidate programs and its maps.
type List struct {
	File     string         `json:"file"`
	Programs []ProgramEntry `json:"programs"`
	Maps     []MapEntry     `json:"maps"`
}

// ProgramEntry is one candidate program of a List.
type ProgramEntry struct {
	Name     string   `json:"name"`
	Section  string   `json:"section"`
	Type     string   `json:"type"`
	TypeFrom string   `json:"type_from"`
	Insns    int      `json:"instructions"`
	Funcs    int      `json:"functions"`
	Maps     []string `json:"maps"`
}

// MapEntry is one map of a List.
type MapEntry struct {
	Name       string        `json:"name"`
	Type       string        `json:"type"`
	KeySize    uint32        `json:"key_size"`
	ValueSize  uint32        `json:"value_size"`
	MaxEntries uint32        `json:"max_entries"`
	Flags      uint32        `json:"flags"`
	Definition string        `json:"definition"`
	Inner      string        `json:"inner,omitempty"`
	ELFMap     *ELFMapFields `json:"bpf_elf_map,omitempty"`
}

// ELFMapFields are the fields iproute2's struct bpf_elf_map adds.
type ELFMapFields struct {
	ID         uint32 `json:"id"`
	Pinning    uint32 `json:"pinning"`
	InnerID    uint32 `json:"inner_id"`
	InnerIndex uint32 `json:"inner_idx"`
}

// List describes o as `dpperf programs --json` prints it.
func (o *Object) List() List {
	doc := List{File: o.File, Programs: []ProgramEntry{}, Maps: []MapEntry{}}
	for _, e := range o.Entries {
		p := ProgramEntry{Name: e.Name, Section: e.Section, Type: e.Type.String(), TypeFrom: "section",
			Insns: e.Insns, Funcs: e.Funcs, Maps: append([]string{}, e.Maps...)}
		if e.Type == ebpf.UnspecifiedProgram {
			p.Type, p.TypeFrom = ebpf.XDP.String(), "default"
		}
		doc.Programs = append(doc.Programs, p)
	}
	for _, name := range MapNames(o.Maps) {
		m := o.Maps[name]
		j := MapEntry{Name: name, Type: m.Type.String(), KeySize: m.KeySize, ValueSize: m.ValueSize,
			MaxEntries: m.MaxEntries, Flags: m.Flags, Definition: m.Definition()}
		if m.Inner != nil {
			j.Inner = m.Inner.Name
		}
		if d := m.Legacy; d != nil && d.Layout == "bpf_elf_map" {
			j.ELFMap = &ELFMapFields{ID: d.ID, Pinning: d.Pinning, InnerID: d.InnerID, InnerIndex: d.InnerIndex}
		}
		doc.Maps = append(doc.Maps, j)
	}
	return doc
}
