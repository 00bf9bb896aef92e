package watch

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

func res(group, version, resource, kind string, namespaced bool) Resource {
	return Resource{GVR: schema.GroupVersionResource{Group: group, Version: version, Resource: resource}, Kind: kind, Namespaced: namespaced}
}

// testCatalog is a literal catalog: the first entry of a group/resource is its preferred
// version.
func testCatalog() *ResourceSet {
	return NewResourceSet(
		res("", "v1", "configmaps", "ConfigMap", true),
		res("", "v1", "secrets", "Secret", true),
		res("", "v1", "pods", "Pod", true),
		res("", "v1", "events", "Event", true),
		res("", "v1", "endpoints", "Endpoints", true),
		res("", "v1", "namespaces", "Namespace", false),
		res("apps", "v1", "deployments", "Deployment", true),
		res("apps", "v1", "replicasets", "ReplicaSet", true),
		res("batch", "v1", "jobs", "Job", true),
		res("batch", "v1", "cronjobs", "CronJob", true),
		res("events.k8s.io", "v1", "events", "Event", true),
		res("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false),
		res("rbac.authorization.k8s.io", "v1", "roles", "Role", true),
		res("example.com", "v2", "widgets", "Widget", true),
		res("example.com", "v1", "widgets", "Widget", true),
	)
}

func watchRule(rules ...v1alpha1.ResourceRule) *v1alpha1.WatchRule {
	return &v1alpha1.WatchRule{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "r"},
		Spec:       v1alpha1.WatchRuleSpec{TargetRef: v1alpha1.LocalObjectReference{Name: "t"}, Rules: rules},
	}
}

func clusterRule(rules ...v1alpha1.ClusterResourceRule) *v1alpha1.ClusterWatchRule {
	return &v1alpha1.ClusterWatchRule{
		ObjectMeta: metav1.ObjectMeta{Name: "cr"},
		Spec: v1alpha1.ClusterWatchRuleSpec{
			TargetRef: v1alpha1.NamespacedObjectReference{Namespace: "infra", Name: "t"},
			Rules:     rules,
		},
	}
}

// claimed renders claims as "group/version/resource[ns,ns]" for compact comparison.
func claimed(claims []Claim) []string {
	var out []string
	for _, c := range claims {
		s := c.Resource.GVR.Group + "/" + c.Resource.GVR.Version + "/" + c.Resource.GVR.Resource
		if len(c.Namespaces) > 0 {
			s += "[" + strings.Join(c.Namespaces, ",") + "]"
		}
		out = append(out, s)
	}
	return out
}

