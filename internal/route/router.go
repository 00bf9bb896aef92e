package route

import (
	"slices"
	"strconv"
	"sync"

	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
	"github.com/gitops-reverser/gitops-reverser/internal/watch"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// Router knows which branch each GitTarget writes and builds the subscribers that carry
// the target's streams to that branch's worker. The mutex guards only its maps and is never
// held while anything else is called: what it decides for a target is handed to the
// target's gate (a view) after unlocking. Deliveries go through each target's gate, which
// never calls back into the router.
type Router struct {
	registry *worker.Registry
	// attr names authors when attribution is on (nil: off).
	attr Attributor
	// sensitive names the types whose documents are sealed.
	sensitive watch.SensitiveTypes

	mu      sync.Mutex
	targets map[string]*targetRoute
}

// targetRoute is one attached GitTarget.
type targetRoute struct {
	key  ownership.BranchKey
	gate *gate
	// generation changes when the target's worker is replaced or it moves to another
	// branch: every subscription is then renewed and sends a fresh snapshot.
	generation int
	// renewed is the last discard number RenewTarget renewed the subscriptions for.
	renewed uint64
	// subs are the subscriptions last handed out, by stream, with a revision each that
	// changes when the subscription does; nil before the first Wanted. Replaced, never
	// changed in place, since the gate's views share it.
	subs map[watch.StreamKey]revisioned
	// version counts the views handed to the gate.
	version int
}

// view returns the next view of the target for its gate. Called with the router's lock held.
func (tr *targetRoute) view(attached bool) view {
	tr.version++
	return view{version: tr.version, attached: attached, key: tr.key, current: tr.subs}
}

type revisioned struct {
	sub      watch.Subscription
	sealedBy string // the sealer's fingerprint, for sensitive types
	revision int
}

// NewRouter returns a router that finds workers in registry and, when attr is not nil,
// names the author of every change with it.
func NewRouter(registry *worker.Registry, attr Attributor, sensitive watch.SensitiveTypes) *Router {
	return &Router{registry: registry, attr: attr, sensitive: sensitive, targets: map[string]*targetRoute{}}
}

// Attach records that target writes the branch key; a target that moves to another
// branch renews its subscriptions.
func (r *Router) Attach(target string, key ownership.BranchKey) {
	r.mu.Lock()
	tr, ok := r.targets[target]
	switch {
	case !ok:
		tr = &targetRoute{key: key, gate: newGate(r.registry.Lookup)}
		r.targets[target] = tr
	case tr.key != key:
		tr.key = key
		tr.generation++
	}
	v := tr.view(true)
	r.mu.Unlock()
	tr.gate.apply(v)
}

// Detach forgets target; its sinks deliver nothing more.
func (r *Router) Detach(target string) {
	r.mu.Lock()
	tr, ok := r.targets[target]
	delete(r.targets, target)
	var v view
	if ok {
		v = tr.view(false)
	}
	r.mu.Unlock()
	if ok {
		tr.gate.apply(v)
	}
}

// Key returns the branch target writes.
func (r *Router) Key(target string) (ownership.BranchKey, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tr, ok := r.targets[target]
	if !ok {
		return ownership.BranchKey{}, false
	}
	return tr.key, true
}

// TargetsOf returns the attached targets that write key.
func (r *Router) TargetsOf(key ownership.BranchKey) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for name, tr := range r.targets {
		if tr.key == key {
			names = append(names, name)
		}
	}
	return names
}

// Wanted turns an attached target's subscriptions into what the hub runs. Documents of
// sensitive types are sealed with sealer (nil: the caller must not pass sensitive
// subscriptions; they would deliver nothing).
func (r *Router) Wanted(target string, subs []watch.Subscription, sealer Sealer) []watch.Wanted {
	r.mu.Lock()
	tr, ok := r.targets[target]
	if !ok {
		r.mu.Unlock()
		return nil
	}
	next := make(map[watch.StreamKey]revisioned, len(subs))
	wanted := make([]watch.Wanted, 0, len(subs))
	for _, sub := range subs {
		var sealedBy string
		var subSealer Sealer
		if r.sensitive.Has(sub.Resource) && sealer != nil {
			sealedBy, subSealer = sealer.Fingerprint(), sealer
		}
		rev := tr.subs[sub.Key]
		if !rev.sub.Equal(sub) || rev.sealedBy != sealedBy {
			rev = revisioned{sub: sub, sealedBy: sealedBy, revision: rev.revision + 1}
		}
		next[sub.Key] = rev
		fp := strconv.Itoa(tr.generation) + "/" + strconv.Itoa(rev.revision)
		wanted = append(wanted, watch.Wanted{
			Key:         sub.Key,
			Resource:    sub.Resource,
			Subscriber:  r.newSink(target, sub, fp, tr.gate, subSealer),
			Fingerprint: fp,
		})
	}
	tr.subs = next
	v := tr.view(true)
	r.mu.Unlock()
	tr.gate.apply(v)
	return wanted
}

// Expect makes target's gate gather the next snapshots of the wanted subscriptions whose
// stream is in keys (from Hub.Changed) into one resync.
func (r *Router) Expect(target string, wanted []watch.Wanted, keys []watch.StreamKey) {
	r.mu.Lock()
	tr, ok := r.targets[target]
	r.mu.Unlock()
	if !ok {
		return
	}
	want := map[watch.StreamKey]string{}
	for _, w := range wanted {
		if slices.Contains(keys, w.Key) {
			want[w.Key] = w.Fingerprint
		}
	}
	tr.gate.expect(want)
}

// Renew marks every target writing key for fresh snapshots: its worker was replaced, and
// what the old one had not pushed must be derived again.
func (r *Router) Renew(key ownership.BranchKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, tr := range r.targets {
		if tr.key == key {
			tr.generation++
		}
	}
}

// RenewTarget makes one target's subscriptions new, so that the next Wanted gives them a
// fresh snapshot (a triggered target's worker discarded one taken while Git was ahead). It
// renews once per number: asking again for the same discard changes nothing. It reports
// whether it renewed.
func (r *Router) RenewTarget(target string, number uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	tr, ok := r.targets[target]
	if !ok || number <= tr.renewed {
		return false
	}
	tr.generation++
	tr.renewed = number
	return true
}

func (r *Router) newSink(target string, sub watch.Subscription, fp string, g *gate, sealer Sealer) *sink {
	s := &sink{target: target, sub: sub, fingerprint: fp, gate: g, sealer: sealer, sensitive: r.sensitive.Has(sub.Resource)}
	if r.attr != nil {
		s.attributed = newAttributed(r.attr)
	}
	return s
}
