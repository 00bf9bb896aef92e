package attribution

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Whatever a client posts, the webhook answers and never panics; the index holds at most
// what the body listed, and the join names only an author of an event the body carried
// (docs/security.md#the-audit-port).
func FuzzAuditWebhookBody(f *testing.F) {
	f.Add(eventList(event("a1", "create", "ns", "cm", "u1", "10", "alice")))
	f.Add(eventList(event("a1", "create", "ns", "cm", "u1", "10", "alice"), event("a2", "delete", "ns", "cm", "u1", "11", "bob")))
	f.Add([]byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[{"objectRef":{}}]}`))
	f.Add([]byte(`{"kind":"EventList","items":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		idx := NewIndex(IndexConfig{})
		h := NewHandler(idx, DefaultGate(), DefaultMaxBodyBytes, logr.Discard())
		if code := post(t, h, body); code != 200 && code != 400 && code != 413 {
			t.Fatalf("status %d", code)
		}
		var list auditv1.EventList
		if err := json.Unmarshal(body, &list); err != nil {
			if idx.Len() != 0 {
				t.Fatalf("a body that is not JSON left %d facts", idx.Len())
			}
			return
		}
		if idx.Len() > len(list.Items) {
			t.Fatalf("%d facts from a body of %d events", idx.Len(), len(list.Items))
		}
		names, ids := map[string]bool{}, map[string]bool{}
		for _, ev := range list.Items {
			names[gitSafe(ev.User.Username)], ids[string(ev.AuditID)] = true, true
			if ev.ImpersonatedUser != nil {
				names[gitSafe(ev.ImpersonatedUser.Username)] = true
			}
		}
		for _, ev := range list.Items {
			if ev.ObjectRef == nil {
				continue
			}
			ref := ev.ObjectRef
			for _, deleted := range []bool{false, true} {
				key := ObjectKey{Resource: schema.GroupResource{Group: ref.APIGroup, Resource: ref.Resource},
					Namespace: ref.Namespace, Name: ref.Name, UID: string(ref.UID), ResourceVersion: ref.ResourceVersion, Deleted: deleted}
				a, tier := idx.Resolve(context.Background(), key, 0)
				if tier == TierUnresolved {
					continue
				}
				if !names[a.Name] || !ids[a.AuditID] {
					t.Fatalf("the join named %q (audit ID %q), not an author of the posted events", a.Name, a.AuditID)
				}
			}
		}
	})
}
