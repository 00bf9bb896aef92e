package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// handle applies one message to the state.
func (s *branchState) handle(m any, now time.Time) {
	switch m := m.(type) {
	case eventMsg:
		m.ev.changes = 1
		s.count(outcomeReceived, 1)
		if m.ev.Op == OpDelete {
			s.cfg.Journal.received(m.ev.Target, m.ev.ID, m.ev.seq)
		}
		if s.foreignEvent(m.ev) || s.echo(m.ev, now) {
			return
		}
		s.addEvent(m.ev, now)
	case snapshotMsg:
		s.withoutForeign(m.target, m.snaps)
		b := &batch{target: m.target, author: s.cfg.Committer, reason: closeResync}
		for i := range m.snaps {
			b.snapshots = append(b.snapshots, &m.snaps[i])
		}
		s.count(outcomeReceived, b.changes())
		if s.staleSnapshot(m.target, takenAt(m.snaps), now) {
			s.cfg.Metrics.StaleSnapshot("discarded")
			s.count(outcomeSuperseded, b.changes()) // by the snapshot asked for after the apply
			return
		}
		s.closeWindow(closeResync)
		s.closed = append(s.closed, b)
	case targetMsg:
		s.setTarget(m.cfg, m.remove)
	case saveMsg:
		s.save(m)
	case statusMsg:
		m.reply <- s.status()
	case probeMsg:
		m.reply <- s.window == nil && !s.waitingToPlan()
	}
}

// takenAt is the earliest time the snapshots were taken, zero when one is unknown.
func takenAt(snaps []Snapshot) time.Time {
	var at time.Time
	for i, snap := range snaps {
		if snap.TakenAt.IsZero() {
			return time.Time{}
		}
		if i == 0 || snap.TakenAt.Before(at) {
			at = snap.TakenAt
		}
	}
	return at
}

func (s *branchState) addEvent(ev Event, now time.Time) {
	if s.window != nil && !s.window.accepts(ev) {
		s.closeWindow(closeOtherAuthor)
	}
	if s.window == nil {
		s.window = newWindow(ev, now)
	} else {
		s.window.add(ev, now)
	}
	switch {
	case s.cfg.CommitWindow == 0:
		s.closeWindow(closeZeroWindow)
	case s.window.full(&s.cfg):
		s.closeWindow(closeSizeCap)
	}
}

func (s *branchState) closeWindow(reason closeReason) {
	if s.window == nil {
		return
	}
	b := s.window.batch
	b.reason = reason
	s.closed = append(s.closed, &b)
	s.window = nil
	s.cfg.Metrics.WindowClosed(string(reason))
}

// save closes the target's open window with the request's message. When the target's
// last window already closed but is not on the remote yet, the request waits for it.
func (s *branchState) save(m saveMsg) {
	if s.window == nil || s.window.target != m.target {
		if reason := s.heldReason(m.target); reason != "" {
			m.reply <- SaveResult{Held: reason}
			return
		}
		if waiters := s.unpublishedWaiters(m.target); waiters != nil {
			*waiters = append(*waiters, m.reply)
			return
		}
		m.reply <- SaveResult{NothingCommitted: true, SHA: s.remoteTip}
		return
	}
	s.window.message = m.message
	s.window.waiters = append(s.window.waiters, m.reply)
	s.closeWindow(closeSave)
}

// unpublishedWaiters returns the waiter list of the target's newest batch or pending write
// that is not on the remote yet, or nil.
func (s *branchState) unpublishedWaiters(target string) *[]chan SaveResult {
	for i := len(s.closed) - 1; i >= 0; i-- {
		if s.closed[i].target == target {
			return &s.closed[i].waiters
		}
	}
	for i := len(s.pending) - 1; i >= 0; i-- {
		if s.pending[i].target == target {
			return &s.pending[i].waiters
		}
	}
	return nil
}

// releaseTarget forgets a GitTarget removed from the branch, and releases what the worker
// holds of it: its window, batches and kept changes (its deletes stay in the journal).
func (s *branchState) releaseTarget(name string) {
	if s.window != nil && s.window.target == name {
		s.closeWindow(closeStop)
	}
	kept := s.closed[:0]
	for _, b := range s.closed {
		if b.target != name {
			kept = append(kept, b)
			continue
		}
		s.count(outcomeReleased, b.changes())
		answer(b.waiters, SaveResult{Err: fmt.Errorf("GitTarget %s was removed from this branch", name)})
	}
	s.closed = kept
	if ts := s.targets[name]; ts != nil {
		s.count(outcomeReleased, ts.keptChanges())
	}
	delete(s.targets, name)
	s.cfg.Progress.forget(s, name)
	s.forgetAwaiting(name)
	s.forgetMarks(name)
}

func (s *branchState) setTarget(cfg TargetConfig, remove bool) {
	if remove {
		s.releaseTarget(cfg.Name)
		return
	}
	if ts, ok := s.targets[cfg.Name]; ok && ts.folder.prefix == tree.Folder(cfg.Path) {
		named := cfg.Apply != nil && (ts.cfg.Apply == nil || *ts.cfg.Apply != *cfg.Apply)
		ts.cfg = cfg
		if cfg.Apply == nil {
			// No applier any more: nothing is due; an answer still on its way is ignored.
			ts.apply = applyState{inFlight: ts.apply.inFlight, snapshotPlanned: ts.apply.snapshotPlanned}
		}
		if named {
			ts.markApply(applyCatchUp, time.Now()) // the target names (another) applier
		}
		return
	}
	ts := &targetState{cfg: cfg, folder: newFolder(s.repo, cfg.Path), journalDue: true, journalSince: time.Now()}
	ts.markApply(applyCatchUp, time.Now())
	s.targets[cfg.Name] = ts
	s.cfg.Progress.set(s, cfg.Name, Progress{Phase: ProgressWaiting})
	s.releaseAwaiting(cfg.Name)
}

