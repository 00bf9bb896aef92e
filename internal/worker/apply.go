package worker

import (
	"context"
	"math"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// The two-way loop (docs/two-way.md): a target whose folder a GitOps applier (Flux) applies
// names it in TargetConfig.Apply. The worker then asks the applier to apply exact commits of
// the branch, never in the middle of its own writes: an apply is sent only once everything
// the worker holds for the branch is on the remote (flush, then apply), so that the commit
// applied holds every API edit received before it. All of this state is the loop's.

// The kinds of trigger: what ApplyTrigger.Kind holds.
const (
	KindFluxTrigger   = "FluxTrigger"
	KindArgoCDTrigger = "ArgoCDTrigger"
)

// ApplyTrigger names the applier object of a target, by the kind of the trigger that names
// it: a Flux Kustomization (FluxTrigger) or an Argo CD Application (ArgoCDTrigger).
type ApplyTrigger struct {
	Kind            string
	Namespace, Name string
}

// Applier applies an exact commit of branch through the applier object trigger names, and
// returns the revision the applier reports applied (internal/applier).
type Applier interface {
	Apply(ctx context.Context, trigger ApplyTrigger, branch, commit string) (revision string, err error)
}

// applyReason says why an apply is due.
type applyReason string

const (
	// applyForeignCommit: a Git-side push changed the folder.
	applyForeignCommit applyReason = "ForeignCommit"
	// applyCatchUp: the target started naming its applier (at start, or when first set),
	// once its first snapshot is in Git: the applier converges on the branch. Also after a
	// push that created documents, so that the applier adopts the objects.
	applyCatchUp applyReason = "CatchUp"
	// applyRepair: the applier overwrote an edit made during its apply (apply_echo.go).
	applyRepair applyReason = "Repair"
	// applyRefusal: the render refused an API change of an object of a target with
	// onRefusal: Reapply; the applier puts what Git holds back on the cluster.
	applyRefusal applyReason = "Refusal"
)

// DefaultApplyPoll is how often a branch with triggered targets is fetched to find
// Git-side pushes.
const DefaultApplyPoll = 10 * time.Second

// applyState is one target's applies.
type applyState struct {
	// due is why an apply is wanted ("" for none); dueAt when the change that made it due
	// happened (the earliest, when several did before it was sent).
	due   applyReason
	dueAt time.Time
	// sentDueAt is the dueAt of the apply in flight: a failure makes it due again from
	// then, and a success observes the time from then (change_to_applied_seconds).
	sentDueAt time.Time
	// inFlight is the commit of the apply sent and not answered yet ("" for none).
	inFlight string
	// requested and applied are the commits last asked for and last reported applied.
	requested, applied string
	// lastErr is the last failure's text, "" once an apply succeeded.
	lastErr string
	// retryAt is when a failed apply may be sent again; wait spaces the retries.
	retryAt time.Time
	wait    wait.Backoff
	// snapshotPlanned is set once a snapshot batch of the target was planned: a catch-up
	// waits for it, so that work made while the operator was down is in Git first.
	snapshotPlanned bool
	// window is the last apply's window (apply_echo.go), nil before the first.
	window *applyWindow
	// gitAheadSince is when a Git-side push changed the folder that no apply has answered
	// for yet (zero when the cluster holds what Git does; apply_stale.go). sentAt is when
	// the apply in flight was asked.
	gitAheadSince time.Time
	sentAt        time.Time
	// lastAhead is the last span during which Git was ahead, once an apply answered for it:
	// a snapshot taken in it is stale when it arrives later.
	lastAhead aheadSpan
	// discarded counts the target's snapshots discarded for being taken while Git was
	// ahead; lastDiscard is when the last one was.
	discarded   int
	lastDiscard time.Time
}

// applyResult is an applier's answer, sent back to the loop.
type applyResult struct {
	target, commit, revision string
	reason                   applyReason
	err                      error
}

// markApply makes an apply of the target due for reason, for a change made at since,
// unless one is due already.
func (ts *targetState) markApply(reason applyReason, since time.Time) {
	a := &ts.apply
	switch {
	case ts.cfg.Apply == nil:
		return
	case a.due == applyCatchUp && reason != applyCatchUp:
		// A catch-up may wait for the first snapshot; a push or a repair does not, and its
		// apply converges the applier all the same.
		a.due, a.dueAt = reason, earliest(a.dueAt, since)
	case a.due == "":
		a.due, a.dueAt = reason, since
	default:
		a.dueAt = earliest(a.dueAt, since)
	}
}

// earliest is the earlier of two times, the zero time counting as none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// pollRemote fetches the branch every ApplyPoll when some target is triggered, so that a
// Git-side push is found without waiting for a write of the worker's own. The commits
// between the last remote tip and the new one are all foreign: the worker's own pushes
// moved the remote tip as they landed. A triggered target whose folder they changed gets
// an apply.
func (s *branchState) pollRemote(ctx context.Context, now time.Time) {
	if !s.ready || now.Before(s.pollAt) || !s.triggered() {
		return
	}
	s.pollAt = now.Add(s.cfg.ApplyPoll)
	rctx, cancel := s.remoteCtx(ctx)
	tip, err := s.repo.Fetch(rctx, s.cfg.Branch)
	cancel()
	if err != nil || tip == s.remoteTip {
		if err != nil {
			s.noteError(err)
		}
		return
	}
	from := s.remoteTip
	if err := s.rebuildOn(tip); err != nil {
		s.backoff(now, err)
		return
	}
	s.foreignCommits(from, tip, now)
}

// foreignCommits marks an apply due for every triggered target whose folder changed
// between from and to (Git-side pushes).
func (s *branchState) foreignCommits(from, to string, now time.Time) {
	if !s.triggered() {
		return
	}
	changed, err := s.repo.ChangedPaths(from, to, "")
	if err != nil {
		s.noteError(err)
		return
	}
	for _, ts := range s.targets {
		if ts.cfg.Apply != nil && ts.folder.changedBy(changed) {
			ts.markApply(applyForeignCommit, now)
			ts.gitAhead(now)
		}
	}
}

// triggered reports whether some target names an applier.
func (s *branchState) triggered() bool {
	for _, ts := range s.targets {
		if ts.cfg.Apply != nil {
			return true
		}
	}
	return false
}

// startApplies sends the due applies that may go: the target's window is closed at once
// (flush), and the apply waits until nothing of the branch is left to plan or push, so
// that the commit applied holds every change received before it was due.
func (s *branchState) startApplies(ctx context.Context, now time.Time) {
	if s.cfg.Applier == nil || !s.ready {
		return
	}
	for name, ts := range s.targets {
		if !s.mayApply(ts, now) {
			continue
		}
		if s.window != nil && s.window.target == name {
			s.closeWindow(windowCloseFor(ts.apply.due))
		}
		if s.flushing(name) {
			continue
		}
		a := &ts.apply
		commit, reason := s.remoteTip, a.due
		a.inFlight, a.requested, a.due, a.sentAt, a.sentDueAt = commit, commit, "", now, a.dueAt
		a.window = a.window.next(commit, now)
		go s.sendApply(ctx, name, *ts.cfg.Apply, commit, reason)
	}
}

// windowCloseFor is the reason a window closes for an apply due for reason.
func windowCloseFor(reason applyReason) closeReason {
	if reason == applyForeignCommit {
		return closeForeignCommit
	}
	return closeApplyDue
}

// mayApply reports whether the target's due apply may go once its changes are flushed:
// the branch is fetched, an applier is wired and named, no apply of the target is in flight
// or backing off, and a catch-up has its first snapshot planned.
func (s *branchState) mayApply(ts *targetState, now time.Time) bool {
	a := &ts.apply
	return s.ready && s.cfg.Applier != nil && ts.cfg.Apply != nil && a.due != "" && a.inFlight == "" &&
		!now.Before(a.retryAt) && (a.due != applyCatchUp || a.snapshotPlanned)
}

// flushing reports whether the target still has changes to plan, or the branch commits to
// push. Held batches and writes waiting for their folder do not count: they wait for a
// person, and an apply must not wait with them (another target's held changes least of all).
func (s *branchState) flushing(target string) bool {
	if s.localTip != s.remoteTip {
		return true
	}
	if s.window != nil && s.window.target == target {
		return true
	}
	return slices.ContainsFunc(s.closed, func(b *batch) bool { return b.target == target && !b.held })
}

// applyDue reports whether some triggered target's apply waits only for the branch to be
// flushed: its pushes then skip the cooldown.
func (s *branchState) applyDue() bool {
	now := time.Now()
	for _, ts := range s.targets {
		if s.mayApply(ts, now) {
			return true
		}
	}
	return false
}

// sendApply runs one apply outside the loop and hands its answer back.
func (s *branchState) sendApply(ctx context.Context, target string, trigger ApplyTrigger, commit string, reason applyReason) {
	revision, err := s.cfg.Applier.Apply(ctx, trigger, s.cfg.Branch, commit)
	select {
	case s.applyResults <- applyResult{target: target, commit: commit, revision: revision, reason: reason, err: err}:
	case <-ctx.Done():
	}
}

// applied records an applier's answer.
func (s *branchState) applied(r applyResult, now time.Time) {
	ts := s.targets[r.target]
	if ts == nil || ts.apply.inFlight != r.commit {
		return // the target went, or was set again, meanwhile
	}
	a := &ts.apply
	a.inFlight = ""
	if a.window != nil && a.window.commit == r.commit {
		a.window.until = now.Add(applyGrace)
	}
	if ts.cfg.Apply == nil {
		return // the target stopped naming an applier meanwhile
	}
	if r.err != nil {
		s.cfg.Metrics.ApplyRequest(string(r.reason), "failure")
		a.lastErr = r.err.Error()
		if a.wait.Steps == 0 {
			a.wait = wait.Backoff{Duration: s.cfg.RetryMin, Factor: 2, Cap: s.cfg.RetryMax, Steps: math.MaxInt32}
		}
		a.retryAt = now.Add(a.wait.Step())
		ts.markApply(r.reason, a.sentDueAt)
		s.cfg.Log.Info("the applier did not apply the branch; retrying", "target", r.target, "commit", r.commit, "error", a.lastErr, "at", a.retryAt)
		return
	}
	s.cfg.Metrics.ApplyRequest(string(r.reason), "success")
	if !a.sentDueAt.IsZero() { // zero when the target was set again while the apply was out
		s.cfg.Metrics.ChangeApplied(string(r.reason), now.Sub(a.sentDueAt))
	}
	a.applied, a.lastErr, a.wait, a.retryAt = r.revision, "", wait.Backoff{}, time.Time{}
	ts.caughtUp(a.sentAt, now)
}

// adopt makes an apply due for a triggered target whose pushed write created documents: the
// applier then takes the objects made through the API into its inventory, so that a
// Git-side delete of one of them prunes it (and no snapshot writes it back).
func (s *branchState) adopt(pw *pendingWrite, now time.Time) {
	ts := s.targets[pw.target]
	if ts == nil || ts.cfg.Apply == nil || pw.commit == "" {
		return
	}
	for _, a := range pw.actions {
		if a.created {
			ts.markApply(applyCatchUp, earliest(now, earliestOf(pw.received)))
			return
		}
	}
}

// earliestOf is the earliest of times, zero for none.
func earliestOf(times []time.Time) time.Time {
	var at time.Time
	for _, t := range times {
		at = earliest(at, t)
	}
	return at
}

// noteSnapshotPlanned lets a catch-up of the target go once its first snapshot is planned.
func (s *branchState) noteSnapshotPlanned(b *batch) {
	if ts := s.targets[b.target]; ts != nil && len(b.snapshots) > 0 {
		ts.apply.snapshotPlanned = true
	}
}

// applyWake is when startApplies next has something to decide.
func (s *branchState) applyWake(now time.Time) (time.Time, bool) {
	// A due apply wakes the loop when its backoff ends; one that waits for the flush is
	// woken by the pushes and plans that make it (their own wakes), not by a timer.
	var at time.Time
	found := false
	for name, ts := range s.targets {
		a := ts.apply
		if a.due == "" || a.inFlight != "" || !now.Before(a.retryAt) {
			if s.mayApply(ts, now) && !s.flushing(name) && (!found || now.Before(at)) {
				at, found = now, true
			}
			continue
		}
		if ts.cfg.Apply != nil && (!found || a.retryAt.Before(at)) {
			at, found = a.retryAt, true
		}
	}
	if s.triggered() && s.ready && (!found || s.pollAt.Before(at)) {
		at, found = s.pollAt, true
	}
	return at, found
}

// applyStatus reports the target's applies.
func (ts *targetState) applyStatus() ApplyStatus {
	a := ts.apply
	st := ApplyStatus{Due: string(a.due), InFlight: a.inFlight, Requested: a.requested, Applied: a.applied, LastError: a.lastErr,
		GitAhead: !a.gitAheadSince.IsZero(), Discarded: a.discarded}
	// Once the cluster caught up (or snapshots are written again past staleBound), the
	// discards are to be made good: the number of the last one, which the router renews
	// the target's subscriptions for once.
	if !a.lastDiscard.IsZero() && (a.gitAheadSince.IsZero() || time.Since(a.gitAheadSince) > staleBound) {
		st.Resnapshot = uint64(a.lastDiscard.UnixNano()) // grows across workers of one process
	}
	return st
}

// ApplyStatus is what a triggered target's applies are doing.
type ApplyStatus struct {
	// Due is why an apply waits ("" for none); InFlight the commit being applied.
	Due, InFlight string
	// Requested and Applied are the commit last asked for and the revision last applied.
	Requested, Applied string
	// LastError is the last failure, "" once an apply succeeded.
	LastError string
	// GitAhead is set while a Git-side push to the folder waits for its apply.
	GitAhead bool
	// Resnapshot, when not zero, numbers the last snapshot discarded while Git was ahead:
	// a new one is wanted now (the router renews the subscriptions once per number).
	Resnapshot uint64
	// Discarded counts the snapshots discarded for being taken while Git was ahead.
	Discarded int
}
