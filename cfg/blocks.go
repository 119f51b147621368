package cfg

import (
	"fmt"

	"github.com/cilium/ebpf/asm"

	"github.com/dpperf/dpperf/bpfprog"
)

// TermKind says how a basic block ends.
type TermKind uint8

const (
	TermFall TermKind = iota // falls through into the next block
	TermJump                 // unconditional jump
	TermCond                 // conditional jump: Target if taken, Next if not
	TermExit                 // BPF exit
	TermCall                 // bpf-to-bpf call; continues at Next on return
)

// Block is a basic block of one function: Insns[First..Last] of the program.
type Block struct {
	First, Last int
	Term        TermKind
	Next        int // fall-through / not-taken / return block, -1 if none
	Target      int // taken / jump target block, -1 if none
	Callee      int // index in Program.Funcs for TermCall
}

// Func is the block structure of one BPF function.
type Func struct {
	Index  int // in Program.Funcs
	Name   string
	Blocks []Block
	Loops  []*Loop
	loopOf []*Loop // innermost loop of each block, nil outside loops
}

// splitBlocks builds the basic blocks of function fi.
func splitBlocks(p *bpfprog.Program, fi int) (*Func, error) {
	f := p.Funcs[fi]
	target := func(i int) (int, error) {
		t, raw, ok := p.JumpTarget(i)
		if !ok || t < f.Start || t >= f.End {
			return 0, fmt.Errorf("%s: jump target %d is outside function %s", where(p, i), raw, f.Name)
		}
		return t, nil
	}

	leader := map[int]bool{f.Start: true}
	for i := f.Start; i < f.End; i++ {
		ins := p.Insns[i]
		if err := checkInsn(p, i); err != nil {
			return nil, err
		}
		if !ins.OpCode.Class().IsJump() {
			continue
		}
		switch op := ins.OpCode.JumpOp(); {
		case op == asm.Exit:
			leader[i+1] = true
		case op == asm.Call:
			if ins.IsFunctionCall() {
				leader[i+1] = true
			}
		default:
			t, err := target(i)
			if err != nil {
				return nil, err
			}
			leader[t] = true
			leader[i+1] = true
		}
	}

	fn := &Func{Index: fi, Name: f.Name}
	blockAt := map[int]int{}
	for i := f.Start; i < f.End; {
		j := i
		for j+1 < f.End && !leader[j+1] {
			j++
		}
		blockAt[i] = len(fn.Blocks)
		fn.Blocks = append(fn.Blocks, Block{First: i, Last: j, Next: -1, Target: -1, Callee: -1})
		i = j + 1
	}
	for bi := range fn.Blocks {
		b := &fn.Blocks[bi]
		ins := p.Insns[b.Last]
		next := -1
		if n, ok := blockAt[b.Last+1]; ok {
			next = n
		}
		b.Term = TermFall
		b.Next = next
		if ins.OpCode.Class().IsJump() {
			switch op := ins.OpCode.JumpOp(); {
			case op == asm.Exit:
				b.Term, b.Next = TermExit, -1
			case op == asm.Call && ins.IsFunctionCall():
				callee := p.FuncByName(ins.Reference())
				if callee < 0 {
					return nil, fmt.Errorf("%s: call to unknown function %q", where(p, b.Last), ins.Reference())
				}
				b.Term, b.Callee = TermCall, callee
			case op == asm.Call:
				// A helper call does not end a block.
			case op == asm.Ja:
				t, _ := target(b.Last)
				b.Term, b.Target, b.Next = TermJump, blockAt[t], -1
			default:
				t, _ := target(b.Last)
				b.Term, b.Target = TermCond, blockAt[t]
			}
		}
		if (b.Term == TermFall || b.Term == TermCond || b.Term == TermCall) && b.Next < 0 {
			return nil, fmt.Errorf("%s: control falls off the end of function %s", where(p, b.Last), f.Name)
		}
	}
	return fn, nil
}

// succs lists the successor blocks of b.
func (b *Block) succs() []int {
	var s []int
	if b.Target >= 0 {
		s = append(s, b.Target)
	}
	if b.Next >= 0 {
		s = append(s, b.Next)
	}
	return s
}

// where names instruction i for error messages: its index and source line.
func where(p *bpfprog.Program, i int) string {
	loc, _ := p.Line(i)
	if loc == "" {
		return fmt.Sprintf("instruction %d", i)
	}
	return fmt.Sprintf("instruction %d (%s)", i, loc)
}

// checkInsn rejects instructions the analyses do not model.
func checkInsn(p *bpfprog.Program, i int) error {
	ins := p.Insns[i]
	op := ins.OpCode
	cls := op.Class()
	srcIsReg := cls == asm.LdXClass || cls == asm.StXClass ||
		((cls.IsALU() || cls.IsJump()) && op.Source() == asm.RegSource && op.JumpOp() != asm.Call)
	if ins.Dst > asm.R10 || (srcIsReg && ins.Src > asm.R10) {
		return fmt.Errorf("%s: invalid register in %v", where(p, i), ins)
	}
	switch {
	case cls.IsALU():
		switch op.ALUOp() {
		case asm.Add, asm.Sub, asm.Mul, asm.Div, asm.Or, asm.And, asm.LSh, asm.RSh,
			asm.Neg, asm.Mod, asm.Xor, asm.Mov, asm.ArSh, asm.Swap:
			return nil
		}
	case cls.IsJump():
		switch op.JumpOp() {
		case asm.Ja, asm.JEq, asm.JGT, asm.JGE, asm.JSet, asm.JNE, asm.JSGT, asm.JSGE,
			asm.JLT, asm.JLE, asm.JSLT, asm.JSLE, asm.Exit:
			return nil
		case asm.Call:
			if ins.IsFunctionCall() || ins.IsBuiltinCall() {
				return nil
			}
			return fmt.Errorf("%s: unsupported call %v (kfuncs and indirect calls are not modelled)", where(p, i), ins)
		}
	case cls == asm.LdClass:
		switch op.Mode() {
		case asm.ImmMode, asm.AbsMode, asm.IndMode:
			return nil
		}
	case cls == asm.LdXClass:
		if op.Mode() == asm.MemMode || op.Mode() == asm.MemSXMode {
			return nil
		}
	case cls == asm.StClass, cls == asm.StXClass:
		if op.Mode() == asm.MemMode || op.Mode() == asm.AtomicMode {
			return nil
		}
	}
	return fmt.Errorf("%s: unsupported instruction %v", where(p, i), ins)
}