// tick does the work that is due: close a silent or old window, plan closed batches,
// push pending writes once the cooldown and any backoff have passed.
func (s *branchState) tick(ctx context.Context, now time.Time) {
	if s.window != nil {
		if at, reason := s.window.deadline(&s.cfg); !now.Before(at) {
			s.closeWindow(reason)
		}
	}
	// Fetch the branch as soon as the worker starts, not only once something is to be
	// written: a target reports Ready only when its remote answered.
	if s.ensureReady(ctx, now) {
		s.queueJournal(now)
		s.pollRemote(ctx, now)
	}
	s.planClosed(ctx, now, s.recheck(ctx, now))
	if len(s.pending) > 0 && !now.Before(s.nextPushAt()) {
		s.push(ctx, now)
	}
	s.mergePacks()
	s.startApplies(ctx, now)
	s.scheduleNextRecheck(now)
}

// mergePacks lets the local copy merge its packs, at the end of the loop's turn, after its
// push, so that the writes of this turn do not wait for it (docs/branch-worker.md#objects-in-packs).
// A failure costs nothing but more packs to read: it is logged, and tried again after more
// commits.
func (s *branchState) mergePacks() {
	if err := s.repo.MergePacks(); err != nil {
		s.cfg.Log.Error(err, "merging the local copy's packs failed", "branch", s.cfg.Branch)
	}
}

// nextWake is when tick has something to do next.
func (s *branchState) nextWake(now time.Time) time.Time {
	wake := now.Add(time.Hour)
	if s.window != nil {
		if at, _ := s.window.deadline(&s.cfg); at.Before(wake) {
			wake = at
		}
	}
	// Held batches wait for the recheck below, not for the branch's retry; batches left by a
	// turn's end are planned at once (planning needs no remote, and a push's backoff must not
	// hold it).
	switch {
	case s.ready && s.waitingToPlan():
		wake = now
	case !s.ready && s.retryAt.Before(wake):
		wake = s.retryAt
	}
	if !s.ready && !s.cfg.Journal.Loaded() {
		wake = now.Add(journalPoll) // nothing to retry yet: look at the journal again soon
	}
	if at, ok := s.journalWake(); ok && s.ready && at.Before(wake) {
		wake = at
	}
	if at, ok := s.nextRecheck(); ok && at.Before(wake) {
		wake = at
	}
	if at, ok := s.applyWake(now); ok && at.Before(wake) {
		wake = at
	}
	if s.pushable() {
		if at := s.nextPushAt(); at.Before(wake) {
			wake = at
		}
	}
	return wake
}

// pushable reports pending writes a push would publish: the local tip is ahead, or a write
// is waiting for its answer. Unapplied writes alone wait for their recheck.
func (s *branchState) pushable() bool {
	if s.localTip != s.remoteTip {
		return true
	}
	for _, pw := range s.pending {
		if pw.applied {
			return true
		}
	}
	return false
}

// shutdown commits the open window and tries one last push, bounded in time. What does
// not make it is re-derived from the cluster's snapshot at the next start
// (docs/branch-worker.md#restart).
func (s *branchState) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.closeWindow(closeStop)
	now := time.Now()
	s.retryAt = time.Time{}
	s.planClosed(ctx, now, s.recheck(ctx, now))
	if len(s.pending) > 0 {
		s.push(ctx, now)
	}
	for _, b := range append(s.closed, s.awaiting...) {
		answer(b.waiters, SaveResult{Err: ErrStopped})
	}
	for _, pw := range s.pending {
		answer(pw.waiters, SaveResult{Err: ErrStopped})
	}
	s.releaseAll()
}

// releaseAll ends, as released, every change a stopping worker still holds: the next
// worker's snapshot derives the upserts again, and the journal of deletes keeps the deletes
// (docs/branch-worker.md#restart).
func (s *branchState) releaseAll() {
	s.count(outcomeReleased, s.openChanges())
	s.window, s.closed, s.awaiting, s.pending = nil, nil, nil, nil
	for _, ts := range s.targets {
		ts.retry = nil
	}
}

func (s *branchState) status() Status {
	st := Status{
		Ready:        s.ready,
		RemoteTip:    s.remoteTip,
		PendingWrite: len(s.pending),
		Refused:      map[string]string{},
		Boundary:     map[string]string{},
		Held:         map[string]string{},
		Fidelity:     map[string]Fidelity{},
		Retained:     map[string]int{},
		Applies:      map[string]ApplyStatus{},
		Pushes:       s.pushes,
		LastPush:     s.lastPush,
		Failures:     s.failures,
		RetryAt:      s.retryAt,
		NextPushAt:   s.nextPushAt(),
		RecheckAt:    s.recheckTime(),
		Ledger:       s.ledgerNow(),
	}
	if s.lastErr != nil {
		st.LastError = s.lastErr.Error()
	}
	if s.signer != nil {
		st.SigningPublicKey = s.signer.PublicKey()
	}
	for name, ts := range s.targets {
		if ts.folder.refused != nil {
			st.Refused[name] = ts.folder.refused.Error()
		}
		for _, n := range ts.retained {
			st.Retained[name] += n
		}
		if ts.boundary != "" {
			st.Boundary[name] = ts.boundary
		}
		if ts.held != nil && ts.folder.refused == nil {
			st.Held[name] = ts.held.Error()
		}
		st.Fidelity[name] = ts.fidelity.status()
		if ts.cfg.Apply != nil {
			st.Applies[name] = ts.applyStatus()
		}
	}
	return st
}
