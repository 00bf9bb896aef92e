//go:build e2e

package controller_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

func TestOneBranchOneOwnerAndAccessFromAdmitsOtherNamespaces(t *testing.T) {
	home := newNamespace(t, nil)
	guest := newNamespace(t, nil)
	stranger := newNamespace(t, nil)
	r := newRepo(t)
	workDir := t.TempDir()
	startOperator(t, cp.Config, workDir)

	providerWithSecret(t, home, "shared", r, func(p *v1.GitProvider) {
		p.Spec.AccessFrom = &v1.NamespaceMatcher{Namespaces: []string{guest}}
	})
	// The same repository, spelled differently, through a second provider.
	providerWithSecret(t, home, "second", r, func(p *v1.GitProvider) { p.Spec.URL = strings.TrimSuffix(p.Spec.URL, ".git") })

	first := target(home, "first", "shared", "first", v1.PruneOnEvent)
	create(t, first)
	create(t, watchRule(home, "cms-first", "first", configMapsRule()))
	targetReady(t, first)

	younger := target(home, "younger", "second", "younger", v1.PruneOnEvent)
	create(t, younger)
	cond := waitCondition(t, younger, func() []metav1.Condition { return younger.Status.Conditions }, v1.ConditionReady, metav1.ConditionFalse, v1.ReasonTargetConflict)
	if !strings.Contains(cond.Message, home+"/shared") {
		t.Fatalf("the conflict does not name the GitProvider to share: %q", cond.Message)
	}

	admitted := target(guest, "guest", "shared", "guest", v1.PruneOnEvent)
	admitted.Spec.GitProviderRef.Namespace = home
	create(t, admitted)
	create(t, watchRule(guest, "cms-guest", "guest", configMapsRule()))
	targetReady(t, admitted)
	create(t, configMap(guest, "from-guest", map[string]string{"k": "v"}))
	waitFor(t, "the guest namespace's ConfigMap", func() bool { return r.has("guest/" + guest + "/core/configmaps/from-guest.yaml") })

	refused := target(stranger, "stranger", "shared", "stranger", v1.PruneOnEvent)
	refused.Spec.GitProviderRef.Namespace = home
	create(t, refused)
	cond = waitCondition(t, refused, func() []metav1.Condition { return refused.Status.Conditions }, v1.ConditionReady, metav1.ConditionFalse, v1.ReasonNamespaceNotAuthorized)
	if !strings.Contains(cond.Message, "accessFrom") {
		t.Fatalf("the refusal does not say how to admit the namespace: %q", cond.Message)
	}

	// The owner keeps writing through all of this.
	create(t, configMap(home, "still-served", map[string]string{"k": "v"}))
	waitFor(t, "the owner's ConfigMap", func() bool { return r.has("first/" + home + "/core/configmaps/still-served.yaml") })
	for _, f := range r.files() {
		if strings.HasPrefix(f, "younger/") || strings.HasPrefix(f, "stranger/") {
			t.Fatalf("a refused target wrote %s", f)
		}
	}
	// One branch, one worker: one local copy, whichever provider spelled the URL.
	copies, err := os.ReadDir(filepath.Join(workDir, "branches"))
	if err != nil || len(copies) != 1 {
		t.Fatalf("%d local copies of one branch (%v), want 1", len(copies), err)
	}
}
