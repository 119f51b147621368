package perfiface

import (
	"sort"
	"strconv"
	"strings"
)

// The symbolic executor declares a constant for every value it does not
// compute: a hash it abstracts (a value computed by too many operations),
// a helper's result, what an unmodelled operation leaves. Their names
// (a213, u7, c12) mean nothing to a reader, so a condition shows what
// each stands for instead: a hash by the inputs it was computed from
// (hash(pkt[54:60], flows.value[0:4])), a helper by its call (now()),
// anything else by what kind of unknown it is (unknown()).

// declaredMeaning names what a declared constant of the symbolic executor
// stands for, by the prefix of its name (symex/exec.go, symex/memory.go, symex/helpers.go),
// for constants that no comment describes.
var declaredMeaning = map[string]string{
	"a":     "hash()",            // an abstracted value whose definition is not in the text
	"u":     "unknown()",         // a value the executor does not model
	"x":     "ctx_field()",       // a context field it does not model
	"c":     "unknown_outcome()", // a comparison it cannot decide
	"h":     "helper_output()",   // bytes an unmodelled helper may have written
	"found": "inner_map_hit()",   // a lookup in an inner map
	"rm":    "redirect_map_hit()",
	"time":  "now()",
	"rnd":   "random()",
	"csum":  "csum_diff()",
	"tc":    "tail_call()",
	"r":     "helper()",
	"o":     "output()",
	"e":     "update()",
}

// declared renders a constant the text declares and no definition,
// lookup or call comment names.
func (t *translator) declared(a string) *expr {
	w := 64
	if dw, ok := t.widths[a]; ok && dw > 0 {
		w = dw
	}
	if ab, ok := t.abstracts[a]; ok {
		return varExpr(w, "hash("+t.inputs(ab)+")")
	}
	if m, ok := declaredMeaning[strings.TrimRight(a, "0123456789")]; ok {
		return varExpr(w, m)
	}
	return varExpr(w, "unknown()")
}

// sortWidth is the width of a declared sort: 1 for Bool, N for
// (_ BitVec N), 0 for an array.
func sortWidth(sort string) int {
	if sort == "Bool" {
		return 1
	}
	if n, ok := strings.CutPrefix(sort, "(_ BitVec "); ok {
		w, _ := strconv.Atoi(strings.TrimSuffix(n, ")"))
		return w
	}
	return 0
}

// maxInputs caps the inputs a hash lists, and maxWalk the terms inputs
// visits.
const (
	maxInputs = 6
	maxWalk   = 1 << 14
)

// inputs lists what the definition of name reads: packet bytes and map
// value bytes as ranges, the packet length, helper results.
func (t *translator) inputs(name string) string {
	in := &inputSet{bytes: map[string][]int{}, other: map[string]bool{}, seen: map[string]bool{}}
	t.walkInputs(in, &sx{atom: name})
	bases := make([]string, 0, len(in.bytes))
	for base := range in.bytes {
		bases = append(bases, base)
	}
	sort.Slice(bases, func(i, j int) bool { // the packet first
		pi, pj := strings.HasPrefix(bases[i], "pkt"), strings.HasPrefix(bases[j], "pkt")
		if pi != pj {
			return pi
		}
		return bases[i] < bases[j]
	})
	var out []string
	for _, base := range bases {
		out = append(out, byteRanges(base, in.bytes[base])...)
	}
	var rest []string
	for s := range in.other {
		rest = append(rest, s)
	}
	sort.Strings(rest)
	out = append(out, rest...)
	if len(out) > maxInputs || in.cut {
		out = append(out[:min(len(out), maxInputs)], "...")
	}
	return strings.Join(out, ", ")
}

type inputSet struct {
	bytes map[string][]int // by array and symbolic base: "pkt", "flows.value", "pkt|ihl*4"
	other map[string]bool
	seen  map[string]bool
	steps int
	cut   bool // the walk stopped at maxWalk
}

func (t *translator) walkInputs(in *inputSet, s *sx) {
	if in.steps++; in.steps > maxWalk {
		in.cut = true
		return
	}
	if !s.isAtom() {
		if s.head() == "select" && len(s.list) == 3 {
			t.selectInput(in, s.list[1], s.list[2])
		}
		for _, a := range s.list[1:] {
			t.walkInputs(in, a)
		}
		return
	}
	a := s.atom
	if in.seen[a] || strings.HasPrefix(a, "#") || a == "true" || a == "false" || a == "pkt0" {
		return
	}
	in.seen[a] = true
	switch n, isLookup := t.lookups[a]; {
	case a == "len":
		in.other["pkt.len"] = true
	case a == "ifindex":
		in.other["ctx.ingress_ifindex"] = true
	case a == "rxq":
		in.other["ctx.rx_queue_index"] = true
	case isLookup && n.found == a:
		in.other[n.mapName+".contains()"] = true
	case isLookup: // a value array: its bytes count where they are read
	case t.calls[a] != nil:
		in.other[callName(t.calls[a])] = true
	case t.abstracts[a] != "":
		t.walkInputs(in, &sx{atom: t.abstracts[a]})
	default:
		if d, ok := t.def(a); ok {
			t.walkInputs(in, d)
		} else if t.widths[a] > 0 {
			in.other[t.declared(a).name] = true
		}
	}
}

// selectInput records the byte a select reads, when its array is the
// packet or a map value (also after stores).
func (t *translator) selectInput(in *inputSet, arr, idx *sx) {
	for depth := 0; depth < 64; depth++ {
		if !arr.isAtom() {
			if arr.head() != "store" || len(arr.list) != 4 {
				return
			}
			arr = arr.list[1]
			continue
		}
		base := ""
		if arr.atom == "pkt0" {
			base = "pkt"
		} else if n, ok := t.lookups[arr.atom]; ok && n.arr == arr.atom {
			base = n.mapName + ".value"
		} else if d, ok := t.def(arr.atom); ok {
			arr = d
			continue
		} else {
			return
		}
		sym, off := linear(t.conv(idx))
		if sym != nil {
			base += "|" + render(sym, plainNames{})
		}
		in.bytes[base] = append(in.bytes[base], off)
		return
	}
}

// byteRanges writes the offsets read from one array as ranges:
// pkt[54:60], pkt[x + 2:x + 4].
func byteRanges(base string, offs []int) []string {
	name, sym, _ := strings.Cut(base, "|")
	if sym != "" {
		sym += " + "
	}
	sort.Ints(offs)
	var out []string
	for i := 0; i < len(offs); {
		j := i
		for j+1 < len(offs) && offs[j+1] <= offs[j]+1 {
			j++
		}
		lo, hi := offs[i], offs[j]+1
		if hi == lo+1 {
			out = append(out, name+"["+sym+strconv.Itoa(lo)+"]")
		} else {
			out = append(out, name+"["+sym+strconv.Itoa(lo)+":"+sym+strconv.Itoa(hi)+"]")
		}
		i = j + 1
	}
	return out
}
