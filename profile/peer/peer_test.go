package peer

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dpperf/dpperf/profile/event"
)

var token = []byte("0123456789abcdef-test")

func isTarget(kind int) bool { return kind == 2 || kind == 3 || kind == 4 }

// counter is a stand-in monotonic clock that advances 1000 ns per read.
type counter struct{ t int64 }

func (c *counter) now() int64 { c.t += 1000; return c.t }

func serve(t *testing.T, store *Store, targetClock func() int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(Handler(store, "nvme-tcp", token, targetClock))
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchRoundTrip(t *testing.T) {
	var store Store
	var want []event.Event
	for i := 0; i < 70000; i++ { // more than one reply holds
		ev := event.Event{TS: int64(1e9 + i*10), Kind: uint8(2 + 2*(i%2)), QID: uint16(1 + i%3), CID: uint16(i)}
		want = append(want, ev)
	}
	store.Add(want...)
	store.Stop()
	// The target's clock is the initiator's plus 5 s: a read on the
	// target falls between the client's two reads of its own.
	var ini counter
	srv := serve(t, &store, func() int64 { return ini.now() + 5e9 })
	c := &Client{URL: srv.URL, Token: token, Path: "nvme-tcp", Target: isTarget}
	got, next, s, err := c.FetchAll(context.Background(), 0, ini.now)
	if err != nil {
		t.Fatal(err)
	}
	if next != uint64(len(want)) || len(got) != len(want) {
		t.Fatalf("got %d events, next %d, want %d", len(got), next, len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if h := s.Hint(); h[0] > 5e9 || h[1] < 5e9 {
		t.Errorf("hint %v does not hold the offset 5e9", h)
	}
	// Nothing after the end; the store says it stopped.
	b, _, err := c.Fetch(context.Background(), next, ini.now)
	if err != nil || len(b.Events) != 0 || !b.Stopped || b.More {
		t.Errorf("after the end: %+v, %v", b, err)
	}
}

func TestWrongTokenRefused(t *testing.T) {
	var store Store
	store.Add(event.Event{TS: 1, Kind: 2})
	srv := serve(t, &store, func() int64 { return 1 })
	for _, auth := range []string{"", "Bearer wrong-token-of-some-length", "Bearer " + string(token) + "x", "Basic " + string(token)} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/events", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, resp.StatusCode)
		}
	}
	c := &Client{URL: srv.URL, Token: []byte("another-token-here"), Path: "nvme-tcp", Target: isTarget}
	var ini counter
	if _, _, err := c.Fetch(context.Background(), 0, ini.now); err == nil || !strings.Contains(err.Error(), "refused the token (401)") {
		t.Errorf("wrong token: %v", err)
	}
}

func TestPeerFaults(t *testing.T) {
	var ini counter
	// Down: a port that was listened on and closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	// Slow: never answers within the client's timeout.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer slow.Close()
	// Garbage: a 200 with a body that is no reply.
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("{\"schema\": 7")) }))
	defer garbage.Close()
	for name, url := range map[string]string{"down": down, "slow": slow.URL, "garbage": garbage.URL} {
		c := &Client{URL: url, Token: token, Path: "nvme-tcp", Target: isTarget, Timeout: 200 * time.Millisecond}
		_, _, err := c.Fetch(context.Background(), 0, ini.now)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), url) {
			t.Errorf("%s peer: %v (want a one-line error naming the peer)", name, err)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"schema":"dpperf.peer/v2","path":"nvme-tcp","next":0,"events":[]}`, "schema"},
		{`{"schema":"dpperf.peer/v1","path":"block","next":0,"events":[]}`, "path"},
		{`{"schema":"dpperf.peer/v1","path":"nvme-tcp","next":5,"events":[]}`, "next 5"},
		{`{"schema":"dpperf.peer/v1","path":"nvme-tcp","next":1,"events":[[10,0,1,1]]}`, "kind 0"},
		{`{"schema":"dpperf.peer/v1","path":"nvme-tcp","next":2,"events":[[10,2,1,1],[9,4,1,1]]}`, "before"},
		{`{"schema":"dpperf.peer/v1","path":"nvme-tcp","next":1,"events":[[10,2,70000,1]]}`, "out of range"},
		{`{"schema":"dpperf.peer/v1","path":"nvme-tcp","next":0,"events":[],"x":1}`, "unknown field"},
		{`{"schema":"dpperf.peer/v1","path":"nvme-tcp","next":0,"events":[]} {}`, "after the JSON"},
	} {
		if _, err := Decode([]byte(c.body), "nvme-tcp", 0, isTarget); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.body, err, c.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"schema":"dpperf.peer/v1","path":"nvme-tcp","now_ns":5,"next":2,"more":false,"stopped":true,"events":[[10,2,1,1],[12,4,1,1]]}`))
	f.Add([]byte(`{"schema":"dpperf.peer/v1","path":"nvme-tcp","next":0,"events":[]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		b, err := Decode(body, "nvme-tcp", 0, isTarget)
		if err != nil {
			return
		}
		if b.Next != uint64(len(b.Events)) {
			t.Fatalf("accepted next %d with %d events", b.Next, len(b.Events))
		}
		for i, ev := range b.Events {
			if !isTarget(int(ev.Kind)) || ev.TS <= 0 || (i > 0 && ev.TS < b.Events[i-1].TS) {
				t.Fatalf("accepted event %+v", ev)
			}
		}
	})
}