func TestCompileWatchRule(t *testing.T) {
	cases := []struct {
		name       string
		rule       v1alpha1.ResourceRule
		want       []string
		unresolved []string // substrings, one per message
	}{
		{
			name: "named core resource",
			rule: v1alpha1.ResourceRule{APIGroups: []string{""}, Resources: []string{"configmaps"}},
			want: []string{"/v1/configmaps[team-a]"},
		},
		{
			name: "wildcard skips excluded and cluster-scoped types",
			rule: v1alpha1.ResourceRule{APIGroups: []string{"*"}, Resources: []string{"*"}},
			want: []string{"/v1/configmaps[team-a]", "/v1/secrets[team-a]", "apps/v1/deployments[team-a]",
				"batch/v1/cronjobs[team-a]", "example.com/v2/widgets[team-a]", "rbac.authorization.k8s.io/v1/roles[team-a]"},
		},
		{
			name: "naming an excluded type opts in",
			rule: v1alpha1.ResourceRule{APIGroups: []string{"", "apps"}, Resources: []string{"pods", "replicasets"}},
			want: []string{"/v1/pods[team-a]", "apps/v1/replicasets[team-a]"},
		},
		{
			name: "empty apiGroups means every group",
			rule: v1alpha1.ResourceRule{Resources: []string{"events"}},
			want: []string{"/v1/events[team-a]", "events.k8s.io/v1/events[team-a]"},
		},
		{
			name:       "cluster-scoped type in a WatchRule",
			rule:       v1alpha1.ResourceRule{APIGroups: []string{""}, Resources: []string{"namespaces", "configmaps"}},
			want:       []string{"/v1/configmaps[team-a]"},
			unresolved: []string{`rules[0]: resource "namespaces" in group "" is cluster-scoped and a WatchRule mirrors only its own namespace: use a ClusterWatchRule`},
		},
		{
			name:       "type that is not served",
			rule:       v1alpha1.ResourceRule{APIGroups: []string{"other.io"}, Resources: []string{"gadgets"}},
			unresolved: []string{`rules[0]: resource "gadgets" in group "other.io" is not served by the API server (is its CRD installed?)`},
		},
		{
			name:       "wrong group gets a hint",
			rule:       v1alpha1.ResourceRule{APIGroups: []string{""}, Resources: []string{"deployments"}},
			unresolved: []string{`did you mean resource "deployments" in group "apps"?`},
		},
		{
			name:       "kind instead of plural gets a hint",
			rule:       v1alpha1.ResourceRule{Resources: []string{"ConfigMap"}},
			unresolved: []string{`resource "ConfigMap" is not served by any API group (did you mean resource "configmaps" in group ""?)`},
		},
		{
			name:       "group without resources",
			rule:       v1alpha1.ResourceRule{APIGroups: []string{"other.io"}, Resources: []string{"*"}},
			unresolved: []string{`no resources of group "other.io" are served by the API server`},
		},
		{
			name: "preferred version",
			rule: v1alpha1.ResourceRule{APIGroups: []string{"example.com"}, APIVersions: []string{"*"}, Resources: []string{"widgets"}},
			want: []string{"example.com/v2/widgets[team-a]"},
		},
		{
			name: "named non-preferred version that is served",
			rule: v1alpha1.ResourceRule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}},
			want: []string{"example.com/v1/widgets[team-a]"},
		},
		{
			name: "preferred wins when listed",
			rule: v1alpha1.ResourceRule{APIGroups: []string{"example.com"}, APIVersions: []string{"v1", "v2"}, Resources: []string{"widgets"}},
			want: []string{"example.com/v2/widgets[team-a]"},
		},
		{
			name:       "version not served",
			rule:       v1alpha1.ResourceRule{APIGroups: []string{"example.com"}, APIVersions: []string{"v3"}, Resources: []string{"widgets"}},
			unresolved: []string{`resource "widgets" in group "example.com" is not served at version v3 (served: v2, v1)`},
		},
		{
			name:       "wildcard resources at an unserved version",
			rule:       v1alpha1.ResourceRule{APIGroups: []string{"apps"}, APIVersions: []string{"v9"}, Resources: []string{"*"}},
			unresolved: []string{`no resources of group "apps" are served at version v9`},
		},
		{
			name: "duplicates collapse",
			rule: v1alpha1.ResourceRule{APIGroups: []string{"", "*"}, Resources: []string{"configmaps", "configmaps"}},
			want: []string{"/v1/configmaps[team-a]"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			claims, unresolved, err := CompileWatchRule(watchRule(tc.rule), testCatalog())
			if err != nil {
				t.Fatal(err)
			}
			if got := claimed(claims); !slices.Equal(got, tc.want) {
				t.Errorf("claims = %v, want %v", got, tc.want)
			}
			if len(unresolved) != len(tc.unresolved) {
				t.Fatalf("unresolved = %q, want %d messages like %q", unresolved, len(tc.unresolved), tc.unresolved)
			}
			for i, want := range tc.unresolved {
				if !strings.Contains(unresolved[i], want) {
					t.Errorf("unresolved[%d] = %q, want it to contain %q", i, unresolved[i], want)
				}
			}
			for _, c := range claims {
				if c.Target != (types.NamespacedName{Namespace: "team-a", Name: "t"}) {
					t.Errorf("target = %v", c.Target)
				}
				if c.Operations != AllOperations || !c.Selector.Empty() {
					t.Errorf("filters = %v %v, want everything", c.Operations, c.Selector)
				}
			}
		})
	}
}

func TestCompileWatchRuleFilters(t *testing.T) {
	rule := watchRule(v1alpha1.ResourceRule{
		APIGroups:     []string{""},
		Resources:     []string{"configmaps"},
		Operations:    []v1alpha1.Operation{"CREATE", "DELETE"},
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	})
	claims, _, err := CompileWatchRule(rule, testCatalog())
	if err != nil || len(claims) != 1 {
		t.Fatalf("claims = %v, err = %v", claims, err)
	}
	c := claims[0]
	if c.Operations != OpCreate|OpDelete || c.Operations.String() != "CREATE,DELETE" {
		t.Errorf("operations = %v", c.Operations)
	}
	if c.Selector.String() != "app=web" {
		t.Errorf("selector = %v", c.Selector)
	}
}

