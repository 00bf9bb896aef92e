package watch

import (
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
)

// Subscription is what one GitTarget takes from one stream: every claim of the target on
// one resource type, merged, so that the target's snapshots of that stream cover the union
// of its claims.
type Subscription struct {
	// Target is the GitTarget.
	Target types.NamespacedName
	// Key is the stream to use: (GVR, ns) when the merged claims cover exactly one
	// namespace; (GVR, "") when they cover several, and for a cluster-scoped type.
	Key StreamKey
	// Resource is the type at the version the stream uses.
	Resource Resource
	// Scopes are the namespaces the target's snapshots of this stream cover, sorted; [""]
	// for a cluster-scoped type.
	Scopes []string

	filters []claimFilter
}

// claimFilter is the merge of the claims with one selector and one operation set.
type claimFilter struct {
	namespaces []string // sorted; nil for a cluster-scoped type
	selector   labels.Selector
	ops        OperationSet
}

func (f claimFilter) covers(namespaced bool, ns string) bool {
	if !namespaced {
		return true
	}
	_, ok := slices.BinarySearch(f.namespaces, ns)
	return ok
}

// Matches reports whether a change of obj reaches the target: some merged claim covers the
// object's namespace, its selector matches the object's labels, and it allows op.
func (s Subscription) Matches(obj Object, op ChangeType) bool {
	for _, f := range s.filters {
		if f.ops.Has(op) && f.covers(s.Resource.Namespaced, obj.ID.Namespace) && f.selector.Matches(labels.Set(obj.Labels)) {
			return true
		}
	}
	return false
}

// InSnapshot reports whether obj belongs in the target's snapshot of the stream: some merged
// claim covers its namespace and its selector matches. Operations do not filter snapshots.
func (s Subscription) InSnapshot(obj Object) bool {
	for _, f := range s.filters {
		if f.covers(s.Resource.Namespaced, obj.ID.Namespace) && f.selector.Matches(labels.Set(obj.Labels)) {
			return true
		}
	}
	return false
}

// Covers reports whether the subscription's snapshots cover namespace ns ("" for a
// cluster-scoped type).
func (s Subscription) Covers(ns string) bool {
	_, ok := slices.BinarySearch(s.Scopes, ns)
	return ok
}

// Equal reports whether two subscriptions select the same objects of the same stream for
// the same target, so that a recompile that yields an equal subscription changes nothing.
func (s Subscription) Equal(o Subscription) bool {
	if s.Target != o.Target || s.Key != o.Key || s.Resource != o.Resource ||
		!slices.Equal(s.Scopes, o.Scopes) || len(s.filters) != len(o.filters) {
		return false
	}
	for i, f := range s.filters {
		g := o.filters[i]
		if f.ops != g.ops || f.selector.String() != g.selector.String() || !slices.Equal(f.namespaces, g.namespaces) {
			return false
		}
	}
	return true
}

// MergeClaims merges claims into one subscription per (target, group/resource), in a
// deterministic order (target, then group, resource). When claims of one target name one
// resource at different versions, the highest version (Kubernetes version order: v2 >
// v1 > v1beta1) wins, so that a target never receives the same objects twice. A claim on
// a namespaced type with no namespace claims nothing and is dropped.
func MergeClaims(claims []Claim) []Subscription {
	type key struct {
		target types.NamespacedName
		gr     schema.GroupResource
	}
	byKey := map[key][]Claim{}
	var keys []key
	for _, c := range claims {
		if c.Resource.Namespaced && len(c.Namespaces) == 0 {
			continue
		}
		k := key{c.Target, c.Resource.GVR.GroupResource()}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], c)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.target != b.target {
			if a.target.Namespace != b.target.Namespace {
				return a.target.Namespace < b.target.Namespace
			}
			return a.target.Name < b.target.Name
		}
		if a.gr.Group != b.gr.Group {
			return a.gr.Group < b.gr.Group
		}
		return a.gr.Resource < b.gr.Resource
	})

	subs := make([]Subscription, 0, len(keys))
	for _, k := range keys {
		subs = append(subs, mergeOne(k.target, byKey[k]))
	}
	return subs
}

func mergeOne(target types.NamespacedName, claims []Claim) Subscription {
	res := claims[0].Resource
	for _, c := range claims[1:] {
		if version.CompareKubeAwareVersionStrings(c.Resource.GVR.Version, res.GVR.Version) > 0 {
			res = c.Resource
		}
	}
	sub := Subscription{Target: target, Resource: res}

	// One filter per (selector, operations); their namespaces are unioned.
	type fkey struct {
		sel string
		ops OperationSet
	}
	idx := map[fkey]int{}
	var scopes []string
	for _, c := range claims {
		sel := c.Selector
		if sel == nil {
			sel = labels.Everything()
		}
		ops := c.Operations
		if ops == 0 {
			ops = AllOperations
		}
		fk := fkey{sel.String(), ops}
		i, ok := idx[fk]
		if !ok {
			i = len(sub.filters)
			idx[fk] = i
			sub.filters = append(sub.filters, claimFilter{selector: sel, ops: ops})
		}
		if res.Namespaced {
			sub.filters[i].namespaces = append(sub.filters[i].namespaces, c.Namespaces...)
			scopes = append(scopes, c.Namespaces...)
		}
	}
	for i := range sub.filters {
		sub.filters[i].namespaces = sortedUnique(sub.filters[i].namespaces)
	}
	sort.SliceStable(sub.filters, func(i, j int) bool {
		a, b := sub.filters[i], sub.filters[j]
		if a.selector.String() != b.selector.String() {
			return a.selector.String() < b.selector.String()
		}
		return a.ops < b.ops
	})

	if !res.Namespaced {
		sub.Scopes = []string{""}
		sub.Key = StreamKey{GVR: res.GVR}
		return sub
	}
	sub.Scopes = sortedUnique(scopes)
	sub.Key = StreamKey{GVR: res.GVR}
	if len(sub.Scopes) == 1 {
		sub.Key.Namespace = sub.Scopes[0]
	}
	return sub
}

func sortedUnique(ss []string) []string {
	out := slices.Clone(ss)
	sort.Strings(out)
	return slices.Compact(out)
}

// StreamKeys lists the distinct streams a set of subscriptions needs, sorted.
func StreamKeys(subs []Subscription) []StreamKey {
	var keys []StreamKey
	seen := map[StreamKey]bool{}
	for _, s := range subs {
		if !seen[s.Key] {
			seen[s.Key] = true
			keys = append(keys, s.Key)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}
