package symex

import (
	"strconv"
	"strings"
)

// Lookup is a map lookup on an example's path: the instruction that calls
// bpf_map_lookup_elem and whether, in the example's model, it finds its
// key. A path's costs depend on it (a hit and a miss cost differently).
type Lookup struct {
	Insn  int
	Found bool
}

// noteLookup writes "; @found INSN NULL" for a lookup's result v: the Bool
// that the lookup returned NULL (v.null), which Example evaluates.
func (m *machine) noteLookup(v value) {
	null := "false"
	if v.null != nil {
		null = v.null.s
	}
	m.b.emit("; @found " + strconv.Itoa(m.cur) + " " + null)
}

// lookupTerms lists the loaded path's lookups, in path order, with the
// terms a model's values decide their outcomes by.
func (c *Checker) lookupTerms() ([]Lookup, []string) {
	var ls []Lookup
	var terms []string
	for _, f := range c.comments("found") {
		insn, err := strconv.Atoi(f[0])
		if err != nil || len(f) < 2 {
			continue
		}
		ls = append(ls, Lookup{Insn: insn})
		terms = append(terms, strings.Join(f[1:], " "))
	}
	return ls, terms
}

// readLookups sets each lookup's outcome from the values of its terms.
func readLookups(ls []Lookup, vals []string) []Lookup {
	for i := range ls {
		ls[i].Found = vals[i] == "false"
	}
	return ls
}
