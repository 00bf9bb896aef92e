package attribution

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

func testLogger() logr.Logger { return logr.Discard() }

func TestAcceptedEventsBecomeFacts(t *testing.T) {
	idx := NewIndex(IndexConfig{})
	h := NewHandler(idx, DefaultGate(), 0, testLogger())
	if code := post(t, h, eventList(event("a1", "create", "ns", "cm", "u1", "10", "alice"))); code != 200 {
		t.Fatalf("status %d", code)
	}
	if idx.Len() != 1 || idx.Counters().Accepted() != 1 {
		t.Fatalf("facts %d accepted %d", idx.Len(), idx.Counters().Accepted())
	}
	a, tier := idx.Resolve(t.Context(), cmKey("ns", "cm", "u1", "10"), 0)
	if tier != TierExact || a.Name != "alice" || a.AuditID != "a1" {
		t.Fatalf("got %+v at %v", a, tier)
	}
}

func TestMalformedBodiesAreRefusedAndKeepNoFact(t *testing.T) {
	good := string(eventList(event("a1", "create", "ns", "cm", "u1", "10", "alice")))
	bodies := map[string]string{
		"not json":             "{not json",
		"truncated event list": good[:len(good)-10],
		"wrong kind":           strings.Replace(good, `"EventList"`, `"ConfigMapList"`, 1),
		"wrong api version":    strings.Replace(good, `"audit.k8s.io/v1"`, `"audit.k8s.io/v1beta1"`, 1),
		"empty":                "",
		"wrong field type":     strings.Replace(good, `"verb":"create"`, `"verb":7`, 1),
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			idx := NewIndex(IndexConfig{})
			h := NewHandler(idx, DefaultGate(), 0, testLogger())
			if code := post(t, h, []byte(body)); code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400", code)
			}
			if idx.Counters().Refused(RefusedBadJSON) != 1 || idx.Len() != 0 {
				t.Fatalf("refused %d facts %d", idx.Counters().Refused(RefusedBadJSON), idx.Len())
			}
		})
	}
}

func TestOnlyPostIsServed(t *testing.T) {
	idx := NewIndex(IndexConfig{})
	h := NewHandler(idx, DefaultGate(), 0, testLogger())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Path, nil))
	if rec.Code != http.StatusMethodNotAllowed || idx.Counters().Refused(RefusedMethod) != 1 {
		t.Fatalf("status %d refused %d", rec.Code, idx.Counters().Refused(RefusedMethod))
	}
}

// endless yields n bytes of a JSON-looking body and counts what was read of it.
type endless struct {
	left int64
	read atomic.Int64
}

func (e *endless) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > e.left {
		n = e.left
	}
	for i := range p[:n] {
		p[i] = ' '
	}
	if e.read.Load() == 0 && n > 0 {
		p[0] = '['
	}
	e.left -= n
	e.read.Add(n)
	return int(n), nil
}

func TestHundredMegabyteBodyIsRefusedWithoutReadingIt(t *testing.T) {
	const size = 100 << 20
	for _, declared := range []bool{true, false} {
		name := "chunked"
		if declared {
			name = "content-length"
		}
		t.Run(name, func(t *testing.T) {
			idx := NewIndex(IndexConfig{})
			srv := httptest.NewServer(NewHandler(idx, DefaultGate(), 8<<20, testLogger()))
			defer srv.Close()
			body := &endless{left: size}
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+Path, body)
			if err != nil {
				t.Fatal(err)
			}
			if declared {
				req.ContentLength = size
			} else {
				req.ContentLength = -1
			}
			client := &http.Client{Timeout: 60 * time.Second}
			resp, err := client.Do(req)
			if err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusRequestEntityTooLarge {
					t.Fatalf("status %d, want 413", resp.StatusCode)
				}
			} // else the server closed the connection while the client still wrote: also a refusal
			deadline := time.Now().Add(10 * time.Second)
			for idx.Counters().Refused(RefusedTooLarge) != 1 {
				if time.Now().After(deadline) {
					t.Fatalf("too-large refusals %d, want 1 (client error %v)", idx.Counters().Refused(RefusedTooLarge), err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if got := body.read.Load(); got > 32<<20 {
				t.Fatalf("client wrote %d bytes: the server read far past the limit", got)
			}
			if idx.Len() != 0 {
				t.Fatalf("facts %d, want none", idx.Len())
			}
		})
	}
}
