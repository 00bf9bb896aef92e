package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/ownership"
	"github.com/go-logr/logr"
)

// Worker is the handle of one branch worker. Its methods send messages to the loop.
type Worker struct {
	inbox chan any
	// stopping is closed when the loop stops taking messages in (before its last drain),
	// done once it has stopped.
	stopping chan struct{}
	done     chan struct{}
	state    *branchState // touched only by run
	// parked is a message taken from the inbox by handleQueued that waits for the next tick
	// (touched only by run).
	parked any
	// journal stamps what is handed over and records deletes (Config.Journal); log is
	// cfg.Log, for the callers' goroutines.
	journal *Journal
	log     logr.Logger
	// id is the worker's number in the journal's inbox marks.
	id uint64
}

// ErrStopped is returned by calls made after the worker stopped.
var ErrStopped = errors.New("branch worker stopped")

// messages to the loop
type (
	eventMsg    struct{ ev Event }
	snapshotMsg struct {
		target string
		snaps  []Snapshot
	}
	targetMsg struct {
		cfg    TargetConfig
		remove bool
	}
	saveMsg struct {
		target, message string
		reply           chan SaveResult
	}
	statusMsg struct{ reply chan Status }
	// probeMsg asks whether no window is open and nothing waits to be planned.
	probeMsg struct{ reply chan bool }
)

// New prepares a worker: it checks the branch against the allowed globs and opens the
// local copy. It does not touch the network; Run does.
func New(cfg Config) (*Worker, error) {
	cfg.applyDefaults()
	if err := ownership.ValidBranch(cfg.Branch); err != nil {
		return nil, err
	}
	if !ownership.BranchAllowed(cfg.AllowedBranches, cfg.Branch) {
		return nil, fmt.Errorf("branch %q is not allowed: it matches none of the GitProvider's allowedBranches %q", cfg.Branch, cfg.AllowedBranches)
	}
	msgs, err := newMessages(cfg.MessageTemplate, cfg.ResyncTemplate)
	if err != nil {
		return nil, err
	}
	var signer *gitrepo.CommitSigner
	if len(cfg.SigningKey) > 0 {
		if signer, err = gitrepo.NewCommitSigner(cfg.SigningKey); err != nil {
			return nil, err
		}
	}
	repo, err := gitrepo.Open(cfg.Dir, cfg.URL, cfg.Credentials)
	if err != nil {
		return nil, err
	}
	repo.LimitFileSize(cfg.MaxFileBytes)
	id := cfg.Journal.newWorker()
	return &Worker{
		id:       id,
		journal:  cfg.Journal,
		log:      cfg.Log,
		inbox:    make(chan any, 1024),
		stopping: make(chan struct{}),
		done:     make(chan struct{}),
		state: &branchState{cfg: cfg, repo: repo, messages: msgs, signer: signer, targets: map[string]*targetState{}, reported: map[string]reportedState{},
			branchLabel: branchLabel(cfg), applyResults: make(chan applyResult, 16), worker: id},
	}, nil
}

// Start creates a worker and runs its loop until ctx ends.
func Start(ctx context.Context, cfg Config) (*Worker, error) {
	w, err := New(cfg)
	if err != nil {
		return nil, err
	}
	go w.Run(ctx)
	return w, nil
}

// Done is closed when the loop has stopped.
func (w *Worker) Done() <-chan struct{} { return w.done }

// send puts m in the inbox. A message that entered the inbox after the loop began its last
// drain may never be handled: the caller is told the worker stopped (and may hand it to the
// next worker); one that entered before is drained, so a message both drained and reported
// stopped is possible, and harmless (a stopped worker releases what it receives).
func (w *Worker) send(ctx context.Context, m any) error {
	select {
	case <-w.stopping:
		return ErrStopped
	default:
	}
	select {
	case w.inbox <- m:
	case <-w.stopping:
		return ErrStopped
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-w.stopping:
		return ErrStopped
	default:
		return nil
	}
}

// Submit hands one event to the worker. It blocks while the inbox is full (events are
// never dropped) and, at the start, until the journal of deletes is loaded. A delete is
// recorded in the journal before it enters the inbox, so that it outlives this worker
// whatever becomes of the message (docs/branch-worker.md#restart).
func (w *Worker) Submit(ctx context.Context, ev Event) error {
	seq, err := w.journal.stamp(ctx, w.done)
	if err != nil {
		return err
	}
	ev.seq = seq
	if ev.Op == OpDelete && !w.journal.record(ev, w.id) {
		w.log.Info("the journal of deletes is full: this delete is written as usual, but not kept across a restart",
			"target", ev.Target, "object", ev.ID.String(), "limit", MaxJournalEntries)
	}
	err = w.send(ctx, eventMsg{ev})
	if err != nil && ev.Op == OpDelete {
		w.journal.received(ev.Target, ev.ID, ev.seq) // it never entered the inbox
	}
	return err
}

