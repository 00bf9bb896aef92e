package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
)

// ensureReady fetches the branch once before anything is planned on it.
func (s *branchState) ensureReady(ctx context.Context, now time.Time) bool {
	if s.ready {
		return true
	}
	if now.Before(s.retryAt) {
		return false
	}
	if !s.cfg.Journal.Loaded() {
		return false // the deletes of an earlier run go first (queueJournal)
	}
	rctx, cancel := s.remoteCtx(ctx)
	defer cancel()
	tip, err := s.repo.Fetch(rctx, s.cfg.Branch)
	if err != nil {
		s.backoff(now, err)
		return false
	}
	s.recovered()
	s.ready, s.remoteTip, s.localTip = true, tip, tip
	return true
}

// remoteCtx bounds one call to the remote, so that a server that accepts the connection
// and then stalls cannot hold the loop.
func (s *branchState) remoteCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.RemoteTimeout)
}

// planTurn is how long one turn of the loop decides closed batches before it stops (a
// single batch is never cut): the rest waits for the next turn, after the writes decided so
// far are pushed and the messages that came meanwhile (a status, a stop, a new credential)
// are answered (docs/branch-worker.md#a-bounded-turn).
const planTurn = time.Second

// planClosed decides the closed batches, in order, until planTurn has passed. A batch that
// cannot be written now is held, not dropped (docs/branch-worker.md#held-changes): it waits
// with the target's later windows and is planned again when recheck is set (the recheck
// fetched first, so that a fix pushed to the folder is planned on). A later snapshot of the
// target is planned at once: it supersedes the held changes of its scope and is what
// measures RenderMatchesLive again. A held target is not a failure of the branch: the other
// targets' batches are planned and pushed meanwhile.
func (s *branchState) planClosed(ctx context.Context, now time.Time, recheck bool) {
	continuing := recheck && s.recheckCut
	s.recheckCut = false
	if len(s.closed) == 0 || !s.ensureReady(ctx, now) {
		return
	}
	s.supersede()
	s.coalesceHeld()
	if !continuing {
		for _, b := range s.closed {
			b.rechecked = false
		}
	}
	began := time.Now()
	var parked []*batch
	parkedTarget := map[string]bool{}
	for i, b := range s.closed {
		if i > 0 && time.Since(began) >= planTurn {
			// The turn is over: what is left keeps its place after the parked batches (which
			// came before it). A recheck goes on at the next turn, without fetching again,
			// with the batches it has not reached: those it held again wait for the next one.
			s.closed = append(parked, s.closed[i:]...)
			if recheck {
				s.replanHeld, s.recheckCut = true, true
			}
			return
		}
		rechecking := recheck && !b.rechecked
		b.rechecked = recheck
		if parkedTarget[b.target] && !b.jumpsTheQueue() { // keep one target's windows in order
			s.tellHeld(b)
			parked = append(parked, b)
			continue
		}
		ts := s.targets[b.target]
		if ts == nil {
			s.awaitTarget(b)
			continue
		}
		if ts.heldOrRefused() && !rechecking && !b.jumpsTheQueue() {
			s.tellHeld(b)
			parked = append(parked, b)
			parkedTarget[b.target] = true
			continue
		}
		pw, err := s.decide(ctx, b)
		if err == nil {
			s.noteSnapshotPlanned(b)
		}
		switch {
		case err != nil && keptRefusal(err):
			// Only single objects were refused; they are kept on the target for a retry.
			ts.held = nil
			answer(b.waiters, SaveResult{Err: err})
		case err != nil:
			s.hold(ts, err)
			answerHeld(b, err)
			b.held = true
			parked = append(parked, b)
			parkedTarget[b.target] = true
		case pw == nil:
			ts.held = nil
			answer(b.waiters, SaveResult{NothingCommitted: true, SHA: s.remoteTip})
		default:
			ts.held = nil
			s.pending = append(s.pending, pw)
		}
	}
	s.closed = parked
}

// hold records why a target's batch waits: a refused folder speaks for itself; anything
// else is the target's held reason until a plan of it succeeds.
func (s *branchState) hold(ts *targetState, err error) {
	if ts.folder.refused != nil {
		s.cfg.Metrics.Refused("folder")
		return
	}
	if !alreadyReported(err) {
		s.noteError(err)
		s.cfg.Metrics.Refused("held")
	}
	ts.held = err
}

// alreadyReported reports an error decide already counted and reported on the target (a
// refusal of the render, RenderMatchesLive).
func alreadyReported(err error) bool {
	var r *writeRefusal
	return errors.As(err, &r)
}

// parked reports closed batches held back: a refused folder or a held target.
func (s *branchState) parked() bool {
	for _, b := range s.closed {
		if ts := s.targets[b.target]; ts != nil && ts.heldOrRefused() {
			return true
		}
	}
	return false
}

