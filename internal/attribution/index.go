package attribution

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Tier is how a watch event was joined to its fact (docs/attribution.md#the-join), in the
// order tried.
type Tier int

// Join tiers.
const (
	// TierExact: a fact with the event's (uid, resourceVersion).
	TierExact Tier = iota
	// TierUID: the latest fact for the event's uid (for a delete: the latest delete of it).
	TierUID
	// TierName: the latest fact for the event's group/resource, namespace and name whose
	// uid is unknown or the event's.
	TierName
	// TierCollection: a deletecollection that listed the uid, or whose scope
	// (group/resource, namespace or all namespaces) covers the deleted object.
	TierCollection
	// TierUnresolved: no fact in time; the author is Unresolved.
	TierUnresolved
	numTiers
)

var tierNames = [...]string{"exact", "uid", "name", "collection", "unresolved"}

func (t Tier) String() string {
	if t >= 0 && int(t) < len(tierNames) {
		return tierNames[t]
	}
	return "unknown"
}

// Tiers lists every Tier, for metrics wiring.
func Tiers() []Tier {
	out := make([]Tier, numTiers)
	for i := range out {
		out[i] = Tier(i)
	}
	return out
}

// ObjectKey identifies the watch event to attribute.
type ObjectKey struct {
	Resource        schema.GroupResource
	Namespace       string
	Name            string
	UID             string
	ResourceVersion string
	// Deleted is set for a DELETE watch event: only delete and deletecollection facts
	// name its author.
	Deleted bool
}

// Defaults of IndexConfig.
const (
	DefaultMaxFacts = 65536
	DefaultTTL      = 10 * time.Minute
	DefaultGrace    = 3 * time.Second
)

// IndexConfig bounds an Index.
type IndexConfig struct {
	// MaxFacts is the most facts kept; adding one more evicts the oldest
	// (DefaultMaxFacts when 0).
	MaxFacts int
	// TTL is how long a fact is kept after it arrived (DefaultTTL when 0).
	TTL time.Duration
	// Counters receives the counts; a fresh one is used when nil.
	Counters *Counters
	// Now is the clock the TTL is measured with (time.Now when nil). Waiting in Resolve
	// always uses real time.
	Now func() time.Time
}

type uidRV struct{ uid, rv string }

type nameKey struct {
	gr       schema.GroupResource
	ns, name string
}

type entry struct {
	fact  *Fact
	added time.Time
}

// Index keeps the facts of recent accepted audit events, bounded in count and age, and
// answers joins. It is safe for concurrent use.
type Index struct {
	maxFacts int
	ttl      time.Duration
	counters *Counters
	now      func() time.Time

	mu          sync.Mutex
	queue       []*entry // arrival order; queue[head:] are live
	head        int
	collections []*entry // deletecollection facts, arrival order
	exact       map[uidRV]*entry
	byUID       map[string]*entry
	delByUID    map[string]*entry
	byName      map[nameKey]*entry
	delByName   map[nameKey]*entry
	// changed is closed (and replaced) whenever facts arrive, to wake every waiter.
	changed chan struct{}
}

// NewIndex returns an empty index.
func NewIndex(cfg IndexConfig) *Index {
	if cfg.MaxFacts <= 0 {
		cfg.MaxFacts = DefaultMaxFacts
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Counters == nil {
		cfg.Counters = &Counters{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Index{
		maxFacts:  cfg.MaxFacts,
		ttl:       cfg.TTL,
		counters:  cfg.Counters,
		now:       cfg.Now,
		exact:     map[uidRV]*entry{},
		byUID:     map[string]*entry{},
		delByUID:  map[string]*entry{},
		byName:    map[nameKey]*entry{},
		delByName: map[nameKey]*entry{},
		changed:   make(chan struct{}),
	}
}

// Counters returns the counters the index and its webhook record into.
func (x *Index) Counters() *Counters { return x.counters }

// Len is the number of facts held.
func (x *Index) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.queue) - x.head
}

// Add keeps facts (in order) and wakes every waiting Resolve once.
func (x *Index) Add(facts ...*Fact) {
	if len(facts) == 0 {
		return
	}
	x.mu.Lock()
	now := x.now()
	x.expireLocked(now)
	for _, f := range facts {
		e := &entry{fact: f, added: now}
		x.queue = append(x.queue, e)
		if f.UID != "" && f.ResourceVersion != "" {
			x.exact[uidRV{f.UID, f.ResourceVersion}] = e
		}
		nk := nameKey{f.Resource, f.Namespace, f.Name}
		switch {
		case f.Verb == "deletecollection":
			x.collections = append(x.collections, e)
		case f.isDelete():
			if f.UID != "" {
				x.delByUID[f.UID] = e
			}
			if f.Name != "" {
				x.delByName[nk] = e
			}
		default:
			if f.UID != "" {
				x.byUID[f.UID] = e
			}
			if f.Name != "" {
				x.byName[nk] = e
			}
		}
		x.counters.accepted.Add(1)
		for len(x.queue)-x.head > x.maxFacts {
			x.dropOldestLocked()
			x.counters.evicted.Add(1)
		}
	}
	close(x.changed)
	x.changed = make(chan struct{})
	x.mu.Unlock()
}

func (x *Index) expireLocked(now time.Time) {
	for x.head < len(x.queue) && now.Sub(x.queue[x.head].added) > x.ttl {
		x.dropOldestLocked()
		x.counters.expired.Add(1)
	}
}

func (x *Index) dropOldestLocked() {
	e := x.queue[x.head]
	x.queue[x.head] = nil
	x.head++
	if x.head > 1024 && x.head*2 > len(x.queue) {
		x.queue = append([]*entry(nil), x.queue[x.head:]...)
		x.head = 0
	}
	f := e.fact
	if k := (uidRV{f.UID, f.ResourceVersion}); x.exact[k] == e {
		delete(x.exact, k)
	}
	nk := nameKey{f.Resource, f.Namespace, f.Name}
	for _, m := range []map[string]*entry{x.byUID, x.delByUID} {
		if m[f.UID] == e {
			delete(m, f.UID)
		}
	}
	for _, m := range []map[nameKey]*entry{x.byName, x.delByName} {
		if m[nk] == e {
			delete(m, nk)
		}
	}
	if len(x.collections) > 0 && x.collections[0] == e {
		x.collections[0] = nil
		x.collections = x.collections[1:]
	}
}

// Resolve names the author of one watch event. It returns at once when a fact with the
// event's (uid, resourceVersion) is held — or, for a delete, a delete of its uid or a
// deletecollection that listed it — and otherwise waits for one to arrive, up to grace
// (or until ctx ends). When the wait ends without one, it falls back to the latest fact
// for the uid, then for namespace/name, then (for a delete) a deletecollection whose
// scope covers the object; without any, the author is Unresolved.
//
// Waiting is per call: callers attributing other objects are not held up. A caller keeps
// one object's events in order by resolving them one at a time.
func (x *Index) Resolve(ctx context.Context, key ObjectKey, grace time.Duration) (Author, Tier) {
	a, t := x.resolve(ctx, key, grace)
	x.counters.resolve(t)
	return a, t
}

func (x *Index) resolve(ctx context.Context, key ObjectKey, grace time.Duration) (Author, Tier) {
	deadline := time.Now().Add(grace)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
wait:
	for {
		x.mu.Lock()
		x.expireLocked(x.now())
		if f, t := x.lookupLocked(key, false); f != nil {
			x.mu.Unlock()
			return f.Author, t
		}
		ch := x.changed
		x.mu.Unlock()
		remaining := time.Until(deadline)
		if remaining <= 0 {
			break
		}
		if timer == nil {
			timer = time.NewTimer(remaining)
		}
		select {
		case <-ch:
		case <-timer.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.expireLocked(x.now())
	if f, t := x.lookupLocked(key, true); f != nil {
		return f.Author, t
	}
	return Unresolved(), TierUnresolved
}

// lookupLocked finds the fact of key. Without final, only the tiers that are conclusive
// on their own are tried; with final, every tier.
func (x *Index) lookupLocked(key ObjectKey, final bool) (*Fact, Tier) {
	nk := nameKey{key.Resource, key.Namespace, key.Name}
	nameFits := func(e *entry) bool {
		return e != nil && (e.fact.UID == "" || key.UID == "" || e.fact.UID == key.UID)
	}
	if !key.Deleted {
		if key.UID != "" && key.ResourceVersion != "" {
			if e := x.exact[uidRV{key.UID, key.ResourceVersion}]; e != nil && !e.fact.isDelete() {
				return e.fact, TierExact
			}
		}
		if !final {
			return nil, 0
		}
		if e := x.byUID[key.UID]; key.UID != "" && e != nil {
			return e.fact, TierUID
		}
		if e := x.byName[nk]; key.Name != "" && nameFits(e) {
			return e.fact, TierName
		}
		return nil, 0
	}
	if key.UID != "" && key.ResourceVersion != "" {
		if e := x.exact[uidRV{key.UID, key.ResourceVersion}]; e != nil && e.fact.isDelete() {
			return e.fact, TierExact
		}
	}
	if e := x.delByUID[key.UID]; key.UID != "" && e != nil {
		return e.fact, TierUID
	}
	// A deletecollection that listed this uid: conclusive. Latest first.
	for i := len(x.collections) - 1; i >= 0 && key.UID != ""; i-- {
		f := x.collections[i].fact
		if _, ok := f.CollectionUIDs[key.UID]; ok && f.Resource == key.Resource {
			return f, TierCollection
		}
	}
	if !final {
		return nil, 0
	}
	if e := x.delByName[nk]; key.Name != "" && nameFits(e) {
		return e.fact, TierName
	}
	for i := len(x.collections) - 1; i >= 0; i-- {
		f := x.collections[i].fact
		if f.Resource != key.Resource || (f.Namespace != "" && f.Namespace != key.Namespace) {
			continue
		}
		// A listing that is complete and lacks the uid did not delete this object.
		if len(f.CollectionUIDs) > 0 && len(f.CollectionUIDs) < maxCollectionUIDs && key.UID != "" {
			continue
		}
		return f, TierCollection
	}
	return nil, 0
}
