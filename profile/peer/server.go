package peer

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// Schema names the reply's JSON form (protocol.md).
const Schema = "dpperf.peer/v1"

// MaxBatch is the most events one reply holds.
const MaxBatch = 65536

// reply is the JSON body of a 200 answer.
type reply struct {
	Schema  string     `json:"schema"`
	Path    string     `json:"path"`
	NowNS   int64      `json:"now_ns"`
	Next    uint64     `json:"next"`
	More    bool       `json:"more"`
	Stopped bool       `json:"stopped"`
	Events  [][4]int64 `json:"events"`
}

// Handler serves store's events of path under /v1/events to requests
// that carry token; now reads the target's monotonic clock.
func Handler(store *Store, path string, token []byte, now func() int64) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/events", func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), token) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodGet {
			http.Error(w, "only GET", http.StatusMethodNotAllowed)
			return
		}
		q := r.URL.Query()
		after, err := strconv.ParseUint(q.Get("after"), 10, 64)
		if q.Get("after") == "" {
			after, err = 0, nil
		}
		max := MaxBatch
		if s := q.Get("max"); s != "" && err == nil {
			max, err = strconv.Atoi(s)
			if err == nil && (max < 1 || max > MaxBatch) {
				err = strconv.ErrRange
			}
		}
		if err != nil {
			http.Error(w, "bad after or max", http.StatusBadRequest)
			return
		}
		evs, more, stopped := store.since(after, max)
		rep := reply{Schema: Schema, Path: path, Next: after + uint64(len(evs)), More: more, Stopped: stopped, Events: make([][4]int64, len(evs))}
		for i, ev := range evs {
			rep.Events[i] = [4]int64{ev.TS, int64(ev.Kind), int64(ev.QID), int64(ev.CID)}
		}
		rep.NowNS = now()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(&rep)
	})
	return mux
}
