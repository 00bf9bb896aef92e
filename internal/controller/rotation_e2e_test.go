//go:build e2e

package controller_test

import (
	"fmt"
	"strings"
	"testing"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
)

func TestAChangedProviderReplacesTheWorkerAndEveryTargetOfTheBranchLosesNothing(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	startOperator(t, cp.Config, t.TempDir())
	provider := providerWithSecret(t, ns, "origin", r)
	one := target(ns, "one", "origin", "one", v1.PruneOnEvent)
	two := target(ns, "two", "origin", "two", v1.PruneOnEvent)
	create(t, one)
	create(t, two)
	create(t, watchRule(ns, "cms-one", "one", configMapsRule()))
	create(t, watchRule(ns, "cms-two", "two", configMapsRule()))
	targetReady(t, one)
	targetReady(t, two)
	create(t, configMap(ns, "before", map[string]string{"k": "v"}))
	waitFor(t, "the first ConfigMap in both folders", func() bool {
		return r.has("one/"+ns+"/core/configmaps/before.yaml") && r.has("two/"+ns+"/core/configmaps/before.yaml")
	})

	// A new committer is a new worker configuration: the branch's worker is replaced while
	// changes keep coming.
	if err := cp.Client.Get(ctxOf(t), keyOf(ns, "origin"), provider); err != nil {
		t.Fatal(err)
	}
	provider.Spec.Commit.Committer = &v1.Identity{Name: "Rotated Bot", Email: "rotated@example.com"}
	if err := cp.Client.Update(ctxOf(t), provider); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		create(t, configMap(ns, fmt.Sprintf("during-%d", i), map[string]string{"k": "v"}))
	}
	waitFor(t, "every ConfigMap in both folders", func() bool {
		for i := range 10 {
			for _, folder := range []string{"one", "two"} {
				if !r.has(fmt.Sprintf("%s/%s/core/configmaps/during-%d.yaml", folder, ns, i)) {
					return false
				}
			}
		}
		return true
	})
	create(t, configMap(ns, "after", map[string]string{"k": "v"}))
	waitFor(t, "a commit by the new committer", func() bool {
		log := r.log()
		return len(log) > 0 && strings.HasPrefix(log[0].Author, "Rotated Bot") && r.has("two/"+ns+"/core/configmaps/after.yaml")
	})
}
