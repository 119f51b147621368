package collect

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// fetchArg is a kprobe fetch argument the BPF kprobe program can follow:
// a function argument, then zero or more memory loads at an offset from
// the previous value, the last one of Size bytes.
//
//	+24(+16($arg1)):u16  ->  Arg 1, Offs [16 24], Size 2
//	                         *(u16 *)(*(u64 *)(arg1 + 16) + 24)
type fetchArg struct {
	Arg  int     // 1-based argument number
	Offs []int32 // innermost first
	Size uint8   // bytes of the final value
}

// maxDeref matches MAX_DEREF in bpf/nvme.c.
const maxDeref = 4

// parseFetchArg parses the subset of kprobe_events fetch-args that
// bpf/nvme.c implements: $argN, nested +|-OFFS(...) memory loads, and an
// optional :u8/:u16/:u32/:u64 (s and x types alike) of the final value.
func parseFetchArg(s string) (fetchArg, error) {
	var f fetchArg
	expr, typ, hasType := strings.Cut(s, ":")
	f.Size = 8
	if hasType {
		if len(typ) < 2 || !strings.ContainsRune("usx", rune(typ[0])) {
			return f, fmt.Errorf("fetch argument %q: type %q not supported (want u8..u64, s8..s64 or x8..x64)", s, typ)
		}
		switch typ[1:] {
		case "8":
			f.Size = 1
		case "16":
			f.Size = 2
		case "32":
			f.Size = 4
		case "64":
			f.Size = 8
		default:
			return f, fmt.Errorf("fetch argument %q: type %q not supported (want u8..u64, s8..s64 or x8..x64)", s, typ)
		}
	}
	var outer []int32
	for len(expr) > 0 && (expr[0] == '+' || expr[0] == '-') {
		open := strings.IndexByte(expr, '(')
		if open < 0 || !strings.HasSuffix(expr, ")") {
			return f, fmt.Errorf("fetch argument %q: want +OFFS(ARG)", s)
		}
		off, err := strconv.ParseInt(expr[:open], 0, 32)
		if err != nil {
			return f, fmt.Errorf("fetch argument %q: bad offset %q", s, expr[:open])
		}
		outer = append(outer, int32(off))
		expr = expr[open+1 : len(expr)-1]
	}
	n, ok := strings.CutPrefix(expr, "$arg")
	if !ok {
		return f, fmt.Errorf("fetch argument %q: only $argN and memory loads from it are supported", s)
	}
	arg, err := strconv.Atoi(n)
	if err != nil || arg < 1 || arg > 8 {
		return f, fmt.Errorf("fetch argument %q: bad argument number %q", s, n)
	}
	if len(outer) > maxDeref {
		return f, fmt.Errorf("fetch argument %q: more than %d memory loads", s, maxDeref)
	}
	f.Arg = arg
	for i := len(outer) - 1; i >= 0; i-- {
		f.Offs = append(f.Offs, outer[i])
	}
	return f, nil
}

// argRegs gives, per architecture, the offset in struct pt_regs of the
// registers that hold a function's first arguments (the kernel's calling
// convention): x86-64 di, si, dx, cx, r8, r9 (arch/x86/include/asm/ptrace.h);
// arm64 regs[0..7] (struct user_pt_regs first).
var argRegs = map[string][]uint16{
	"amd64": {112, 104, 96, 88, 72, 64},
	"arm64": {0, 8, 16, 24, 32, 40, 48, 56},
}

// bpfFetch turns f into struct fetch of bpf/nvme.c for this machine.
func (f fetchArg) bpfFetch() (nvmeFetch, error) {
	regs := argRegs[runtime.GOARCH]
	if f.Arg > len(regs) {
		return nvmeFetch{}, fmt.Errorf("kprobe arguments on %s: argument %d not supported", runtime.GOARCH, f.Arg)
	}
	d := nvmeFetch{Reg: regs[f.Arg-1], N: uint8(len(f.Offs)), Size: f.Size}
	copy(d.Off[:], f.Offs)
	return d, nil
}
