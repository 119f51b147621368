package perfiface

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/cilium/ebpf/btf"

	"github.com/dpperf/dpperf/bpfprog"
)

// solverName matches a name the symbolic executor makes up (a213, u7,
// rnd4), which a condition must never show; le32 and the like are the
// renderer's own.
var solverName = regexp.MustCompile(`\b(?:[a-z]+)[0-9]+\b`)

func leakedName(s string) string {
	for _, m := range solverName.FindAllString(s, -1) {
		if !strings.HasPrefix(m, "le") {
			return m
		}
	}
	return ""
}

// TestSolverNamesRendered: a condition over values the executor declared
// shows what each stands for (a hash by the bytes it was computed from,
// a helper by its call, an unmodelled value as unknown), never its name.
func TestSolverNamesRendered(t *testing.T) {
	// Definitions the cases share: t1..t4 read the packet bytes 26..29
	// (a hash input), a5 abstracts t6, a hash of them and of the length;
	// a7 abstracts t8, a hash of map value bytes 4..7 and pkt[14].
	shared := []string{
		"(define-fun t1 () (_ BitVec 8) (select pkt0 #x0000001a))",
		"(define-fun t2 () (_ BitVec 8) (select pkt0 #x0000001b))",
		"(define-fun t3 () (_ BitVec 16) (concat t1 t2))",
		"(define-fun t4 () (_ BitVec 16) (concat (select pkt0 #x0000001c) (select pkt0 #x0000001d)))",
		"(define-fun t6 () (_ BitVec 64) (bvmul ((_ zero_extend 32) (concat t3 t4)) len))",
		"(declare-const a5 (_ BitVec 64))",
		"; @abstract a5 t6 hash.c:12",
		"; @lookup found9 flows #x00000001 v10",
		"(declare-const found9 Bool)",
		"(declare-const v10 (Array (_ BitVec 32) (_ BitVec 8)))",
		"(define-fun t8 () (_ BitVec 64) ((_ zero_extend 24) (concat (select v10 #x00000007) (select v10 #x00000006) (select v10 #x00000005) (select v10 #x00000004) (select pkt0 #x0000000e))))",
		"(declare-const a7 (_ BitVec 64))",
		"; @abstract a7 t8 hash.c:20",
		"(declare-const u11 (_ BitVec 64))",
		"(declare-const c12 Bool)",
		"(declare-const rnd13 (_ BitVec 32))",
		"(declare-const time14 (_ BitVec 64))",
		"; @call time14 FnKtimeGetNs",
		"(declare-const zz15 (_ BitVec 64))",
	}
	for _, c := range []struct{ assert, want string }{
		{"(= a5 #x0000000000000000)", "hash(pkt[26:30], pkt.len) == 0"},
		{"(bvult (bvsub a5 a7) #x0000000000000010)", "hash(pkt[26:30], pkt.len) - hash(pkt[14], flows.value[4:8]) < 16"},
		{"(= u11 #x0000000000000001)", "unknown() == 1"},
		{"c12", "unknown_outcome()"},
		{"(= rnd13 #x00000007)", "random() == 7"},
		{"(bvugt time14 #x0000000000000064)", "now() > 100"},
		{"(= zz15 #x0000000000000000)", "unknown() == 0"},
	} {
		text := append(append([]string{}, shared...), "(assert "+c.assert+")")
		tr := new(pathTranslator).load([][]string{text})
		s, err := parseSX(text[len(text)-1])
		if err != nil {
			t.Fatal(err)
		}
		got := render(normalize(tr.conv(s.list[1])), plainNames{})
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.assert, got, c.want)
		}
		if n := leakedName(got); n != "" {
			t.Errorf("%s: shows the solver's name %s", c.assert, n)
		}
	}
}

// TestHashInputsCapped: a hash of many separate bytes lists the first
// ranges and says there are more.
func TestHashInputsCapped(t *testing.T) {
	sum := "#x00"
	for i := 0; i < 10; i++ {
		sum = "(bvadd " + sum + " (select pkt0 " + hexIdx(20+2*i) + "))"
	}
	text := []string{"(define-fun t1 () (_ BitVec 8) " + sum + ")", "(declare-const a2 (_ BitVec 8))", "; @abstract a2 t1 x.c:1"}
	tr := new(pathTranslator).load([][]string{text})
	got := render(tr.atom("a2"), plainNames{})
	want := "hash(pkt[20], pkt[22], pkt[24], pkt[26], pkt[28], pkt[30], ...)"
	if got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func hexIdx(i int) string { return fmt.Sprintf("#x%08x", i) }

// TestUnnamedMembers: key and value fields without a name are shown by
// what C calls them (an anonymous struct's members by their own names)
// or by their byte range, never as an empty name.
func TestUnnamedMembers(t *testing.T) {
	u16 := &btf.Int{Name: "__u16", Size: 2}
	u32 := &btf.Int{Name: "__u32", Size: 4}
	u64 := &btf.Int{Name: "__u64", Size: 8}
	addrs := &btf.Struct{Size: 8, Members: []btf.Member{{Name: "src", Type: u32}, {Name: "dst", Type: u32, Offset: 32}}}
	tag := &btf.Union{Size: 4, Members: []btf.Member{{Name: "id", Type: u32}, {Name: "half", Type: u16}}}
	key := &btf.Struct{Name: "flow", Size: 14, Members: []btf.Member{
		{Type: addrs}, {Type: tag, Offset: 64}, {Name: "port", Type: u16, Offset: 96}}}
	halves := &btf.Struct{Size: 4, Members: []btf.Member{{Name: "lo16", Type: u16}, {Name: "hi16", Type: u16, Offset: 16}}}
	val := &btf.Struct{Name: "stats", Size: 12, Members: []btf.Member{
		{Name: "packets", Type: u64}, {Type: &btf.Union{Size: 4, Members: []btf.Member{{Name: "word", Type: u32}, {Type: halves}}}, Offset: 64}}}
	l := layout{l3off: 14, mapTypes: map[string]*bpfprog.Map{"flows": {Name: "flows", Key: key, Value: val}}}

	// The key's bytes 0..13 are the packet's bytes 26..39, loaded little
	// endian (most significant first: 39 down to 26): each member holds
	// its packet bytes as they sit, as pkt[i:j] gives them to a key.
	offs := make([]int, 14)
	for i := range offs {
		offs[i] = 39 - i
	}
	got := l.keyText("flows", &expr{op: opPkt, w: 112, offs: offs})
	want := "src=pkt[26:30], dst=pkt[30:34], id=pkt[34:38], port=pkt[38:40]"
	if got != want {
		t.Errorf("key: %q, want %q", got, want)
	}
	for _, c := range []struct {
		offs []int
		want string
	}{
		{[]int{11, 10, 9, 8}, "flows.value.word"},
		{[]int{11, 10}, "flows.value.hi16"},
		{[]int{7, 6, 5, 4}, "le32(flows.value[4:8])"}, // half of packets: no member
	} {
		if got := l.bytesName(&expr{op: opVal, name: "flows", w: 8 * len(c.offs), offs: c.offs}); got != c.want {
			t.Errorf("value bytes %v: %q, want %q", c.offs, got, c.want)
		}
	}
}
