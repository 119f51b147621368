// Names of map keys: which packet fields a lookup key copies, by the
// members of the key's C struct or union.

package perfiface

import (
	"fmt"
	"strings"

	"github.com/cilium/ebpf/btf"
)

// keyText prints a lookup key: the packet fields it copies, by the key
// struct's member names when the object has BTF. The members of an
// anonymous struct are named as C names them, by their own names; a
// member without a name (an anonymous union) by its byte range in the
// key, [4:8].
func (l layout) keyText(mapName string, key *expr) string {
	// A member loaded from the packet in the machine's order holds the
	// packet's bytes as they sit, which is what a member given packet
	// bytes (a field, pkt[i:j]) takes: written so, without le32(...).
	one := func(v *expr) string {
		if v.op == opPkt && v.descending() && len(v.offs) > 1 {
			return render(v.swapped(), l)
		}
		return render(v, l)
	}
	m := l.mapTypes[mapName]
	if m == nil || m.Key == nil {
		return one(key)
	}
	st, ok := btf.UnderlyingType(m.Key).(*btf.Struct)
	if !ok {
		return one(key)
	}
	var parts []string
	var members func(st *btf.Struct, base int) bool
	members = func(st *btf.Struct, base int) bool {
		for _, mem := range st.Members {
			size, err := btf.Sizeof(mem.Type)
			if err != nil || mem.Offset%8 != 0 || mem.BitfieldSize != 0 {
				return false
			}
			lo := base + int(mem.Offset/8)
			if 8*(lo+size) > key.w {
				return true
			}
			if inner, ok := btf.UnderlyingType(mem.Type).(*btf.Struct); ok && mem.Name == "" {
				if !members(inner, lo) {
					return false
				}
				continue
			}
			v := extract(key, 8*(lo+size)-1, 8*lo)
			if v.isConst() && v.c == 0 && (mem.Name == "" || strings.HasPrefix(mem.Name, "pad") || strings.HasPrefix(mem.Name, "_") || strings.HasPrefix(mem.Name, "reserved")) {
				continue // padding the program zeroed
			}
			name := mem.Name
			if name == "" {
				// An anonymous union: by its smallest member that holds
				// the value, the bytes above it being zero.
				name, v = unionMember(mem.Type, key, lo, size, v)
			}
			parts = append(parts, name+"="+one(v))
		}
		return true
	}
	if !members(st, 0) {
		return one(key)
	}
	return strings.Join(parts, ", ")
}

// members lists the members of a struct or union type (none for other
// types).
func members(t btf.Type) []btf.Member {
	switch st := btf.UnderlyingType(t).(type) {
	case *btf.Struct:
		return st.Members
	case *btf.Union:
		return st.Members
	}
	return nil
}

// memberAt names the struct member at a byte offset and size, or "".
// The members of an anonymous struct or union are named by their own
// names, as in C; an anonymous member that is not one has no name.
func memberAt(t btf.Type, off, size int) string {
	for _, mem := range members(t) {
		s, err := btf.Sizeof(mem.Type)
		if err != nil || mem.Offset%8 != 0 {
			continue
		}
		lo := int(mem.Offset / 8)
		if lo == off && s == size && mem.Name != "" {
			return mem.Name
		}
		if lo <= off && off+size <= lo+s {
			if inner := memberAt(mem.Type, off-lo, size); inner != "" && mem.Name == "" {
				return inner
			} else if inner != "" {
				return mem.Name + "." + inner
			}
		}
	}
	return ""
}

// unionMember names the value v of an anonymous member at byte lo of a
// key: by the smallest named member of a union whose bytes hold v (those
// above it are zero), and that member's part of v; else by its byte
// range, at_4_8.
func unionMember(t btf.Type, key *expr, lo, size int, v *expr) (string, *expr) {
	best, bestSize := "", size+1
	if u, ok := btf.UnderlyingType(t).(*btf.Union); ok {
		for _, m := range u.Members {
			s, err := btf.Sizeof(m.Type)
			if err != nil || m.Name == "" || m.Offset != 0 || m.BitfieldSize != 0 || s > size || s >= bestSize {
				continue
			}
			if s < size {
				if high := extract(key, 8*(lo+size)-1, 8*(lo+s)); !high.isConst() || high.c != 0 {
					continue
				}
			}
			best, bestSize = m.Name, s
		}
	}
	if best == "" {
		return fmt.Sprintf("at_%d_%d", lo, lo+size), v
	}
	return best, extract(key, 8*(lo+bestSize)-1, 8*lo)
}
