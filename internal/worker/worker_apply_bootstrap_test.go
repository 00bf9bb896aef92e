package worker

import (
	"testing"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// A triggered target whose folder holds no object gets its bootstrap files written when
// its first snapshot lists nothing, before its first apply: the applier never syncs a
// path missing from the branch. An untriggered target with nothing to write commits nothing.
func TestAnEmptyTriggeredFolderIsBootstrappedBeforeItsFirstApply(t *testing.T) {
	applier := &applyLog{}
	r := newRig(t, func(c *Config) { c.Applier, c.ApplyPoll = applier, 50*time.Millisecond })
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent, Apply: fluxApps})
	r.setTarget(TargetConfig{Name: "team/other", Path: "clusters/other", Prune: PruneOnEvent})
	if err := r.worker.Resync(r.ctx(), teamASnapshot()); err != nil {
		t.Fatal(err)
	}
	other := teamASnapshot()
	other.Target = "team/other"
	if err := r.worker.Resync(r.ctx(), other); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the catch-up apply", func() bool { return len(applier.commits()) == 1 })
	st := r.settled()
	if applied := applier.commits()[0]; applied != st.RemoteTip {
		t.Fatalf("applied %s, want the tip %s", applied, st.RemoteTip)
	}
	if !r.hasFile("clusters/dev/README.md") {
		t.Fatal("the applied commit has no clusters/dev folder")
	}
	if r.hasFile("clusters/other/README.md") {
		t.Fatal("an untriggered target with nothing to write was bootstrapped")
	}

	// The folder exists now: a later empty snapshot writes nothing.
	pushes := st.Pushes
	if err := r.worker.Resync(r.ctx(), teamASnapshot()); err != nil {
		t.Fatal(err)
	}
	if st := r.settled(); st.Pushes != pushes {
		t.Fatalf("%d pushes after an empty snapshot of a bootstrapped folder, want %d", st.Pushes, pushes)
	}
}

// The bootstrap write of an empty triggered folder, replayed on a Git-side push that came
// first, is written again on the new tip (a replay of a write with no object would
// otherwise find nothing to commit and drop it).
func TestABootstrapOvertakenByAGitSidePushIsReplayed(t *testing.T) {
	applier := &applyLog{}
	r := newRig(t, func(c *Config) { c.Applier, c.ApplyPoll = applier, time.Hour })
	r.http.RefusePushes(1) // every push fails until the Git-side push is in
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent, Apply: fluxApps})
	if err := r.worker.Resync(r.ctx(), teamASnapshot()); err != nil {
		t.Fatal(err)
	}
	r.waitStatus("the bootstrap committed, its push refused", func(st Status) bool { return st.PendingWrite == 1 && st.Failures > 0 })
	if _, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Files: map[string]string{"other/notes.md": "elsewhere\n"}}); err != nil {
		t.Fatal(err)
	}
	r.http.RefusePushes(0)
	r.waitFor("the bootstrap replayed and pushed", func() bool { return r.hasFile("clusters/dev/README.md") })
	if !r.hasFile("other/notes.md") {
		t.Fatal("the Git-side push was lost")
	}
	r.waitFor("the catch-up apply of the tip", func() bool { return len(applier.commits()) == 1 })
}
