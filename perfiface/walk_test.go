package perfiface

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// chain builds offsets the way a parser walking IPv6 extension headers
// computes them: from the fixed header's end (54 behind Ethernet), a step
// over an options or authentication header adds (hdr_len << 3) + 8 or
// (hdr_len << 2) + 8 of the header's second byte, over a fragment 8.
type chain struct {
	sym *expr
	c   int
}

func (h chain) at(c int) *expr {
	if h.sym == nil {
		return pktBytes(h.c + c)
	}
	return &expr{op: opPkt, w: 8, offs: []int{h.c + c}, sym: h.sym}
}

func (h chain) step(kind string) chain {
	if kind == stepFrag {
		return chain{h.sym, h.c + 8}
	}
	shift := uint64(3)
	if kind == stepAH {
		shift = 2
	}
	term := &expr{op: "<<", w: 64, args: []*expr{h.at(1), konst(shift)}}
	if h.sym != nil {
		term = &expr{op: "+", w: 64, args: []*expr{h.sym, term}}
	}
	return chain{term, h.c + 8}
}

func (h chain) offset(c int) *expr {
	return &expr{op: "+", w: 64, args: []*expr{h.sym, konst(uint64(h.c + c))}}
}

// TestExtWalkNames: bytes and offsets along walks of options, fragment
// and authentication headers are named by the steps taken, and offsets
// that are not such a walk are not named.
func TestExtWalkNames(t *testing.T) {
	l := layout{l3: "ipv6", l3off: 14}
	walkOf := func(kinds ...string) chain {
		h := chain{c: 54}
		for _, k := range kinds {
			h = h.step(k)
		}
		return h
	}
	for _, c := range []struct {
		kinds []string
		off   int
		want  string
	}{
		{[]string{"opt"}, 0, "pkt.ipv6.ext[1].next_hdr"},
		{[]string{"opt", "opt"}, 1, "pkt.ipv6.ext[2].hdr_len"},
		{[]string{"frag", "opt"}, 0, `pkt.ipv6.after("frag opt").next_hdr`},
		{[]string{"opt", "frag", "opt"}, 1, `pkt.ipv6.after("opt frag opt").hdr_len`},
		{[]string{"opt", "ah"}, 4, `pkt.ipv6.after("opt ah")[4]`},
		{[]string{"ah", "frag", "frag", "opt"}, 0, `pkt.ipv6.after("ah frag frag opt").next_hdr`},
		// A fragment last: no term says so, the byte stays 8 past the
		// header before it.
		{[]string{"opt", "frag"}, 0, "pkt.ipv6.ext[1][8]"},
	} {
		got := l.extName(walkOf(c.kinds...).at(c.off))
		if got != c.want {
			t.Errorf("byte %d after %v: %q, want %q", c.off, c.kinds, got, c.want)
		}
	}
	// Offsets, as a bounds check writes them.
	off := walkOf("opt", "frag", "ah").offset(8)
	if got, ok := l.special(off); !ok || got != `pkt.ipv6.after("opt frag ah").off + 8` {
		t.Errorf("offset: %q, %v", got, ok)
	}
	// A TCP header's length, as compilers write it, past a walk.
	tcp := walkOf("opt", "frag")
	le := &expr{op: opPkt, w: 16, offs: []int{tcp.c + 13, tcp.c + 12}, sym: tcp.sym}
	hlen := &expr{op: "&", w: 64, args: []*expr{{op: ">>", w: 64, args: []*expr{le, konst(2)}}, konst(60)}}
	if got, ok := l.special(hlen); !ok || got != `pkt.ipv6.after("opt frag").tcp_hlen` {
		t.Errorf("TCP header length: %q, %v", got, ok)
	}
	// Not walks: a step reading another byte than hdr_len, two steps over
	// one header, and any chain outside IPv6.
	h := walkOf("opt")
	wrong := chain{&expr{op: "+", w: 64, args: []*expr{h.sym, &expr{op: "<<", w: 64, args: []*expr{h.at(2), konst(3)}}}}, h.c + 8}
	twice := chain{&expr{op: "+", w: 64, args: []*expr{h.sym, h.sym}}, h.c + 8}
	for _, e := range []*expr{wrong.at(0), twice.at(0)} {
		if got := l.extName(e); got != "" {
			t.Errorf("named %q", got)
		}
	}
	if got := (layout{l3: "ipv4", l3off: 14}).extName(walkOf("opt").at(0)); got != "" {
		t.Errorf("IPv4 packet named %q", got)
	}
}

