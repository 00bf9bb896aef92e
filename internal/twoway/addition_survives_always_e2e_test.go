//go:build e2e

package twoway

import (
	"testing"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// E8: under prune.mode Always a resync sweeps the documents whose object is not live; a
// file a Git-side push just added is not live yet. The resync taken before the push is
// applied is discarded, so the addition survives and reaches the cluster.
func TestAGitSideAdditionSurvivesAResyncUnderPruneAlways(t *testing.T) {
	eachApplier(t, testAGitSideAdditionSurvivesAResyncUnderPruneAlways)
}

func testAGitSideAdditionSurvivesAResyncUnderPruneAlways(t *testing.T, a gitopsApplier) {
	l := newLoop(t, a)
	var gt v1.GitTarget
	if err := l.cp.Client.Get(l.ctx(), keyOf(l.ns, "apps"), &gt); err != nil {
		t.Fatal(err)
	}
	gt.Spec.Prune.Mode = v1.PruneAlways
	if err := l.cp.Client.Update(l.ctx(), &gt); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the catch-up apply", func() bool { return l.applyStatus().Applied != "" })
	l.appliesSettled()

	a.suspend(l, true)
	added := l.folder + "added.yaml"
	if _, err := l.pushForeign(testenv.ForeignChange{Files: map[string]string{added: configMapDoc(l.ns, "added", "from-git")}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the worker to see Git ahead of the cluster", func() bool { return l.applyStatus().GitAhead })
	l.forceResync()
	waitFor(t, "the resync taken while Git is ahead to be discarded", func() bool { return l.applyStatus().Discarded >= 1 })
	if l.inGit(added) == "" {
		t.Fatal("the resync swept the Git-side addition")
	}
	a.suspend(l, false)
	waitFor(t, "the addition on the cluster", func() bool { return l.live("added") == "from-git" })
	waitFor(t, "Git caught up by the cluster", func() bool { return !l.applyStatus().GitAhead })
	if l.inGit(added) == "" {
		t.Fatal("the Git-side addition was swept after the apply")
	}
}
