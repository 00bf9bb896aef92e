package watch

import (
	"errors"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func apiGroup(name, preferred string, versions ...string) *metav1.APIGroup {
	g := &metav1.APIGroup{Name: name, PreferredVersion: metav1.GroupVersionForDiscovery{Version: preferred}}
	for _, v := range versions {
		g.Versions = append(g.Versions, metav1.GroupVersionForDiscovery{Version: v})
	}
	return g
}

var listWatch = []string{"get", "list", "watch"}

func apiList(gv string, rs ...metav1.APIResource) *metav1.APIResourceList {
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: rs}
}

func apiRes(name, kind string, namespaced bool, verbs ...string) metav1.APIResource {
	if verbs == nil {
		verbs = listWatch
	}
	return metav1.APIResource{Name: name, Kind: kind, Namespaced: namespaced, Verbs: verbs}
}

// served renders a merge result as sorted "group/resource=v1,v2".
func served(m map[schema.GroupResource][]Resource) []string {
	var out []string
	for gr, rs := range m {
		s := gr.Group + "/" + gr.Resource + "="
		for i, r := range rs {
			if i > 0 {
				s += ","
			}
			s += r.GVR.Version
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func TestMergeDiscovery(t *testing.T) {
	groups := []*metav1.APIGroup{apiGroup("", "v1", "v1"), apiGroup("example.com", "v2", "v1", "v2")}
	lists := []*metav1.APIResourceList{
		apiList("v1",
			apiRes("configmaps", "ConfigMap", true),
			apiRes("pods/log", "Pod", true),
			apiRes("bindings", "Binding", true, "create"),
		),
		apiList("example.com/v1", apiRes("widgets", "Widget", true), apiRes("gadgets", "Gadget", false)),
		apiList("example.com/v2", apiRes("widgets", "Widget", true)),
	}
	first := mergeDiscovery(nil, groups, lists, nil)
	want := []string{"/configmaps=v1", "example.com/gadgets=v1", "example.com/widgets=v2,v1"}
	if got := served(first); !slices.Equal(got, want) {
		t.Fatalf("first = %v, want %v (no subresources, list+watch only, preferred first)", got, want)
	}
	prev := newResourceSet(first, 1, nil)
	if r, _ := prev.Lookup("example.com", "widgets"); r.GVR.Version != "v2" || r.Kind != "Widget" || !r.Namespaced {
		t.Errorf("Lookup = %+v", r)
	}

	// example.com blinks: its previous resources stay, even though it answered nothing.
	failed := map[schema.GroupVersion]error{{Group: "example.com", Version: "v2"}: errors.New("503")}
	blink := mergeDiscovery(prev, groups, lists[:1], failed)
	if got := served(blink); !slices.Equal(got, want) {
		t.Errorf("after a blink = %v, want %v", got, want)
	}
	// A group that fails before it was ever known contributes what it answered.
	fresh := mergeDiscovery(newResourceSet(map[schema.GroupResource][]Resource{}, 1, nil), groups, lists[:2], failed)
	if got := served(fresh); !slices.Equal(got, []string{"/configmaps=v1", "example.com/gadgets=v1", "example.com/widgets=v1"}) {
		t.Errorf("new failing group = %v", got)
	}

	// The group answers without gadgets: gone. The group disappears: all gone.
	gone := mergeDiscovery(prev, groups, []*metav1.APIResourceList{lists[0], apiList("example.com/v1", apiRes("widgets", "Widget", true)), lists[2]}, nil)
	if got := served(gone); !slices.Equal(got, []string{"/configmaps=v1", "example.com/widgets=v2,v1"}) {
		t.Errorf("after removal = %v", got)
	}
	if got := served(mergeDiscovery(prev, groups[:1], lists[:1], nil)); !slices.Equal(got, []string{"/configmaps=v1"}) {
		t.Errorf("after group removal = %v", got)
	}
	if !prev.equalContent(first) || prev.equalContent(gone) {
		t.Error("equalContent is wrong")
	}
}

func TestResourceSet(t *testing.T) {
	s := testCatalog()
	if s.Len() != 14 || s.Version() != 0 || s.Changed() != nil {
		t.Errorf("Len %d Version %d", s.Len(), s.Version())
	}
	if r, ok := s.Lookup("example.com", "widgets"); !ok || r.GVR.Version != "v2" {
		t.Errorf("Lookup = %v %v", r, ok)
	}
	if vs := s.ServedVersions("example.com", "widgets"); len(vs) != 2 || vs[1].GVR.Version != "v1" {
		t.Errorf("ServedVersions = %v", vs)
	}
	if _, ok := s.Lookup("", "widgets"); ok {
		t.Error("found widgets in the core group")
	}
	rs := s.Resources()
	if !slices.IsSortedFunc(rs, func(a, b Resource) int {
		if lessResource(a, b) {
			return -1
		}
		return 1
	}) {
		t.Errorf("Resources not sorted: %v", rs)
	}
}
