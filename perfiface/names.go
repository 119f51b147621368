package perfiface

import "strings"

// What a rendered test shows of the solver rather than of the packet,
// read by scanning its words (runs of letters, digits and _): a word that
// is one of the solver's name prefixes followed by digits only is one of
// its names (t12, found3, mem0).

// solverPrefixes are the letters the symbolic executor names its terms
// with.
var solverPrefixes = [...]string{"t", "v", "x", "c", "u", "m", "e", "r", "rm", "tc", "csum", "found", "mem"}

// solverTerm reports whether a rendered test names one of the solver's
// terms, an opaque value or an unrendered branch: two such tests are not
// known to be the same test.
func solverTerm(s string) bool {
	return strings.Contains(s, "opaque(") || strings.Contains(s, "branch_at(") ||
		anyWord(s, func(w string, _ byte) bool { return isSolverName(w) })
}

// rawName reports whether a rendered test shows what no protocol field or
// map fits: the solver's own names, raw packet bytes, little-endian loads
// (le32(...)), concatenations. Such tests get their source line as a
// comment.
func rawName(s string) bool {
	for _, sub := range [...]string{"mem[", "pkt[", "concat(", "bit(", "opaque("} {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return anyWord(s, func(w string, next byte) bool {
		return isSolverName(w) || next == '(' && prefixDigits(w, "le")
	})
}

// anyWord reports whether f holds for a word of s (a maximal run of
// ASCII letters, digits and _), given the byte after it (0 at the end).
func anyWord(s string, f func(w string, next byte) bool) bool {
	for i := 0; i < len(s); {
		if !wordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && wordByte(s[j]) {
			j++
		}
		var next byte
		if j < len(s) {
			next = s[j]
		}
		if f(s[i:j], next) {
			return true
		}
		i = j
	}
	return false
}

// isSolverName reports whether a word is a solver prefix and digits.
func isSolverName(w string) bool {
	for _, p := range solverPrefixes {
		if prefixDigits(w, p) {
			return true
		}
	}
	return false
}

// prefixDigits reports whether w is p followed by one digit or more.
func prefixDigits(w, p string) bool {
	if len(w) <= len(p) || w[:len(p)] != p {
		return false
	}
	for i := len(p); i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

func wordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_'
}
