package watch

import (
	"cmp"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

func TestExclusions(t *testing.T) {
	for _, gr := range []schema.GroupResource{
		{Resource: "pods"}, {Resource: "events"}, {Group: "events.k8s.io", Resource: "events"},
		{Resource: "endpoints"}, {Group: "discovery.k8s.io", Resource: "endpointslices"},
		{Group: "coordination.k8s.io", Resource: "leases"}, {Group: "apps", Resource: "controllerrevisions"},
		{Group: "apps", Resource: "replicasets"}, {Group: "batch", Resource: "jobs"},
		{Group: v1alpha1.GroupVersion.Group, Resource: "commitrequests"},
	} {
		if !IsExcluded(gr) {
			t.Errorf("%v is not excluded", gr)
		}
	}
	for _, gr := range []schema.GroupResource{{Resource: "configmaps"}, {Group: "apps", Resource: "deployments"}, {Group: "batch", Resource: "cronjobs"}} {
		if IsExcluded(gr) {
			t.Errorf("%v is excluded", gr)
		}
	}
	list := DefaultExclusions()
	if !slices.IsSortedFunc(list, func(a, b schema.GroupResource) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource))
	}) || len(list) != len(defaultExclusions) {
		t.Errorf("DefaultExclusions = %v", list)
	}
}

func TestWildcardExcludesExplicitOptsIn(t *testing.T) {
	cat := testCatalog()
	wild, _, _ := CompileWatchRule(watchRule(v1alpha1.ResourceRule{APIGroups: []string{""}, Resources: []string{"*"}}), cat)
	if got := claimed(wild); slices.Contains(got, "/v1/pods[team-a]") || !slices.Contains(got, "/v1/configmaps[team-a]") {
		t.Errorf("wildcard claims %v", got)
	}
	named, unresolved, _ := CompileWatchRule(watchRule(v1alpha1.ResourceRule{APIGroups: []string{""}, Resources: []string{"*", "pods"}}), cat)
	if got := claimed(named); !slices.Contains(got, "/v1/pods[team-a]") || len(unresolved) != 0 {
		t.Errorf("named claims %v, unresolved %v", got, unresolved)
	}
}
