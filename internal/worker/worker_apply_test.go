package worker

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gitops-reverser/gitops-reverser/internal/metrics"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// applyLog stands in for Flux at the Applier interface (the real one is tested against
// Flux in internal/applier and internal/twoway): it records the commits asked for and
// answers when release says so.
type applyLog struct {
	mu      sync.Mutex
	asked   []string
	release chan struct{} // nil answers at once
}

func (a *applyLog) Apply(ctx context.Context, _ ApplyTrigger, _, commit string) (string, error) {
	a.mu.Lock()
	a.asked = append(a.asked, commit)
	release := a.release
	a.mu.Unlock()
	if release != nil {
		select {
		case <-release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return "main@sha1:" + commit, nil
}

// hold makes the next applies wait for release to be closed.
func (a *applyLog) hold() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.release = make(chan struct{})
}

func (a *applyLog) commits() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.asked...)
}

var fluxApps = &ApplyTrigger{Kind: "FluxTrigger", Namespace: "flux-system", Name: "apps"}

func triggeredRig(t *testing.T, applier *applyLog) *rig {
	t.Helper()
	r := newRig(t, func(c *Config) { c.Applier, c.ApplyPoll = applier, 50*time.Millisecond })
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent, Apply: fluxApps})
	if err := r.worker.Resync(r.ctx(), teamASnapshot(listed("first", "1"))); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the catch-up apply after the first snapshot", func() bool { return len(applier.commits()) == 1 })
	return r
}

// A Git-side push into a triggered folder asks one apply of the new tip; an edit the
// worker writes asks none.
func TestAGitSidePushAsksAnApplyAndAnEditNone(t *testing.T) {
	applier := &applyLog{}
	r := triggeredRig(t, applier)
	r.settled()

	r.submit(upsert("alice", "team-a", "first", "2"))
	r.waitFor("the edit in Git", func() bool { return r.file(cmPath("team-a", "first")) == string(configMap("team-a", "first", "2")) })
	tip, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Files: map[string]string{cmPath("team-a", "pushed"): string(configMap("team-a", "pushed", "1"))}})
	if err != nil {
		t.Fatal(err)
	}
	r.waitFor("the apply of the pushed commit", func() bool {
		c := applier.commits()
		return len(c) > 1 && c[len(c)-1] == tip
	})
	if c := applier.commits(); len(c) != 2 {
		t.Fatalf("applies %v: want the catch-up and the pushed commit only (the edit asks none)", c)
	}
}

// A target that stops naming its applier while an apply is in flight forgets it: the late
// answer is ignored, and nothing more is asked.
func TestATargetThatStopsNamingItsApplierForgetsItsApplies(t *testing.T) {
	applier := &applyLog{release: make(chan struct{})}
	r := newRig(t, func(c *Config) { c.Applier, c.ApplyPoll = applier, 50*time.Millisecond })
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent, Apply: fluxApps})
	if err := r.worker.Resync(r.ctx(), teamASnapshot(listed("first", "1"))); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the catch-up apply in flight", func() bool { return len(applier.commits()) == 1 })
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent})
	close(applier.release)
	if _, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Files: map[string]string{cmPath("team-a", "pushed"): string(configMap("team-a", "pushed", "1"))}}); err != nil {
		t.Fatal(err)
	}
	r.submit(upsert("alice", "team-a", "later", "1"))
	r.waitFor("a later write", func() bool { return r.hasFile(cmPath("team-a", "later")) })
	st := r.settled()
	if _, ok := st.Applies["team/live"]; ok || len(applier.commits()) != 1 {
		t.Fatalf("applies %v, status %+v: want nothing after the trigger went", applier.commits(), st.Applies)
	}
}

// Another target's held changes do not hold a triggered target's apply back.
func TestAnotherTargetsHeldChangesDoNotHoldAnApply(t *testing.T) {
	applier := &applyLog{}
	r := triggeredRig(t, applier)
	if _, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Files: map[string]string{
		"clusters/other/kustomization.yaml": "resources:\n- missing.yaml\n", // the folder does not build
	}}); err != nil {
		t.Fatal(err)
	}
	r.setTarget(TargetConfig{Name: "team/other", Path: "clusters/other", Prune: PruneOnEvent})
	r.submit(Event{Target: "team/other", Author: Author{Name: "bob"}, Op: OpUpsert, Type: configMapType,
		ID: upsert("", "team-b", "held", "1").ID, Doc: configMap("team-b", "held", "1")})
	r.waitStatus("the other target's change held", func(st Status) bool { return st.Refused["team/other"] != "" || st.Held["team/other"] != "" })
	tip, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Files: map[string]string{cmPath("team-a", "pushed"): string(configMap("team-a", "pushed", "1"))}})
	if err != nil {
		t.Fatal(err)
	}
	r.waitFor("the apply of the pushed commit", func() bool {
		c := applier.commits()
		return c[len(c)-1] == tip
	})
}

