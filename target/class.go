package target

import (
	"strings"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Class returns the cost class of a non-memory instruction, or "" for
// memory accesses and helper calls, which are priced by region and helper.
// inCallee says whether the instruction is in a called function, where
// exit is a return.
func Class(ins asm.Instruction, inCallee bool) string {
	op := ins.OpCode
	switch cls := op.Class(); {
	case cls.IsALU():
		switch op.ALUOp() {
		case asm.Mul:
			return "mul"
		case asm.Div:
			return "div"
		case asm.Mod:
			return "mod"
		case asm.Swap:
			return "swap"
		case asm.LSh, asm.RSh, asm.ArSh:
			switch {
			case cls == asm.ALUClass:
				return "shift32"
			case op.Source() == asm.RegSource:
				return "shift64_reg"
			}
			return "shift64"
		}
		if cls == asm.ALUClass {
			return "alu32"
		}
		return "alu64"
	case cls == asm.LdClass && op.Mode() == asm.ImmMode:
		return "ld_imm64"
	case cls.IsJump():
		switch op.JumpOp() {
		case asm.Ja:
			return "jump"
		case asm.Exit:
			if inCallee {
				return "return"
			}
			return "exit"
		case asm.Call:
			if ins.IsFunctionCall() {
				return "call"
			}
			return "" // helper
		}
		if cls == asm.Jump32Class {
			return "cond32"
		}
		return "cond64"
	}
	return ""
}

// HelperName returns the kernel's name of a helper without its "Fn" prefix
// in snake case, e.g. "map_lookup_elem".
func HelperName(fn asm.BuiltinFunc) string {
	return snake(strings.TrimPrefix(fn.String(), "Fn"))
}

// MapTypeName returns a map type as the kernel and the target files name
// it, e.g. "percpu_hash", "lru_hash", "devmap".
func MapTypeName(t ebpf.MapType) string {
	s := snake(t.String())
	s = strings.ReplaceAll(s, "per_cpu", "percpu")
	s = strings.ReplaceAll(s, "lrucpu", "lru_percpu")
	for _, m := range []string{"dev_map", "xsk_map", "cpu_map", "sock_map"} {
		s = strings.ReplaceAll(s, m, strings.ReplaceAll(m, "_", ""))
	}
	return s
}

// snake turns a Go name into snake case, keeping acronyms together
// ("PerCPUHash" → "per_cpu_hash").
func snake(s string) string {
	rs := []rune(s)
	var b strings.Builder
	isUpper := func(r rune) bool { return r >= 'A' && r <= 'Z' }
	for i, r := range rs {
		if isUpper(r) {
			if i > 0 && (!isUpper(rs[i-1]) || (i+1 < len(rs) && !isUpper(rs[i+1]))) {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// HelperCost prices a helper call on a map of the given type ("" when the
// helper takes no map). ok is false when the target has no entry for the
// helper and its "default" cost was used.
func (t *Target) HelperCost(helper, mapType string) (Vec, bool) {
	byMap, ok := t.Helpers[helper]
	if !ok {
		return t.Helpers["default"]["default"], false
	}
	if v, ok := byMap[mapType]; ok && mapType != "" {
		return v, true
	}
	return byMap["default"], true
}
