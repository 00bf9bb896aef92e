package attribution

import (
	"testing"

	"github.com/go-logr/logr"
)

// Whatever a client posts, the webhook answers and never panics; the index holds at most
// what the body listed (docs/security.md#the-audit-port).
func FuzzAuditWebhookBody(f *testing.F) {
	f.Add(eventList(event("a1", "create", "ns", "cm", "u1", "10", "alice")))
	f.Add([]byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[{"objectRef":{}}]}`))
	f.Add([]byte(`{"kind":"EventList","items":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		idx := NewIndex(IndexConfig{})
		h := NewHandler(idx, DefaultGate(), DefaultMaxBodyBytes, logr.Discard())
		if code := post(t, h, body); code != 200 && code != 400 && code != 413 {
			t.Fatalf("status %d", code)
		}
	})
}