// pushTo makes a Git-side commit of one ConfigMap document into the target's folder.
func pushTo(t *testing.T, r *rig, name, value string) string {
	t.Helper()
	tip, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Files: map[string]string{cmPath("team-a", name): string(configMap("team-a", name, value))}})
	if err != nil {
		t.Fatal(err)
	}
	return tip
}

// pushWhileApplyHeld holds the applier's answers, pushes a Git-side commit of one document
// into the target's folder and waits until the worker sees Git ahead and the push's apply is
// in flight.
func pushWhileApplyHeld(t *testing.T, r *rig, applier *applyLog, name, value string) string {
	t.Helper()
	applier.hold()
	tip := pushTo(t, r, name, value)
	r.waitStatus("Git ahead, the push's apply in flight", func(st Status) bool {
		a := st.Applies["team/live"]
		return a.GitAhead && a.InFlight != ""
	})
	return tip
}

// A snapshot taken while a Git-side push waits for its apply is discarded (it would write
// the pushed object back as it was), and asked for again once the apply answered.
func TestASnapshotTakenWhileGitIsAheadIsDiscardedAndAskedAgain(t *testing.T) {
	applier := &applyLog{}
	r := triggeredRig(t, applier)
	r.settled()
	pushWhileApplyHeld(t, r, applier, "first", "from-git")
	if err := r.worker.Resync(r.ctx(), teamASnapshot(listed("first", "1"))); err != nil {
		t.Fatal(err)
	}
	st := r.waitStatus("the snapshot discarded", func(st Status) bool { return st.Applies["team/live"].Discarded == 1 })
	if st.Applies["team/live"].Resnapshot != 0 {
		t.Fatalf("a new snapshot asked for while Git is still ahead: %+v", st.Applies["team/live"])
	}
	if got := r.file(cmPath("team-a", "first")); got != string(configMap("team-a", "first", "from-git")) {
		t.Fatalf("the stale snapshot reverted the push: %q", got)
	}
	close(applier.release)
	r.waitStatus("a new snapshot asked for once the apply answered", func(st Status) bool {
		a := st.Applies["team/live"]
		return !a.GitAhead && a.Resnapshot != 0
	})
}

// Inside an apply window, the applier's write over an object someone edited is withheld,
// and a Repair apply of the commit holding the edit follows.
func TestAnApplierOverwriteOfAnEditIsWithheldAndRepaired(t *testing.T) {
	applier := &applyLog{}
	r := triggeredRig(t, applier)
	r.settled()
	pushWhileApplyHeld(t, r, applier, "other", "1")

	edit := upsert("alice", "team-a", "first", "edited")
	edit.Managers = []string{"kubectl-edit"}
	r.submit(edit)
	overwrite := upsert("flux", "team-a", "first", "1")
	overwrite.Managers = []string{"kustomize-controller"}
	r.submit(overwrite)
	r.waitFor("the edit in Git", func() bool {
		return r.file(cmPath("team-a", "first")) == string(configMap("team-a", "first", "edited"))
	})
	close(applier.release)
	r.waitFor("a repair apply of the commit holding the edit", func() bool {
		c := applier.commits()
		st, err := r.worker.Status(r.ctx())
		return err == nil && len(c) >= 3 && c[len(c)-1] == st.RemoteTip
	})
	st := r.settled()
	if got := r.file(cmPath("team-a", "first")); got != string(configMap("team-a", "first", "edited")) {
		t.Fatalf("the applier's overwrite was mirrored: %q", got)
	}
	if st.Applies["team/live"].Due != "" {
		t.Fatalf("applies %+v after the repair", st.Applies["team/live"])
	}
}

