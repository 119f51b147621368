package calibrate

import (
	"strconv"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// bench is one micro-measurement: a program whose body holds copies of one
// operation, timed with base and base+K copies.
type bench struct {
	key     string // the cost (or combination of costs, see method.md) it measures
	variant string // which of the key's micro-programs
	chain   bool   // a dependent chain: the latency of the operation, not its throughput
	group   group  // how many copies
	maps    []mapDef
	setup   func(b *builder)        // after the prologue
	copy    func(b *builder, i int) // copy i of the operation
	body    func(b *builder, k int) // k copies at once (when copies interact)
	sub     func(b *builder)        // a subprogram after the epilogue
	ops     int                     // operations per copy (0: 1)
	aux     []string                // per copy: measurements of the other instructions, subtracted
	raw     bool                    // the program alone, no copies: per_packet, and the speed probe (setup is its body)
	full    bool                    // a variant --quick leaves out: rarely the dearest
	// room, when set, is how many keys a timing may insert: the repeats
	// of a timing are sized so that every copy of every run inserts a
	// new key into a map with room for it. reset, when set, runs before
	// every timing (it empties such a map).
	room  int
	reset func(c *ebpf.Collection) error
	// pcv, when set, verifies each loaded program and its maps before
	// they are timed (check.go); an error leaves the bench unmeasured.
	pcv *pcvCheck
}

// group sizes the number of copies: cheap instructions need many for the
// difference to stand out of the 1 ns resolution of BPF_PROG_TEST_RUN.
type group int

const (
	insnGroup group = iota
	memGroup
	helperGroup
)

// copies returns K for a group; the base program has K/4 copies.
func (g group) copies(quick bool) int {
	k := [...]int{insnGroup: 1024, memGroup: 512, helperGroup: 64}[g]
	if quick {
		k /= 4
	}
	return k
}

func (bn *bench) ID() string {
	if bn.variant == "" {
		return bn.key
	}
	return bn.key + "/" + bn.variant
}

// build assembles the program with k copies.
func (bn *bench) build(k int) *builder {
	b := &builder{}
	if bn.raw { // the program alone, timed whole
		if bn.setup != nil {
			b.prologue()
			bn.setup(b)
		}
		b.epilogue()
		return b
	}
	b.prologue()
	if bn.setup != nil {
		bn.setup(b)
	}
	if bn.body != nil {
		bn.body(b, k)
	} else {
		for i := range k {
			bn.copy(b, i)
		}
	}
	b.epilogue()
	if bn.sub != nil {
		bn.sub(b)
	}
	return b
}

// opsPerCopy is the number of measured operations in one copy.
func (bn *bench) opsPerCopy() int { return max(bn.ops, 1) }

// dest is the register copy i of an independent sequence writes.
func dest(i int) asm.Register { return dests[i%len(dests)] }

// aluBenches measures an ALU operation as a dependent chain on R1 and as
// independent operations on the dests in turn.
func aluBenches(key string, op func(dst asm.Register) asm.Instruction) []*bench {
	return []*bench{
		{key: key, variant: "chain", chain: true, copy: func(b *builder, i int) { b.add(op(asm.R1)) }},
		{key: key, variant: "indep", copy: func(b *builder, i int) { b.add(op(dest(i))) }},
	}
}

// classBenches measures the instruction classes of target.Class.
func classBenches() []*bench {
	var bs []*bench
	bs = append(bs, &bench{key: "per_packet", raw: true}, speedBench())
	bs = append(bs, aluBenches("classes.alu64", func(d asm.Register) asm.Instruction { return asm.Add.Reg(d, asm.R2) })...)
	bs = append(bs, aluBenches("classes.alu32", func(d asm.Register) asm.Instruction { return asm.Add.Reg32(d, asm.R2) })...)
	bs = append(bs, aluBenches("classes.shift32", func(d asm.Register) asm.Instruction { return asm.LSh.Imm32(d, 1) })...)
	bs = append(bs, aluBenches("classes.shift64", func(d asm.Register) asm.Instruction { return asm.LSh.Imm(d, 1) })...)
	bs = append(bs, aluBenches("classes.shift64_reg", func(d asm.Register) asm.Instruction { return asm.LSh.Reg(d, asm.R2) })...)
	bs = append(bs, aluBenches("classes.mul", func(d asm.Register) asm.Instruction { return asm.Mul.Reg(d, asm.R2) })...)
	for _, sz := range []struct {
		name string
		size asm.Size
	}{{"be16", asm.Half}, {"be32", asm.Word}, {"be64", asm.DWord}} {
		for _, bn := range aluBenches("classes.swap", func(d asm.Register) asm.Instruction { return asm.HostTo(asm.BE, d, sz.size) }) {
			bn.variant = sz.name + "-" + bn.variant
			bn.full = sz.name == "be32"
			bs = append(bs, bn)
		}
	}
	// Division: all ones by one keeps the quotient 64 bits wide, the
	// slowest case of dividers that stop early.
	ones := func(b *builder) { b.add(asm.LoadMem(asm.R9, asm.R7, pktAllOnes, asm.DWord)) }
	bs = append(bs,
		&bench{key: "classes.div", variant: "chain", chain: true,
			copy: func(b *builder, i int) { b.add(asm.Div.Reg(asm.R1, asm.R2)) }},
		&bench{key: "classes.div", variant: "wide", setup: ones, aux: []string{"classes.alu64/indep"},
			copy: func(b *builder, i int) { b.add(asm.Mov.Reg(dest(i), asm.R9), asm.Div.Reg(dest(i), asm.R2)) }})
	mod3 := func(b *builder) {
		b.add(asm.LoadMem(asm.R2, asm.R7, pktThree, asm.DWord), asm.LoadMem(asm.R9, asm.R7, pktAllOnes, asm.DWord))
	}
	bs = append(bs,
		&bench{key: "classes.mod", variant: "chain", chain: true, setup: mod3,
			copy: func(b *builder, i int) { b.add(asm.Mod.Reg(asm.R1, asm.R2)) }},
		// A fresh 64-bit dividend for every modulo: the wide case.
		&bench{key: "classes.mod", variant: "wide", setup: mod3, aux: []string{"classes.alu64/indep"},
			copy: func(b *builder, i int) { b.add(asm.Mov.Reg(dest(i), asm.R9), asm.Mod.Reg(dest(i), asm.R2)) }},
		&bench{key: "classes.ld_imm64", variant: "indep",
			copy: func(b *builder, i int) { b.add(asm.LoadImm(dest(i), 0x0123456789abcdef, asm.DWord)) }},
		&bench{key: "classes.jump", variant: "indep", body: zigzag, aux: filler},
		// A bpf-to-bpf call of a function that sets r0 and returns.
		&bench{key: "call+return", aux: []string{"classes.alu64/indep"},
			copy: func(b *builder, i int) { b.add(asm.Call.Label("fn")) },
			sub:  func(b *builder) { b.add(asm.Mov.Imm(asm.R0, 0).WithSymbol("fn"), asm.Return()) }},
	)
	// Conditional jumps to the next instruction: both outcomes reach the
	// same state, so the verifier explores the program linearly.
	for _, c := range []struct {
		key   string
		class asm.Class
		taken bool
	}{{"cond64.taken", asm.JumpClass, true}, {"cond64.not_taken", asm.JumpClass, false},
		{"cond32.taken", asm.Jump32Class, true}, {"cond32.not_taken", asm.Jump32Class, false}} {
		op := asm.OpCode(c.class).SetJumpOp(asm.JEq).SetSource(asm.RegSource)
		off := int16(pktAllOnes) // r1 = all ones != r2 = 1
		if c.taken {
			off = pktOneToo // r1 = 1 == r2
		}
		bs = append(bs, &bench{key: c.key, aux: filler,
			setup: func(b *builder) { b.add(asm.LoadMem(asm.R1, asm.R7, off, asm.DWord)) },
			copy: func(b *builder, i int) {
				b.add(asm.Instruction{OpCode: op, Dst: asm.R1, Src: asm.R2})
				fill(b, i)
			}})
	}
	return bs
}

// Jumps come with three independent ALU instructions each, the density
// of branches in compiled packet parsers: back-to-back branches, a few
// bytes apart, overflow the branch target buffer and measure its misses.
var filler = []string{"classes.alu64/indep", "classes.alu64/indep", "classes.alu64/indep"}

func fill(b *builder, i int) {
	for j := range 3 {
		b.add(asm.Add.Reg(dest(3*i+j), asm.R2))
	}
}

// zigzag lays out k unconditional jumps so that each lands on the next in
// execution order, alternately in the first and second half of the body:
// the verifier removes jumps to the next instruction, not these.
func zigzag(b *builder, k int) {
	name := func(j int) string {
		if j == k {
			return "exit"
		}
		return "j" + strconv.Itoa(j)
	}
	for half := range 2 {
		for j := half; j < k; j += 2 {
			b.add(asm.Add.Reg(dest(3*j), asm.R2).WithSymbol(name(j)))
			b.add(asm.Add.Reg(dest(3*j+1), asm.R2), asm.Add.Reg(dest(3*j+2), asm.R2))
			b.add(asm.Ja.Label(name(j + 1)))
		}
	}
}