// Resync hands snapshots of one target's scopes to the worker. Snapshots given together
// are planned together and land in one commit.
func (w *Worker) Resync(ctx context.Context, snaps ...Snapshot) error {
	if len(snaps) == 0 {
		return nil
	}
	for _, snap := range snaps[1:] {
		if snap.Target != snaps[0].Target {
			return fmt.Errorf("resync: snapshots of %s and %s given together; one call holds one GitTarget", snaps[0].Target, snap.Target)
		}
	}
	seq, err := w.journal.stamp(ctx, w.done)
	if err != nil {
		return err
	}
	snaps = slices.Clone(snaps)
	for i := range snaps {
		snaps[i].seq = seq
	}
	return w.send(ctx, snapshotMsg{target: snaps[0].Target, snaps: snaps})
}

// SetTarget adds or updates a GitTarget writing this branch; the journal records its
// deletes again if it was forgotten.
func (w *Worker) SetTarget(ctx context.Context, cfg TargetConfig) error {
	w.journal.revive(cfg.Name)
	return w.send(ctx, targetMsg{cfg: cfg})
}

// RemoveTarget forgets a GitTarget.
func (w *Worker) RemoveTarget(ctx context.Context, name string) error {
	return w.send(ctx, targetMsg{cfg: TargetConfig{Name: name}, remove: true})
}

// Save closes the open window of target now, with message, and answers once the commit is
// on the remote (a CommitRequest).
func (w *Worker) Save(ctx context.Context, target, message string) (<-chan SaveResult, error) {
	reply := make(chan SaveResult, 1)
	if err := w.send(ctx, saveMsg{target: target, message: message, reply: reply}); err != nil {
		return nil, err
	}
	return reply, nil
}

// Status returns a snapshot of the worker's state.
func (w *Worker) Status(ctx context.Context) (Status, error) {
	reply := make(chan Status, 1)
	if err := w.send(ctx, statusMsg{reply}); err != nil {
		return Status{}, err
	}
	select {
	case st := <-reply:
		return st, nil
	case <-w.done:
		return Status{}, ErrStopped
	case <-ctx.Done():
		return Status{}, ctx.Err()
	}
}

// Run is the event loop. It returns when ctx ends, after a last attempt to commit and push
// what is pending.
func (w *Worker) Run(ctx context.Context) {
	defer close(w.done)
	s := w.state
	defer s.cfg.Metrics.ForgetBranch(s.branchLabel)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		s.tick(ctx, now)
		s.checkLedger("tick")
		s.publishChanges()
		s.publishOpen(now)
		if m := w.parked; m != nil && ctx.Err() == nil {
			w.parked = nil
			s.handle(m, time.Now())
			s.checkLedger(m)
			w.handleQueued()
			continue
		}
		resetTimer(timer, s.nextWake(now).Sub(now))
		inbox := w.inbox
		if w.parked != nil {
			inbox = nil // stopping: nothing sent after the parked message goes before it
		}
		select {
		case <-ctx.Done():
			s.shutdown()
			s.checkLedger("shutdown")
			close(w.stopping)
			w.drain()
			return
		case m := <-inbox:
			s.handle(m, time.Now())
			s.checkLedger(m)
			w.handleQueued()
			s.cfg.Metrics.QueueDepth(s.branchLabel, len(w.inbox))
		case r := <-s.applyResults:
			s.applied(r, time.Now())
			s.checkLedger("applied")
		case <-timer.C:
		}
	}
}

// maxHandledPerTick bounds the messages handled between two ticks, so that a stream that
// keeps the inbox full still has its windows closed and its writes pushed.
const maxHandledPerTick = 1024

// handleQueued handles the events and snapshots already waiting in the inbox before the
// next tick: what arrived while the loop planned or pushed goes into the next commits and
// the next push together, instead of one plan and one push per message. Any other message
// (a status, a save, a target) is parked until after that tick, so that it still sees
// everything sent before it planned, as when every message had its own tick.
func (w *Worker) handleQueued() {
	for range maxHandledPerTick - 1 {
		if w.parked != nil {
			return
		}
		select {
		case m := <-w.inbox:
			switch m.(type) {
			case eventMsg, snapshotMsg:
				w.state.handle(m, time.Now())
				w.state.checkLedger(m)
			default:
				w.parked = m
				return
			}
		default:
			return
		}
	}
}

// drain answers what is left in the inbox after the loop stopped, so that no caller waits
// forever. Events left there are re-derived by the next snapshot after a restart
// (docs/branch-worker.md#restart).
func (w *Worker) drain() {
	if m := w.parked; m != nil {
		w.parked = nil
		w.release(m)
	}
	for {
		select {
		case m := <-w.inbox:
			w.release(m)
		default:
			return
		}
	}
}

// release answers one message a stopped loop received.
func (w *Worker) release(m any) {
	switch m := m.(type) {
	case eventMsg, snapshotMsg:
		// Received by a stopped worker: ended at once, as what it held was.
		w.state.handle(m, time.Now())
		w.state.releaseAll()
		w.state.checkLedger("release")
	case saveMsg:
		m.reply <- SaveResult{Err: ErrStopped}
	case statusMsg:
		m.reply <- w.state.status()
	case probeMsg:
		m.reply <- false
	}
}

func resetTimer(t *time.Timer, d time.Duration) {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	if d < 0 {
		d = 0
	}
	t.Reset(d)
}