func TestCompileRuleErrors(t *testing.T) {
	cases := map[string]v1alpha1.ResourceRule{
		"labelSelector": {Resources: []string{"configmaps"}, LabelSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Sideways"}}}},
		"subresource": {Resources: []string{"deployments/scale"}},
		"operations":  {Resources: []string{"configmaps"}, Operations: []v1alpha1.Operation{"PATCH"}},
	}
	for want, r := range cases {
		claims, _, err := CompileWatchRule(watchRule(v1alpha1.ResourceRule{Resources: []string{"secrets"}}, r), testCatalog())
		if err == nil || !strings.Contains(err.Error(), "rules[1]") || !strings.Contains(err.Error(), want[:5]) || claims != nil {
			t.Errorf("%s: claims %v, err %v", want, claims, err)
		}
	}
	_, _, err := CompileClusterWatchRule(clusterRule(v1alpha1.ClusterResourceRule{
		ResourceRule:      v1alpha1.ResourceRule{Resources: []string{"configmaps"}},
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}},
	}), testCatalog(), nil)
	if err == nil || !strings.Contains(err.Error(), "rules[0].namespaceSelector") {
		t.Errorf("namespaceSelector: err %v", err)
	}
}

func TestCompileClusterWatchRule(t *testing.T) {
	namespaces := []NamespaceInfo{
		{Name: "a2", Labels: map[string]string{"team": "a"}},
		{Name: "b", Labels: map[string]string{"team": "b"}},
		{Name: "a1", Labels: map[string]string{"team": "a"}},
	}
	teamA := &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}
	cases := []struct {
		name       string
		rule       v1alpha1.ClusterResourceRule
		want       []string
		unresolved []string
	}{
		{
			name: "without namespaceSelector: cluster-scoped types only",
			rule: v1alpha1.ClusterResourceRule{ResourceRule: v1alpha1.ResourceRule{APIGroups: []string{"*"}, Resources: []string{"*"}}},
			want: []string{"/v1/namespaces", "rbac.authorization.k8s.io/v1/clusterroles"},
		},
		{
			name:       "without namespaceSelector a named namespaced type is unresolved",
			rule:       v1alpha1.ClusterResourceRule{ResourceRule: v1alpha1.ResourceRule{Resources: []string{"configmaps"}}},
			unresolved: []string{`resource "configmaps" in group "" is namespaced and this rule has no namespaceSelector`},
		},
		{
			name: "namespaceSelector picks namespaces; cluster-scoped types are still claimed",
			rule: v1alpha1.ClusterResourceRule{
				ResourceRule:      v1alpha1.ResourceRule{Resources: []string{"configmaps", "clusterroles"}},
				NamespaceSelector: teamA,
			},
			want: []string{"/v1/configmaps[a1,a2]", "rbac.authorization.k8s.io/v1/clusterroles"},
		},
		{
			name: "empty namespaceSelector selects every namespace",
			rule: v1alpha1.ClusterResourceRule{
				ResourceRule:      v1alpha1.ResourceRule{APIGroups: []string{"apps"}, Resources: []string{"*"}},
				NamespaceSelector: &metav1.LabelSelector{},
			},
			want: []string{"apps/v1/deployments[a1,a2,b]"},
		},
		{
			name: "namespaceSelector matching nothing claims no namespaced type",
			rule: v1alpha1.ClusterResourceRule{
				ResourceRule:      v1alpha1.ResourceRule{Resources: []string{"configmaps"}},
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "z"}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			claims, unresolved, err := CompileClusterWatchRule(clusterRule(tc.rule), testCatalog(), namespaces)
			if err != nil {
				t.Fatal(err)
			}
			if got := claimed(claims); !slices.Equal(got, tc.want) {
				t.Errorf("claims = %v, want %v", got, tc.want)
			}
			if len(unresolved) != len(tc.unresolved) {
				t.Fatalf("unresolved = %q, want %q", unresolved, tc.unresolved)
			}
			for i, want := range tc.unresolved {
				if !strings.Contains(unresolved[i], want) {
					t.Errorf("unresolved[%d] = %q, want it to contain %q", i, unresolved[i], want)
				}
			}
			for _, c := range claims {
				if c.Target != (types.NamespacedName{Namespace: "infra", Name: "t"}) {
					t.Errorf("target = %v", c.Target)
				}
			}
		})
	}
}

func TestParseOperations(t *testing.T) {
	for _, tc := range []struct {
		in   []v1alpha1.Operation
		want OperationSet
	}{
		{nil, AllOperations},
		{[]v1alpha1.Operation{"*"}, AllOperations},
		{[]v1alpha1.Operation{"UPDATE"}, OpUpdate},
		{[]v1alpha1.Operation{"CREATE", "UPDATE", "DELETE"}, AllOperations},
	} {
		got, err := ParseOperations(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseOperations(%v) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if !OpDelete.Has(Deleted) || OpDelete.Has(Created) || AllOperations.Has(ChangeType(0)) {
		t.Error("Has is wrong")
	}
}
