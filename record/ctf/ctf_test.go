package ctf

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sampleEvents encodes one event of every standard class.
func sampleEvents(ts uint64) []byte {
	var b []byte
	for _, id := range []uint8{IDRpcCall, IDRpcReturned, IDRpcDispatch, IDRpcReply} {
		b = AppendEventHeader(b, id, ts)
		b = AppendString(b, "alloc")
		b = AppendString(b, "nic")
		ts++
	}
	b = AppendEventHeader(b, IDSignalSubmit, ts)
	b = binary.LittleEndian.AppendUint32(b, 7)
	b = AppendEventHeader(b, IDSignalReceive, ts+1)
	b = binary.LittleEndian.AppendUint32(b, 8)
	b = binary.LittleEndian.AppendUint64(b, 0xdeadbeef)
	b = AppendEventHeader(b, IDCheckpoint, ts+2)
	b = binary.LittleEndian.AppendUint32(b, 42)
	b = binary.LittleEndian.AppendUint64(b, 0x1000)
	b = append(b, CheckpointStart)
	b = AppendString(b, "route")
	b = AppendEventHeader(b, IDQueueFill, ts+3)
	b = binary.LittleEndian.AppendUint32(b, 3)
	b = binary.LittleEndian.AppendUint32(b, 1023)
	b = AppendString(b, "submit")
	return b
}

func writeTrace(t *testing.T, dir string, packets int) *Metadata {
	t.Helper()
	md := &Metadata{UUID: NewUUID(), Label: "pipeline/router", ClockOffsetNs: 1_700_000_000_123_456_789, Classes: StandardClasses()}
	if err := os.WriteFile(filepath.Join(dir, "metadata"), []byte(md.Text()), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	s := NewStream(&buf, md.Label, "ep")
	for i := 0; i < packets; i++ {
		base := uint64(1000 * (i + 1))
		if err := s.WritePacket(base, base+100, uint64(i), sampleEvents(base+10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "ep"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return md
}

func TestBabeltraceReadsTrace(t *testing.T) {
	bt, err := exec.LookPath("babeltrace2")
	if err != nil {
		t.Fatal("babeltrace2 is required (scripts/setup.sh installs it)")
	}
	dir := t.TempDir()
	writeTrace(t, dir, 3)
	out, err := exec.Command(bt, "--clock-gmt", "--clock-date", "--no-delta", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("babeltrace2: %v\n%s", err, out)
	}
	text := string(out)
	lines := strings.Split(strings.TrimSpace(text), "\n")
	events := 0
	for _, l := range lines {
		if !strings.Contains(l, "Discarded") && !strings.Contains(l, "discarded") {
			events++
		}
	}
	if events != 3*8 {
		t.Errorf("babeltrace2 printed %d events, want 24:\n%s", events, text)
	}
	for _, want := range []string{
		`Rpc_call: { session_label = "pipeline/router", thread_name = "ep" }, { name = "alloc", peer = "nic" }`,
		`Signal_receive: { session_label = "pipeline/router", thread_name = "ep" }, { number = 8, context = 3735928559 }`,
		`Checkpoint: { session_label = "pipeline/router", thread_name = "ep" }, { data = 42, addr = 4096, type = 1, name = "route" }`,
		`Queue_fill: { session_label = "pipeline/router", thread_name = "ep" }, { used = 3, capacity = 1023, name = "submit" }`,
		"[2023-11-14 22:13:20.123457799]",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("babeltrace2 output lacks %q:\n%s", want, text)
		}
	}
	// 1 event discarded before packet 2 and 2 before packet 3.
	for _, want := range []string{"discarded 1 event between", "discarded 2 events between"} {
		if !strings.Contains(text, want) {
			t.Errorf("babeltrace2 output lacks %q:\n%s", want, text)
		}
	}
}

func TestReaderRoundTrip(t *testing.T) {
	dir := t.TempDir()
	writeTrace(t, dir, 2)
	text, _ := os.ReadFile(filepath.Join(dir, "metadata"))
	md, err := ParseMetadata(string(text))
	if err != nil {
		t.Fatal(err)
	}
	if md.Label != "pipeline/router" || md.ClockOffsetNs != 1_700_000_000_123_456_789 || len(md.Classes) != 8 {
		t.Fatalf("metadata read back wrong: %+v", md)
	}
	f, _ := os.Open(filepath.Join(dir, "ep"))
	defer f.Close()
	rd := NewReader(f, md)
	var got []*Packet
	for {
		p, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	if len(got) != 2 || got[1].Seq != 1 || got[1].Discarded != 1 || got[0].Thread != "ep" {
		t.Fatalf("packets read back wrong: %+v", got)
	}
	ev := got[1].Events[6]
	if ev.Class.Name != "Checkpoint" || ev.Timestamp != 2016 {
		t.Fatalf("event 6 = %s at %d", ev.Class.Name, ev.Timestamp)
	}
	if v, _ := ev.Field("name"); v.Str != "route" {
		t.Errorf("checkpoint name %q", v.Str)
	}
	if v, _ := ev.Field("type"); v.Uint != CheckpointStart {
		t.Errorf("checkpoint type %d", v.Uint)
	}
}

func TestReaderRejectsDamage(t *testing.T) {
	dir := t.TempDir()
	md := writeTrace(t, dir, 1)
	data, _ := os.ReadFile(filepath.Join(dir, "ep"))
	for name, mutate := range map[string]func([]byte) []byte{
		"truncated": func(b []byte) []byte { return b[:len(b)-3] },
		"magic":     func(b []byte) []byte { b[0] ^= 1; return b },
		"size":      func(b []byte) []byte { binary.LittleEndian.PutUint64(b[24:], 1<<40); return b },
		"event id":  func(b []byte) []byte { b[packetContextSize+len("pipeline/router")+1+3] = 99; return b },
	} {
		t.Run(name, func(t *testing.T) {
			b := mutate(bytes.Clone(data))
			_, err := NewReader(bytes.NewReader(b), md).Next()
			if err == nil {
				t.Fatal("damaged packet read without error")
			}
		})
	}
}

func TestIdentifier(t *testing.T) {
	for in, want := range map[string]string{"dev": "dev", "string": "_string", "9lives": "_9lives", "a-b": "a_b", "": "_"} {
		if got := Identifier(in); got != want {
			t.Errorf("Identifier(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBeginCommit checks that events appended to Begin's buffer make the
// same packets as WritePacket, and that Commit refuses a slice that does
// not start with room for the context.
func TestBeginCommit(t *testing.T) {
	var a, b bytes.Buffer
	sa, sb := NewStream(&a, "app/router", "ep"), NewStream(&b, "app/router", "ep")
	for i := uint64(0); i < 3; i++ {
		ev := sampleEvents(100*i + 10)
		if err := sa.WritePacket(100*i, 100*i+90, i, ev); err != nil {
			t.Fatal(err)
		}
		if err := sb.Commit(100*i, 100*i+90, i, append(sb.Begin(), ev...)); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("Begin/Commit packets differ from WritePacket's")
	}
	if err := sb.Commit(0, 1, 0, make([]byte, 10)); err == nil {
		t.Error("Commit accepted a slice shorter than the context")
	}
}