// The applier's write landing its apply is not mirrored: when a Git-side push deleted the
// object's document after the commit being applied, mirroring the landing would write the
// document back and undo the push (E2, as CI once found it).
func TestTheApplierLandingItsApplyDoesNotUndoAGitSideDelete(t *testing.T) {
	applier := &applyLog{}
	r := triggeredRig(t, applier)
	r.settled()
	pushWhileApplyHeld(t, r, applier, "other", "1")
	deleted, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Delete: []string{cmPath("team-a", "first")}})
	if err != nil {
		t.Fatal(err)
	}
	r.waitStatus("the Git-side delete fetched", func(st Status) bool { return st.RemoteTip == deleted })

	landing := upsert("flux", "team-a", "first", "1")
	landing.Managers = []string{"kustomize-controller"}
	r.submit(landing)
	r.submit(upsert("alice", "team-a", "later", "1"))
	r.waitFor("a later write", func() bool { return r.hasFile(cmPath("team-a", "later")) })
	if r.hasFile(cmPath("team-a", "first")) {
		t.Fatalf("the applier's landing wrote back the document a Git-side push deleted")
	}
	close(applier.release)
	r.settled()
}

// A Git-side push to a triggered folder closes the target's open window at once (flush,
// then apply), counted foreign_commit: the edit it held is in Git before the apply goes.
func TestAGitSidePushClosesTheTargetsWindowForItsApply(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	applier := &applyLog{}
	r := newRig(t, func(c *Config) {
		c.Applier, c.ApplyPoll, c.Metrics, c.CommitWindow = applier, 50*time.Millisecond, m, time.Hour
		c.MaxWindowAge = time.Hour
	})
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent, Apply: fluxApps})
	if err := r.worker.Resync(r.ctx(), teamASnapshot(listed("first", "1"))); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the catch-up apply after the first snapshot", func() bool { return len(applier.commits()) == 1 })

	r.submit(upsert("alice", "team-a", "first", "2"))
	r.waitStatus("the edit held in the open window", func(st Status) bool { return st.Ledger.Open == 1 })
	tip := pushTo(t, r, "pushed", "1")
	r.waitFor("the apply of a commit after the push", func() bool { return len(applier.commits()) == 2 })
	if got := r.file(cmPath("team-a", "first")); got != string(configMap("team-a", "first", "2")) {
		t.Fatalf("the apply went before the window's edit was in Git: %q", got)
	}
	if applied := applier.commits()[1]; applied == tip {
		t.Fatalf("the pushed commit %s was applied without the edit on top", tip)
	}
	if n := counterValue(t, reg, "gitops_reverser_window_closes_total", "reason", "foreign_commit"); n != 1 {
		t.Fatalf("window_closes_total{reason=\"foreign_commit\"} = %v, want 1", n)
	}
}

// The time from a Git-side push to the applier's answer that applied it is observed, by
// reason, once per successful apply, and not before the answer.
func TestTheTimeFromAChangeToItsApplyIsObserved(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	applier := &applyLog{}
	r := newRig(t, func(c *Config) { c.Applier, c.ApplyPoll, c.Metrics = applier, 50*time.Millisecond, m })
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent, Apply: fluxApps})
	if err := r.worker.Resync(r.ctx(), teamASnapshot(listed("first", "1"))); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the catch-up apply", func() bool { return len(applier.commits()) == 1 })
	r.settled()
	if n := histogramCount(t, reg, "gitops_reverser_change_to_applied_seconds", "reason", "CatchUp"); n != 1 {
		t.Fatalf("%d catch-up observations, want 1", n)
	}
	pushed := time.Now()
	pushWhileApplyHeld(t, r, applier, "first", "from-git")
	if n := histogramCount(t, reg, "gitops_reverser_change_to_applied_seconds", "reason", "ForeignCommit"); n != 0 {
		t.Fatalf("%d observations before the apply answered, want 0", n)
	}
	close(applier.release)
	r.waitStatus("the push applied", func(st Status) bool { return st.Applies["team/live"].InFlight == "" })
	sum, n := histogramOf(t, reg, "gitops_reverser_change_to_applied_seconds", "reason", "ForeignCommit")
	if n != 1 || sum > time.Since(pushed).Seconds() {
		t.Fatalf("observed %d applies of the push, %vs in all (at most %vs since it): want 1, from the fetch that found it", n, sum, time.Since(pushed).Seconds())
	}
}

// histogramCount reads the sample count of family{label="value"}.
func histogramCount(t *testing.T, reg *prometheus.Registry, family, label, value string) uint64 {
	t.Helper()
	_, n := histogramOf(t, reg, family, label, value)
	return n
}

// histogramOf reads the sum and the sample count of the histogram family{label="value"}.
func histogramOf(t *testing.T, reg *prometheus.Registry, family, label, value string) (float64, uint64) {
	t.Helper()
	m := metricOf(t, reg, family, label, value)
	return m.GetHistogram().GetSampleSum(), m.GetHistogram().GetSampleCount()
}