// push publishes the pending writes with compare-and-swap. When the remote moved it fetches,
// replays the decided actions on the new tip and tries again, up to ReplayAttempts times;
// then it backs off. Pending writes stay until the remote has them.
func (s *branchState) push(ctx context.Context, now time.Time) {
	for attempt := 0; attempt < s.cfg.ReplayAttempts; attempt++ {
		if s.localTip == s.remoteTip {
			s.settle(now)
			return
		}
		rctx, cancel := s.remoteCtx(ctx)
		err := s.repo.Push(rctx, s.cfg.Branch, s.remoteTip, s.localTip)
		cancel()
		if err == nil {
			s.cfg.Metrics.Push("success")
			s.remoteTip = s.localTip
			s.settle(now)
			return
		}
		var moved *gitrepo.RemoteMovedError
		if !errors.As(err, &moved) {
			s.cfg.Metrics.Push("failure")
			s.backoff(now, err)
			return
		}
		s.cfg.Metrics.Push("moved")
		s.cfg.Log.Info("remote branch moved; replaying pending writes", "branch", s.cfg.Branch, "pending", len(s.pending))
		if !s.fetchAndReplay(ctx, now) {
			return
		}
	}
	s.backoff(now, fmt.Errorf("push %s: the remote kept moving during %d replays", s.cfg.Branch, s.cfg.ReplayAttempts))
}

// fetchAndReplay fetches the branch and replays the pending writes on its tip; on failure
// it schedules a retry and returns false.
func (s *branchState) fetchAndReplay(ctx context.Context, now time.Time) bool {
	rctx, cancel := s.remoteCtx(ctx)
	tip, err := s.repo.Fetch(rctx, s.cfg.Branch)
	cancel()
	from := s.remoteTip
	if err == nil {
		err = s.rebuildOn(tip)
	}
	if err == nil {
		s.foreignCommits(from, tip, now)
	}
	if err != nil {
		s.backoff(now, err)
		return false
	}
	return true
}

// settle answers the waiters of pushed writes and clears them.
func (s *branchState) settle(now time.Time) {
	kept := s.pending[:0]
	pushed := false
	for _, pw := range s.pending {
		if !pw.applied {
			kept = append(kept, pw)
			continue
		}
		sha := pw.commit
		if sha == "" {
			sha = s.remoteTip
		}
		pushed = pushed || pw.commit != ""
		s.adopt(pw, now)
		s.firstMirrorLanded(pw)
		s.ended(outcomeWritten, pw.target, pw.actions, false)
		answer(pw.waiters, SaveResult{SHA: sha, Author: pw.author, ByCommitter: pw.author == s.cfg.Committer})
		for _, at := range pw.received {
			s.cfg.Metrics.Published(at, now)
		}
	}
	if pushed {
		s.pushes++
		s.lastPush = now
	}
	s.pending = kept
	if len(kept) == 0 {
		s.recovered()
	}
	s.settleMarks()
}

// hasUnapplied reports pending writes that wait for their folder to be accepted again.
func (s *branchState) hasUnapplied() bool {
	for _, pw := range s.pending {
		if !pw.applied {
			return true
		}
	}
	return false
}

// rebuildOn moves the local tip to a newly fetched remote tip and replays every pending
// write on it. Indexes follow the files that differ between the old and new tip.
func (s *branchState) rebuildOn(tip string) error {
	changed, err := s.repo.ChangedPaths(s.localTip, tip, "")
	if err != nil {
		return err
	}
	for _, ts := range s.targets {
		ts.folder.reindex(tip, changed)
	}
	s.localTip, s.remoteTip = tip, tip
	kept := s.pending[:0]
	for _, pw := range s.pending {
		if err := s.replay(pw); err != nil {
			s.noteError(err)
			ts := s.targets[pw.target]
			var refused *writeRefusal
			if ts == nil || errors.As(err, &refused) {
				// Gone with its target; or refused by the render on the new tip: its changes
				// are kept on the target and tried again when the folder changes.
				if ts != nil {
					s.keepRefused(ts, refusedChanges(pw.actions, pw.target, pw.author, pw.seq))
					s.firstMirrorLanded(pw) // what it could not write is reported and retried
				} else {
					s.count(outcomeReleased, actionChanges(pw.actions))
					s.forgetMarks(pw.target)
				}
				answer(pw.waiters, SaveResult{Err: err})
				continue
			}
		}
		kept = append(kept, pw)
	}
	s.pending = kept
	s.settleMarks()
	s.forgetSupersededRetries()
	for _, ts := range s.targets {
		if ts.folder.changedBy(changed) {
			s.retryRefused(ts, time.Now())
			// Plan the held batches on the new tip at the next tick, without fetching again.
			if ts.heldOrRefused() {
				s.replanHeld, s.recheckCut = true, false // a new tip: every held batch again
			}
		}
	}
	return nil
}

// forgetSupersededRetries drops the kept changes that a later pending write of the same
// target changes again: a write refused on a new tip must not come back over a newer one.
func (s *branchState) forgetSupersededRetries() {
	for _, pw := range s.pending {
		ts := s.targets[pw.target]
		if ts == nil {
			continue
		}
		for _, a := range pw.actions {
			if c, ok := ts.retry[a.id]; ok && c.seq < pw.seq {
				s.forgetKept(ts, a.id)
			}
		}
	}
}

func answer(waiters []chan SaveResult, r SaveResult) {
	for _, w := range waiters {
		w <- r // buffered, one answer each
	}
}
