//go:build e2e

package controller_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

// A GitTarget shows how far its first mirror has come — the phase, the objects listed and
// written — in its status and in `kubectl get gittargets` (docs/controllers.md#progress).
func TestAGitTargetShowsTheProgressOfItsFirstMirror(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	startOperator(t, cp.Config, t.TempDir())
	for i := range 12 {
		create(t, configMap(ns, fmt.Sprintf("cm-%02d", i), map[string]string{"k": "v"}))
	}
	providerWithSecret(t, ns, "origin", r)
	gt := target(ns, "live", "origin", "live", v1.PruneOnEvent)
	create(t, gt)
	create(t, watchRule(ns, "cms", "live", configMapsRule()))

	var last *v1.MirrorProgress
	waitFor(t, "the first mirror to be Mirrored in the status", func() bool {
		if err := cp.Client.Get(ctxOf(t), keyOf(ns, "live"), gt); err != nil {
			return false
		}
		last = gt.Status.Progress
		return last != nil && last.Phase == "Mirrored"
	})
	if last.ObjectsSeen != 12 || last.ObjectsWritten != 12 {
		t.Fatalf("the status shows %+v, want 12 objects seen and written", *last)
	}
	if !r.has("live/" + ns + "/core/configmaps/cm-11.yaml") {
		t.Fatal("Mirrored, but the last object is not in Git")
	}

	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	if err := cp.Client.Get(ctxOf(t), keyOf("", "gittargets.gitops-reverser.io"), crd); err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	columns := map[string]string{}
	for _, version := range versions {
		list, _, _ := unstructured.NestedSlice(version.(map[string]any), "additionalPrinterColumns")
		for _, c := range list {
			m := c.(map[string]any)
			columns[fmt.Sprint(m["name"])] = fmt.Sprint(m["jsonPath"])
		}
	}
	if columns["Phase"] != ".status.progress.phase" || columns["Written"] != ".status.progress.objectsWritten" {
		t.Fatalf("kubectl get gittargets does not show the progress: columns %v", columns)
	}
}
