package attribution

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func fact(id, verb, ns, name, uid, rv, user string) *Fact {
	ev := event(id, verb, ns, name, uid, rv, user)
	return factOf(&ev)
}

func TestJoinTiers(t *testing.T) {
	collection := func(id, ns, user string, uids ...string) *Fact {
		f := fact(id, "deletecollection", ns, "", "", "", user)
		if len(uids) > 0 {
			f.CollectionUIDs = map[string]struct{}{}
			for _, u := range uids {
				f.CollectionUIDs[u] = struct{}{}
			}
		}
		return f
	}
	metadataOnly := func(id, verb, ns, name, user string) *Fact { return fact(id, verb, ns, name, "", "", user) }
	cases := []struct {
		name  string
		facts []*Fact
		key   ObjectKey
		want  string
		tier  Tier
	}{
		{"exact uid and resourceVersion", []*Fact{
			fact("1", "update", "a", "cm", "u1", "10", "alice"),
			fact("2", "update", "a", "cm", "u1", "11", "bob"),
		}, cmKey("a", "cm", "u1", "10"), "alice", TierExact},
		{"latest fact for the uid when the version is unknown", []*Fact{
			fact("1", "update", "a", "cm", "u1", "10", "alice"),
			fact("2", "update", "a", "cm", "u1", "11", "bob"),
		}, cmKey("a", "cm", "u1", "12"), "bob", TierUID},
		{"namespace and name when the uid is unknown", []*Fact{
			metadataOnly("1", "create", "a", "cm", "carol"),
		}, cmKey("a", "cm", "u1", "12"), "carol", TierName},
		{"a name fact of another incarnation does not count", []*Fact{
			fact("1", "update", "a", "cm", "u-old", "3", "carol"),
		}, cmKey("a", "cm", "u1", "12"), UnresolvedName, TierUnresolved},
		{"other namespace does not count", []*Fact{
			metadataOnly("1", "create", "b", "cm", "carol"),
		}, cmKey("a", "cm", "u1", "12"), UnresolvedName, TierUnresolved},
		{"delete by uid ignores earlier writes", []*Fact{
			fact("1", "update", "a", "cm", "u1", "10", "bob"),
			fact("2", "delete", "a", "cm", "u1", "10", "sa"),
		}, ObjectKey{Resource: cmGR, Namespace: "a", Name: "cm", UID: "u1", ResourceVersion: "13", Deleted: true}, "sa", TierUID},
		{"a write is never attributed to a delete", []*Fact{
			fact("2", "delete", "a", "cm", "u1", "10", "sa"),
		}, cmKey("a", "cm", "u1", "10"), UnresolvedName, TierUnresolved},
		{"delete by name", []*Fact{
			fact("1", "update", "a", "cm", "u1", "10", "bob"),
			metadataOnly("2", "delete", "a", "cm", "dave"),
		}, ObjectKey{Resource: cmGR, Namespace: "a", Name: "cm", UID: "u1", ResourceVersion: "13", Deleted: true}, "dave", TierName},
		{"deletecollection that listed the uid", []*Fact{
			fact("1", "update", "a", "cm", "u1", "10", "bob"),
			collection("2", "a", "carol", "u1", "u2"),
		}, ObjectKey{Resource: cmGR, Namespace: "a", Name: "cm", UID: "u1", ResourceVersion: "13", Deleted: true}, "carol", TierCollection},
		{"deletecollection scope of the namespace", []*Fact{
			collection("2", "a", "carol"),
		}, ObjectKey{Resource: cmGR, Namespace: "a", Name: "cm", UID: "u1", ResourceVersion: "13", Deleted: true}, "carol", TierCollection},
		{"deletecollection of all namespaces", []*Fact{
			collection("2", "", "carol"),
		}, ObjectKey{Resource: cmGR, Namespace: "a", Name: "cm", UID: "u1", ResourceVersion: "13", Deleted: true}, "carol", TierCollection},
		{"deletecollection of another namespace", []*Fact{
			collection("2", "b", "carol"),
		}, ObjectKey{Resource: cmGR, Namespace: "a", Name: "cm", UID: "u1", ResourceVersion: "13", Deleted: true}, UnresolvedName, TierUnresolved},
		{"deletecollection of another type", []*Fact{
			func() *Fact {
				f := collection("2", "a", "carol")
				f.Resource = schema.GroupResource{Resource: "secrets"}
				return f
			}(),
		}, ObjectKey{Resource: cmGR, Namespace: "a", Name: "cm", UID: "u1", ResourceVersion: "13", Deleted: true}, UnresolvedName, TierUnresolved},
		{"deletecollection whose listing lacks the uid", []*Fact{
			collection("2", "a", "carol", "u2"),
		}, ObjectKey{Resource: cmGR, Namespace: "a", Name: "cm", UID: "u1", ResourceVersion: "13", Deleted: true}, UnresolvedName, TierUnresolved},
		{"no fact at all", nil, cmKey("a", "cm", "u1", "10"), UnresolvedName, TierUnresolved},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			idx := NewIndex(IndexConfig{})
			idx.Add(tc.facts...)
			a, tier := idx.Resolve(t.Context(), tc.key, 20*time.Millisecond)
			if a.Name != tc.want || tier != tc.tier {
				t.Fatalf("got %q at %v, want %q at %v", a.Name, tier, tc.want, tc.tier)
			}
			if idx.Counters().Resolved(tier) != 1 {
				t.Fatalf("resolved at %v counted %d", tier, idx.Counters().Resolved(tier))
			}
			if tier == TierUnresolved && (!reflect.DeepEqual(a, Unresolved()) || Trailers(a) != nil) {
				t.Fatalf("unresolved author %+v trailers %v", a, Trailers(a))
			}
		})
	}
}

