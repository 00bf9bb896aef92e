//go:build e2e

package controller_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
)

func TestBadInputIsReportedAndEveryOtherTargetKeepsServing(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	startOperator(t, cp.Config, t.TempDir())
	providerWithSecret(t, ns, "good", r)
	good := target(ns, "good", "good", "good", v1.PruneOnEvent)
	create(t, good)
	create(t, watchRule(ns, "cms", "good", configMapsRule()))
	targetReady(t, good)

	orphan := target(ns, "orphan", "missing", "orphan", v1.PruneOnEvent)
	create(t, orphan)
	cond := waitCondition(t, orphan, func() []metav1.Condition { return orphan.Status.Conditions }, v1.ConditionReady, metav1.ConditionFalse, v1.ReasonProviderNotFound)
	if !strings.Contains(cond.Message, ns+"/missing") {
		t.Fatalf("the message does not name the missing GitProvider: %q", cond.Message)
	}

	// Another repository, so that the targets below do not compete for the good branch.
	if err := r.server.CreateRepo("elsewhere.git"); err != nil {
		t.Fatal(err)
	}
	elsewhere := r.http.URL("elsewhere.git")
	noSecret := &v1.GitProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-secret"}, Spec: v1.GitProviderSpec{
		URL: elsewhere, SecretRef: &v1.LocalObjectReference{Name: "absent"}, AllowedBranches: []string{"main"}}}
	create(t, noSecret)
	cond = waitCondition(t, noSecret, func() []metav1.Condition { return noSecret.Status.Conditions }, v1.ConditionReady, metav1.ConditionFalse, controller.ReasonSecretNotFound)
	if !strings.Contains(cond.Message, "absent") {
		t.Fatalf("the message does not name the missing Secret: %q", cond.Message)
	}
	other := target(ns, "uses-no-secret", "no-secret", "other", v1.PruneOnEvent)
	create(t, other)
	waitCondition(t, other, func() []metav1.Condition { return other.Status.Conditions }, v1.ConditionReady, metav1.ConditionFalse, controller.ReasonProviderNotReady)
	// The Secret arrives: the provider and its target recover without a restart.
	create(t, secretWith(ns, "absent", map[string]string{"username": "bot", "password": "s3cret-pass"}))
	waitCondition(t, noSecret, func() []metav1.Condition { return noSecret.Status.Conditions }, v1.ConditionReady, metav1.ConditionTrue, "")
	targetReady(t, other)

	wrong := providerWithSecret(t, ns, "wrong", r, func(p *v1.GitProvider) {
		p.Spec.URL, p.Spec.SecretRef.Name = elsewhere, "wrong-password"
	})
	create(t, secretWith(ns, "wrong-password", map[string]string{"username": "bot", "password": "not-the-password"}))
	cond = waitCondition(t, wrong, func() []metav1.Condition { return wrong.Status.Conditions }, v1.ConditionReady, metav1.ConditionFalse, controller.ReasonRemoteUnreachable)
	if strings.Contains(cond.Message, "not-the-password") {
		t.Fatalf("a condition shows the password: %q", cond.Message)
	}

	rule := watchRule(ns, "unknown", "good", v1.ResourceRule{APIGroups: []string{"example.invalid"}, Resources: []string{"gadgets"}})
	create(t, rule)
	cond = waitCondition(t, rule, func() []metav1.Condition { return rule.Status.Conditions }, v1.ConditionValidated, metav1.ConditionFalse, controller.ReasonResourcesUnresolved)
	if !strings.Contains(cond.Message, "gadgets") {
		t.Fatalf("the message does not name the unknown resource: %q", cond.Message)
	}

	// The longest name Kubernetes allows still reaches Git, in a file name filesystems accept.
	long := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61)
	create(t, configMap(ns, long, map[string]string{"k": "long"}))
	create(t, configMap(ns, "after-the-long-one", map[string]string{"k": "v"}))
	waitFor(t, "the ConfigMap after the long one", func() bool { return r.has("good/" + ns + "/core/configmaps/after-the-long-one.yaml") })
	found := false
	for _, f := range r.files() {
		base := f[strings.LastIndex(f, "/")+1:]
		if len(base) > 255 {
			t.Fatalf("file name of %d bytes: %s", len(base), f)
		}
		found = found || strings.Contains(r.file(f), "name: "+long)
	}
	if !found {
		t.Fatal("the ConfigMap with a 253-character name is not in Git")
	}
	targetReady(t, good)
}
