//go:build e2e

package controller_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

func TestChangesWhileStoppedLandInOneCommitPerTargetAfterRestart(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	op := startOperator(t, cp.Config, t.TempDir())
	providerWithSecret(t, ns, "origin", r)
	always := target(ns, "always", "origin", "always", v1.PruneAlways)
	onEvent := target(ns, "on-event", "origin", "on-event", v1.PruneOnEvent)
	create(t, always)
	create(t, onEvent)
	create(t, watchRule(ns, "cms-always", "always", configMapsRule()))
	create(t, watchRule(ns, "cms-on-event", "on-event", configMapsRule()))
	targetReady(t, always)
	targetReady(t, onEvent)
	for _, name := range []string{"a", "b", "c"} {
		create(t, configMap(ns, name, map[string]string{"v": "1"}))
	}
	cmPath := func(folder, name string) string { return folder + "/" + ns + "/core/configmaps/" + name + ".yaml" }
	waitFor(t, "a, b and c in both folders", func() bool {
		return r.has(cmPath("always", "c")) && r.has(cmPath("on-event", "c")) && r.has(cmPath("always", "a")) && r.has(cmPath("on-event", "a"))
	})
	op.stop(t)
	before := len(r.log())

	create(t, configMap(ns, "d", map[string]string{"v": "1"}))
	var a corev1.ConfigMap
	if err := cp.Client.Get(ctxOf(t), keyOf(ns, "a"), &a); err != nil {
		t.Fatal(err)
	}
	a.Data["v"] = "2"
	if err := cp.Client.Update(ctxOf(t), &a); err != nil {
		t.Fatal(err)
	}
	if err := cp.Client.Delete(ctxOf(t), configMap(ns, "b", nil)); err != nil {
		t.Fatal(err)
	}

	startOperator(t, cp.Config, t.TempDir())
	waitFor(t, "both folders to match the cluster", func() bool {
		return r.has(cmPath("always", "d")) && r.has(cmPath("on-event", "d")) &&
			strings.Contains(r.file(cmPath("always", "a")), "v: \"2\"") && strings.Contains(r.file(cmPath("on-event", "a")), "v: \"2\"") &&
			!r.has(cmPath("always", "b"))
	})
	if !r.has(cmPath("on-event", "b")) {
		t.Fatal("prune OnEvent: a sweep after the restart deleted b")
	}
	waitFor(t, "the retained document counted", func() bool {
		return cp.Client.Get(ctxOf(t), keyOf(ns, "on-event"), onEvent) == nil && onEvent.Status.RetainedDocuments == 1
	})
	log := r.log()
	if got := len(log) - before; got != 2 {
		t.Fatalf("%d commits after the restart, want one per target: %q", got, subjects(log[:len(log)-before]))
	}
}
