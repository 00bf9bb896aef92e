package watch

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

var (
	targetA    = types.NamespacedName{Namespace: "ns", Name: "a"}
	targetB    = types.NamespacedName{Namespace: "ns", Name: "b"}
	configMaps = res("", "v1", "configmaps", "ConfigMap", true)
	crs        = res("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false)
)

func claim(target types.NamespacedName, r Resource, sel string, ops OperationSet, namespaces ...string) Claim {
	s, err := labels.Parse(sel)
	if err != nil {
		panic(err)
	}
	return Claim{Target: target, Resource: r, Namespaces: namespaces, Selector: s, Operations: ops}
}

func obj(ns, name string, lbls map[string]string) Object {
	return Object{ID: layout.Identity{Kind: "ConfigMap", Namespace: ns, Name: name}, Labels: lbls}
}

func TestMergeClaims(t *testing.T) {
	t.Run("one target, two namespaces: one subscription on the all-namespaces stream", func(t *testing.T) {
		subs := MergeClaims([]Claim{
			claim(targetA, configMaps, "", AllOperations, "b"),
			claim(targetA, configMaps, "", AllOperations, "a"),
		})
		if len(subs) != 1 {
			t.Fatalf("subs = %+v", subs)
		}
		s := subs[0]
		if s.Key != (StreamKey{GVR: configMaps.GVR}) || !slices.Equal(s.Scopes, []string{"a", "b"}) || s.Target != targetA {
			t.Errorf("sub = %+v", s)
		}
		if !s.Covers("a") || s.Covers("c") {
			t.Error("Covers is wrong")
		}
	})
	t.Run("two targets on one namespace: two subscriptions on the same stream", func(t *testing.T) {
		subs := MergeClaims([]Claim{
			claim(targetB, configMaps, "", AllOperations, "x"),
			claim(targetA, configMaps, "app=web", OpCreate, "x"),
		})
		if len(subs) != 2 || subs[0].Target != targetA || subs[1].Target != targetB {
			t.Fatalf("subs = %+v", subs)
		}
		want := StreamKey{GVR: configMaps.GVR, Namespace: "x"}
		if subs[0].Key != want || subs[1].Key != want {
			t.Errorf("keys = %v, %v; want both %v", subs[0].Key, subs[1].Key, want)
		}
		if keys := StreamKeys(subs); len(keys) != 1 || keys[0] != want {
			t.Errorf("StreamKeys = %v", keys)
		}
	})
	t.Run("cluster-scoped", func(t *testing.T) {
		subs := MergeClaims([]Claim{claim(targetA, crs, "", AllOperations), claim(targetA, crs, "a=1", OpDelete)})
		if len(subs) != 1 || subs[0].Key != (StreamKey{GVR: crs.GVR}) || !slices.Equal(subs[0].Scopes, []string{""}) {
			t.Fatalf("subs = %+v", subs)
		}
		if !subs[0].InSnapshot(Object{ID: layout.Identity{Name: "x"}}) {
			t.Error("a cluster-scoped object is not in the snapshot")
		}
	})
	t.Run("versions of one resource merge at the highest", func(t *testing.T) {
		v1 := res("example.com", "v1", "widgets", "Widget", true)
		v1beta1 := res("example.com", "v1beta1", "widgets", "Widget", true)
		v2 := res("example.com", "v2", "widgets", "Widget", true)
		subs := MergeClaims([]Claim{claim(targetA, v1, "", AllOperations, "a"), claim(targetA, v2, "", AllOperations, "b"), claim(targetA, v1beta1, "", AllOperations, "c")})
		if len(subs) != 1 || subs[0].Resource != v2 || !slices.Equal(subs[0].Scopes, []string{"a", "b", "c"}) {
			t.Fatalf("subs = %+v", subs)
		}
	})
	t.Run("namespaced claim without namespaces is dropped", func(t *testing.T) {
		if subs := MergeClaims([]Claim{claim(targetA, configMaps, "", AllOperations)}); len(subs) != 0 {
			t.Fatalf("subs = %+v", subs)
		}
	})
	t.Run("deterministic and comparable", func(t *testing.T) {
		in := []Claim{
			claim(targetB, crs, "", AllOperations),
			claim(targetA, configMaps, "x=1", OpUpdate, "b"),
			claim(targetA, configMaps, "", OpCreate, "a"),
			claim(targetA, crs, "", AllOperations),
		}
		rev := slices.Clone(in)
		slices.Reverse(rev)
		s1, s2 := MergeClaims(in), MergeClaims(rev)
		if len(s1) != 3 || len(s2) != 3 {
			t.Fatalf("subs = %+v", s1)
		}
		for i := range s1 {
			if !s1[i].Equal(s2[i]) {
				t.Errorf("subscription %d differs with claim order: %+v vs %+v", i, s1[i], s2[i])
			}
		}
		if s1[0].Resource != configMaps || s1[1].Resource != crs || s1[2].Target != targetB {
			t.Errorf("order = %+v", s1)
		}
		if s1[0].Equal(s1[1]) {
			t.Error("different subscriptions are equal")
		}
	})
}

func TestSubscriptionMatches(t *testing.T) {
	// In namespace a: every web object, any operation. In namespace b: deletes of anything.
	sub := MergeClaims([]Claim{
		claim(targetA, configMaps, "app=web", AllOperations, "a"),
		claim(targetA, configMaps, "", OpDelete, "b"),
	})[0]
	web := map[string]string{"app": "web"}
	cases := []struct {
		name     string
		obj      Object
		op       ChangeType
		matches  bool
		snapshot bool
	}{
		{"selector matches", obj("a", "x", web), Updated, true, true},
		{"selector does not match", obj("a", "x", map[string]string{"app": "db"}), Updated, false, false},
		{"no labels", obj("a", "x", nil), Created, false, false},
		{"operation allowed", obj("b", "x", nil), Deleted, true, true},
		{"operation not allowed, still in snapshot", obj("b", "x", nil), Updated, false, true},
		{"namespace not covered", obj("c", "x", web), Created, false, false},
	}
	for _, tc := range cases {
		if got := sub.Matches(tc.obj, tc.op); got != tc.matches {
			t.Errorf("%s: Matches = %v", tc.name, got)
		}
		if got := sub.InSnapshot(tc.obj); got != tc.snapshot {
			t.Errorf("%s: InSnapshot = %v", tc.name, got)
		}
	}
}
