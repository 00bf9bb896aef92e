//go:build e2e

package controller_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

func TestCutAPIServerConnectionsLoseAndDuplicateNothing(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	proxy, proxied := testenv.StartAPIServerProxy(t, cp.Config)
	startOperator(t, proxied, t.TempDir())
	providerWithSecret(t, ns, "origin", r)
	gt := target(ns, "live", "origin", "live", v1.PruneAlways)
	create(t, gt)
	create(t, watchRule(ns, "cms", "live", configMapsRule()))
	targetReady(t, gt)
	cmPath := func(name string) string { return "live/" + ns + "/core/configmaps/" + name + ".yaml" }
	create(t, configMap(ns, "kept", map[string]string{"v": "1"}))
	create(t, configMap(ns, "edited", map[string]string{"v": "1"}))
	create(t, configMap(ns, "deleted", map[string]string{"v": "1"}))
	waitFor(t, "the three ConfigMaps", func() bool { return r.has(cmPath("kept")) && r.has(cmPath("edited")) && r.has(cmPath("deleted")) })
	keptBefore := r.file(cmPath("kept"))

	proxy.SetDown(true)
	proxy.Cut()
	var edited corev1.ConfigMap
	if err := cp.Client.Get(ctxOf(t), keyOf(ns, "edited"), &edited); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"2", "3", "4"} {
		edited.Data["v"] = v
		if err := cp.Client.Update(ctxOf(t), &edited); err != nil {
			t.Fatal(err)
		}
	}
	if err := cp.Client.Delete(ctxOf(t), configMap(ns, "deleted", nil)); err != nil {
		t.Fatal(err)
	}
	create(t, configMap(ns, "created", map[string]string{"v": "1"}))
	proxy.SetDown(false)

	waitFor(t, "Git to match the cluster after the gap", func() bool {
		return r.has(cmPath("created")) && !r.has(cmPath("deleted")) && strings.Contains(r.file(cmPath("edited")), `v: "4"`)
	})
	if got := r.file(cmPath("kept")); got != keptBefore {
		t.Fatalf("an untouched object's document changed:\n%s", got)
	}
	// No document twice: every ConfigMap has exactly one file.
	count := 0
	for _, f := range r.files() {
		if strings.Contains(r.file(f), "name: edited") {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("the edited ConfigMap has %d documents", count)
	}
}