func TestUnresolvedAfterGraceWithoutFact(t *testing.T) {
	idx := NewIndex(IndexConfig{})
	start := time.Now()
	a, tier := idx.Resolve(t.Context(), cmKey("a", "cm", "u1", "10"), 200*time.Millisecond)
	if tier != TierUnresolved || a.Name != "unknown (attribution unresolved)" {
		t.Fatalf("got %+v at %v", a, tier)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Fatalf("returned after %v, before the grace", took)
	}
}

func TestFactArrivingDuringTheWaitWakesTheWaiterPromptly(t *testing.T) {
	idx := NewIndex(IndexConfig{})
	type result struct {
		a    Author
		tier Tier
		at   time.Time
	}
	done := make(chan result, 1)
	go func() {
		a, tier := idx.Resolve(context.Background(), cmKey("a", "cm", "u1", "10"), time.Minute)
		done <- result{a, tier, time.Now()}
	}()
	// Unrelated facts wake the waiter without satisfying it.
	idx.Add(fact("x", "update", "a", "other", "u9", "3", "mallory"))
	idx.Add(fact("y", "update", "a", "cm", "u1", "9", "mallory"))
	added := time.Now()
	idx.Add(fact("1", "update", "a", "cm", "u1", "10", "alice"))
	select {
	case r := <-done:
		if r.tier != TierExact || r.a.Name != "alice" {
			t.Fatalf("got %+v at %v", r.a, r.tier)
		}
		if lag := r.at.Sub(added); lag > 2*time.Second {
			t.Fatalf("woke %v after the fact arrived", lag)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("waiter not woken by its fact")
	}
}

func TestWaitingForOneObjectDoesNotBlockAnother(t *testing.T) {
	idx := NewIndex(IndexConfig{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	waiting := make(chan Tier, 1)
	go func() {
		_, tier := idx.Resolve(ctx, cmKey("a", "slow", "u-slow", "1"), time.Minute)
		waiting <- tier
	}()
	idx.Add(fact("1", "create", "a", "fast", "u-fast", "1", "bob"))
	a, tier := idx.Resolve(t.Context(), cmKey("a", "fast", "u-fast", "1"), time.Minute)
	if tier != TierExact || a.Name != "bob" {
		t.Fatalf("got %+v at %v", a, tier)
	}
	cancel() // a cancelled wait ends at once, with the fallback tiers
	select {
	case tier := <-waiting:
		if tier != TierUnresolved {
			t.Fatalf("cancelled wait: %v", tier)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("cancelled wait did not end")
	}
}

func TestManyConcurrentWaitersAllWake(t *testing.T) {
	idx := NewIndex(IndexConfig{})
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			uid := fmt.Sprintf("u%d", i)
			a, tier := idx.Resolve(t.Context(), cmKey("a", "cm"+uid, uid, "1"), time.Minute)
			if tier != TierExact || a.Name != "user"+uid {
				errs <- fmt.Errorf("%s: %q at %v", uid, a.Name, tier)
			}
		}()
	}
	for i := range n {
		uid := fmt.Sprintf("u%d", i)
		idx.Add(fact("id"+uid, "create", "a", "cm"+uid, uid, "1", "user"+uid))
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(30 * time.Second):
		t.Fatal("waiters still waiting")
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestFloodStaysBounded(t *testing.T) {
	const max, n = 1000, 100000
	idx := NewIndex(IndexConfig{MaxFacts: max})
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		uid := fmt.Sprintf("u%d", i)
		idx.Add(fact(uid, "update", "a", "cm"+uid, uid, "1", "flood"))
	}
	if idx.Len() != max {
		t.Fatalf("len %d, want %d", idx.Len(), max)
	}
	if got := idx.Counters().Evicted(); got != n-max {
		t.Fatalf("evicted %d, want %d", got, n-max)
	}
	idx.mu.Lock()
	sizes := []int{len(idx.exact), len(idx.byUID), len(idx.byName), len(idx.queue)}
	idx.mu.Unlock()
	for _, s := range sizes[:3] {
		if s != max {
			t.Fatalf("maps hold %v, want %d each", sizes, max)
		}
	}
	if sizes[3] > 3*max {
		t.Fatalf("queue backing holds %d entries for %d facts", sizes[3], max)
	}
	// The newest facts are kept, the oldest gone.
	if _, tier := idx.Resolve(t.Context(), cmKey("a", "cmu0", "u0", "1"), 0); tier != TierUnresolved {
		t.Fatalf("oldest fact still joins at %v", tier)
	}
	last := fmt.Sprintf("u%d", n-1)
	if _, tier := idx.Resolve(t.Context(), cmKey("a", "cm"+last, last, "1"), 0); tier != TierExact {
		t.Fatalf("newest fact joins at %v", tier)
	}
}

func TestFactsExpireAfterTTL(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	idx := NewIndex(IndexConfig{TTL: time.Minute, Now: clock})
	idx.Add(fact("1", "update", "a", "cm", "u1", "10", "alice"))
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if _, tier := idx.Resolve(t.Context(), cmKey("a", "cm", "u1", "10"), 0); tier != TierUnresolved {
		t.Fatalf("expired fact joins at %v", tier)
	}
	if idx.Len() != 0 || idx.Counters().Expired() != 1 {
		t.Fatalf("len %d expired %d", idx.Len(), idx.Counters().Expired())
	}
}
