package perfiface

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cilium/ebpf/btf"

	"github.com/dpperf/dpperf/mapstate"
	"github.com/dpperf/dpperf/target"
)

//go:embed pyruntime.py
var pyRuntime string

// Module writes a view as a self-contained Python 3 module (standard
// library only): the interface function as Python prints it, each class
// returning cls(id, cost); tables of the program's headers, maps and
// classes; and the runtime that gives the conditions' names a meaning
// (pkt.ip.src, pkt.ipv6.ext[1].hdr_len, flows.contains(...),
// le64(...), hash(...)). Run as a script, it reads a capture and prints
// every frame's class and cost, then a summary per class:
//
//	python3 iface.py capture.pcap [--maps state.json] [--pcv NAME=VALUE]
//
// Classes are numbered as the leaves appear in the text, from 0 (the
// order of Deployment.Classes).
func (it *Interface) Module(w io.Writer, v *View, header ...string) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "#!/usr/bin/env python3\n\"\"\"Performance interface of %s, as a program.\n\n", pyDocText(it.Program))
	fmt.Fprintf(bw, "%s(pkt, state) returns the class of a packet and its cost in %s;\n", it.funcName(), it.Unit)
	bw.WriteString("run as a script, it evaluates every frame of a capture:\n\n" +
		"    python3 THIS.py capture.pcap [--maps state.json] [--pcv NAME=VALUE]\n\"\"\"\n\n")
	var classes []string
	p := &pyWriter{w: bw}
	p.leaf = func(n *VNode) string {
		id := len(classes)
		note := strings.TrimPrefix(leafNote(n), "  # ")
		classes = append(classes, note)
		return fmt.Sprintf("return cls(%d, %s)%s", id, n.Value, leafNote(n))
	}
	if err := it.pyFunc(p, v, header); err != nil {
		return err
	}
	tables, err := it.pyTables(classes)
	if err != nil {
		return err
	}
	bw.WriteString("\n\nINTERFACE = " + it.funcName() + "\n")
	bw.WriteString(tables)
	bw.WriteString(pyRuntime)
	return bw.Flush()
}

func pyDocText(s string) string { return strings.ReplaceAll(s, `"""`, `'''`) }

// funcName is the name of the interface function.
func (it *Interface) funcName() string {
	if it.prog != nil && it.prog.Name != "" {
		return "perf_" + strings.NewReplacer("-", "_", ".", "_", "/", "_").Replace(it.prog.Name)
	}
	return "perf"
}

// pyMap is what the module needs of a map: its kind, sizes, the byte
// ranges of its key's and value's members by the names conditions use.
type pyMap struct {
	Ident      string            `json:"ident"`
	Type       string            `json:"type"`
	KeySize    uint32            `json:"key_size"`
	ValueSize  uint32            `json:"value_size"`
	MaxEntries uint32            `json:"max_entries"`
	KeyMembers map[string][2]int `json:"key_members"`
	ValMembers map[string][2]int `json:"value_members"`
}

// pyTables writes the program's tables as Python assignments.
func (it *Interface) pyTables(classes []string) (string, error) {
	var b strings.Builder
	jsonLine := func(name string, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s = json.loads(%s)\n", name, pyString(string(data)))
		return nil
	}
	b.WriteString("\nimport json  # noqa: E402\n\n")
	fmt.Fprintf(&b, "PROGRAM = %s\n", pyString(it.Program))
	fields := map[string]map[string][2]int{}
	add := func(fs []field, base int) {
		for _, f := range fs {
			hdr, name, _ := strings.Cut(f.name, ".")
			if fields[hdr] == nil {
				fields[hdr] = map[string][2]int{}
			}
			fields[hdr][name] = [2]int{f.off - base, f.size}
		}
	}
	add(ethFields, 0)
	add(vlanFields, 14)
	for _, fs := range [][]field{ipv4Fields, ipv6Fields, tcpFields, udpFields, icmpFields, quicFields, extFields} {
		add(fs, 0)
	}
	if err := jsonLine("FIELDS", fields); err != nil {
		return "", err
	}
	maps := map[string]pyMap{}
	var defaults *mapstate.State
	if it.prog != nil {
		for name, m := range it.prog.Maps {
			pm := pyMap{Ident: pyIdent(name), Type: target.MapTypeName(m.Type), KeySize: m.KeySize, ValueSize: m.ValueSize,
				MaxEntries: m.MaxEntries, KeyMembers: map[string][2]int{}, ValMembers: map[string][2]int{}}
			if m.Key != nil {
				btfMembers(m.Key, 0, "", true, pm.KeyMembers)
			}
			if m.Value != nil {
				btfMembers(m.Value, 0, "", false, pm.ValMembers)
			}
			maps[name] = pm
		}
		if d, err := mapstate.ObjectDefaults(it.prog); err == nil {
			defaults = d
		}
	}
	if defaults == nil {
		defaults = mapstate.New()
	}
	if err := jsonLine("MAPS", maps); err != nil {
		return "", err
	}
	if err := jsonLine("DEFAULTS", defaults.Maps); err != nil {
		return "", err
	}
	if err := jsonLine("CLASSES", classes); err != nil {
		return "", err
	}
	pcvs := []string{}
	for _, c := range it.PCVs {
		pcvs = append(pcvs, c.Var)
	}
	sort.Strings(pcvs)
	if err := jsonLine("PCVS", pcvs); err != nil {
		return "", err
	}
	b.WriteString("for _v in PCVS:\n    globals()[_v] = 1.0\n")
	return b.String(), nil
}

// pyString is s as a Python string literal.
func pyString(s string) string {
	q, _ := json.Marshal(s) // JSON's escapes are Python's for these strings
	return string(q)
}

// btfMembers lists the members of a key or value type by the names
// conditions give them: keys by member name (an anonymous union's members
// by theirs, an unnamed member as at_LO_HI), values by their dotted path
// (memberAt).
func btfMembers(t btf.Type, base int, prefix string, key bool, out map[string][2]int) {
	for _, m := range members(t) {
		size, err := btf.Sizeof(m.Type)
		if err != nil || m.Offset%8 != 0 || m.BitfieldSize != 0 {
			continue
		}
		lo := base + int(m.Offset/8)
		_, isStruct := btf.UnderlyingType(m.Type).(*btf.Struct)
		_, isUnion := btf.UnderlyingType(m.Type).(*btf.Union)
		switch {
		case m.Name == "" && (isStruct || isUnion):
			if key {
				out[fmt.Sprintf("at_%d_%d", lo, lo+size)] = [2]int{lo, size}
			}
			btfMembers(m.Type, lo, prefix, key, out)
		case m.Name == "":
			if key {
				out[fmt.Sprintf("at_%d_%d", lo, lo+size)] = [2]int{lo, size}
			}
		case key:
			out[m.Name] = [2]int{lo, size}
		default:
			out[prefix+m.Name] = [2]int{lo, size}
			if isStruct || isUnion {
				btfMembers(m.Type, lo, prefix+m.Name+".", key, out)
			}
		}
	}
}
