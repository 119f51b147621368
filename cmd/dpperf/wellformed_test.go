package main

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/dpperf/dpperf/bound"
)

// sspJSON runs bound --json and decodes its result, a search with an
// example.
func sspJSON(t *testing.T, args ...string) *bound.Result {
	t.Helper()
	r := boundJSON(t, append([]string{"bound", "--json"}, args...))
	if r.Kind != "ssp" || len(r.Paths) == 0 || r.Paths[0].Example == nil {
		t.Fatalf("kind %s, %d paths, no example", r.Kind, len(r.Paths))
	}
	return r
}

// malformed says what is wrong with a packet's headers, as far as its
// decode and the IP version fields tell, or "" when nothing is.
func malformed(t *testing.T, ex *bound.Example) string {
	t.Helper()
	for _, l := range ex.Layers {
		if strings.Contains(l, "(malformed)") || strings.HasPrefix(l, "undecodable") {
			return l
		}
	}
	raw, err := hex.DecodeString(ex.Packet)
	if err != nil {
		t.Fatal(err)
	}
	pkt := gopacket.NewPacket(raw, layers.LayerTypeEthernet, gopacket.Default)
	if ip, ok := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4); ok && ip.Version != 4 {
		return "IPv4 header of version " + itoa(int(ip.Version))
	}
	if ip, ok := pkt.Layer(layers.LayerTypeIPv6).(*layers.IPv6); ok && ip.Version != 6 {
		return "IPv6 header of version " + itoa(int(ip.Version))
	}
	return ""
}

// TestBoundWellFormed: the parser example's worst case is a malformed
// packet (an IPv4 header of version 0, a TCP data offset of 0). With
// --well-formed the bound is at least the bound over any bytes, its
// example decodes without a fault, and both reports say which packets
// they considered.
func TestBoundWellFormed(t *testing.T) {
	obj := built(t, "parser")
	args := []string{"--target", "nfp-agilio-cx", "--workers", "1", "--solver-timeout", "60s", obj} // no answer depends on the machine's speed
	anyBytes := sspJSON(t, args...)
	wf := sspJSON(t, append([]string{"--well-formed"}, args...)...)
	if anyBytes.Packets != bound.PacketsAny || wf.Packets != bound.PacketsWellFormed {
		t.Errorf("packets %q and %q, want %q and %q", anyBytes.Packets, wf.Packets, bound.PacketsAny, bound.PacketsWellFormed)
	}
	if what := malformed(t, anyBytes.Paths[0].Example); what == "" {
		t.Errorf("the worst case over any bytes is well formed (%q): the test needs an example whose worst case is not", anyBytes.Paths[0].Example.Layers)
	}
	if what := malformed(t, wf.Paths[0].Example); what != "" {
		t.Errorf("--well-formed example is malformed: %s (%q)", what, wf.Paths[0].Example.Layers)
	}
	if wf.Bound.PacketRate < anyBytes.Bound.PacketRate || wf.Bound.PathRate < anyBytes.Bound.PathRate {
		t.Errorf("--well-formed bound %g pkt/s (path %g) below the bound over any bytes %g (path %g)",
			wf.Bound.PacketRate, wf.Bound.PathRate, anyBytes.Bound.PacketRate, anyBytes.Bound.PathRate)
	}
	out, errs, code := dpperf(t, append([]string{"bound", "--well-formed"}, args...)...)
	if code != 0 || !strings.Contains(out, "\npackets  well-formed (IPv4 ihl >= 5, lengths consistent)\n") {
		t.Errorf("exit %d (%s); the text report does not say the packets were well formed:\n%s", code, errs, out)
	}
	if _, errs, code := dpperf(t, "bound", "--naive", "--well-formed", "--target", "nfp-agilio-cx", obj); code != 2 || !strings.Contains(errs, "--well-formed") {
		t.Errorf("--naive --well-formed: exit %d, %q; want a usage error naming --well-formed", code, errs)
	}
}

// TestInterfaceWellFormed: with --well-formed the parser's interface
// loses the classes of IPv6 packets too short for their own header (a
// well-formed IPv6 packet has its 40 bytes), keeps the others, and says
// which packets it considered.
func TestInterfaceWellFormed(t *testing.T) {
	obj := built(t, "parser")
	paths := map[string]int{}
	for _, flag := range []string{"", "--well-formed"} {
		args := []string{"interface", "--json", "--resolution", "0", "--target", "x86-64", "--workers", "1", "--solver-timeout", "60s", obj}
		if flag != "" {
			args = append(args[:1], append([]string{flag}, args[1:]...)...)
		}
		out, errs, code := dpperf(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", flag, code, errs)
		}
		var j struct {
			Packets string            `json:"packets"`
			Paths   []json.RawMessage `json:"paths"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"": "any", "--well-formed": "well-formed"}[flag]
		if j.Packets != want {
			t.Errorf("%s: packets %q, want %q", flag, j.Packets, want)
		}
		paths[j.Packets] = len(j.Paths)
	}
	if paths["well-formed"] == 0 || paths["well-formed"] >= paths["any"] {
		t.Errorf("%d paths with well-formed packets, %d with any bytes: want fewer, but some", paths["well-formed"], paths["any"])
	}
}
