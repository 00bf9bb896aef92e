package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

func TestAProviderAdmitsItsOwnNamespaceAndWhatAccessFromMatches(t *testing.T) {
	provider := func(af *v1.NamespaceMatcher) *v1.GitProvider {
		return &v1.GitProvider{ObjectMeta: metav1.ObjectMeta{Namespace: "platform", Name: "git"}, Spec: v1.GitProviderSpec{AccessFrom: af}}
	}
	byLabel := &v1.NamespaceMatcher{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"mirror": "yes"}}}
	cases := []struct {
		name   string
		p      *v1.GitProvider
		ns     string
		labels map[string]string
		want   bool
	}{
		{"own namespace without accessFrom", provider(nil), "platform", nil, true},
		{"other namespace without accessFrom", provider(nil), "team-a", nil, false},
		{"listed by name", provider(&v1.NamespaceMatcher{Namespaces: []string{"team-a"}}), "team-a", nil, true},
		{"not listed", provider(&v1.NamespaceMatcher{Namespaces: []string{"team-a"}}), "team-b", nil, false},
		{"labels match", provider(byLabel), "team-c", map[string]string{"mirror": "yes"}, true},
		{"labels do not match", provider(byLabel), "team-c", map[string]string{"mirror": "no"}, false},
		{"empty selector matches all", provider(&v1.NamespaceMatcher{NamespaceSelector: &metav1.LabelSelector{}}), "any", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := admits(c.p, c.ns, c.labels)
			if err != nil || got != c.want {
				t.Fatalf("admits = %v, %v; want %v", got, err, c.want)
			}
		})
	}
	bad := provider(&v1.NamespaceMatcher{NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bogus"}}}})
	if _, err := admits(bad, "x", nil); err == nil {
		t.Fatal("an invalid selector was accepted")
	}
}