// TestWalkNamesInPython: on packets with chains of options, fragment and
// authentication headers of random lengths, the Python runtime reads the
// same bytes and offsets through the walk's names (pkt.ipv6.after(...),
// .tcp_hlen) as through the raw offsets they replace.
func TestWalkNamesInPython(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is missing: scripts/setup.sh installs it")
	}
	rng := rand.New(rand.NewPCG(7, 39))
	l := layout{l3: "ipv6", l3off: 14}
	kindsOf := []string{stepOpt, stepAH, stepFrag}
	var script strings.Builder
	script.WriteString("import sys\nsys.path.insert(0, sys.argv[1])\nimport rt\n" +
		"def check(data, named, raw):\n" +
		"    env = dict(vars(rt), pkt=rt.Packet(bytes.fromhex(data)))\n" +
		"    a, b = eval(named, env), eval(raw, env)\n" +
		"    print('ok' if a == b else 'MISMATCH %s = %r, %s = %r' % (named, a, raw, b))\n")
	checks := 0
	for range 60 {
		n := 1 + rng.IntN(5)
		kinds := make([]string, n)
		for i := range kinds {
			kinds[i] = kindsOf[rng.IntN(3)]
		}
		if kinds[n-1] == stepFrag {
			kinds[n-1] = stepOpt // a last fragment has no term to show it
		}
		// The packet: Ethernet, IPv6, the chain, a TCP header.
		pkt := make([]byte, 54, 256)
		pkt[12], pkt[13] = 0x86, 0xdd
		for _, k := range kinds {
			hl := rng.IntN(4)
			size := 8 * (hl + 1)
			switch k {
			case stepAH:
				size = 4 * (hl + 2)
			case stepFrag:
				hl, size = rng.IntN(256), 8 // hdr_len is reserved: not read
			}
			h := make([]byte, size)
			h[0], h[1] = byte(rng.IntN(256)), byte(hl)
			for i := 2; i < size; i++ {
				h[i] = byte(rng.IntN(256))
			}
			pkt = append(pkt, h...)
		}
		tcp := make([]byte, 20)
		for i := range tcp {
			tcp[i] = byte(rng.IntN(256))
		}
		pkt = append(pkt, tcp...)

		h := chain{c: 54}
		for _, k := range kinds {
			h = h.step(k)
		}
		le := &expr{op: opPkt, w: 16, offs: []int{h.c + 13, h.c + 12}, sym: h.sym}
		for _, e := range []*expr{
			h.at(0), h.at(1), h.at(4), h.offset(0), h.offset(8),
			{op: "&", w: 64, args: []*expr{{op: ">>", w: 64, args: []*expr{le, konst(2)}}, konst(60)}},
		} {
			named, raw := render(e, l), render(e, plainNames{})
			if !strings.Contains(named, "pkt.ipv6.") {
				t.Errorf("%v: not named: %s", kinds, named)
				continue
			}
			fmt.Fprintf(&script, "check(%q, %q, %q)\n", hex.EncodeToString(pkt), named, raw)
			checks++
		}
	}
	dir := t.TempDir()
	tables, err := (&Interface{}).pyTables(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rt.py"), []byte(tables+pyRuntime), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "check.py"), []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("python3", filepath.Join(dir, "check.py"), dir).CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	oks := strings.Count(string(out), "ok\n")
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "MISMATCH") {
			t.Error(line)
		}
	}
	if oks != checks {
		t.Errorf("%d of %d checks agree", oks, checks)
	}
}
