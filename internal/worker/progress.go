package worker

import (
	"sync"
	"time"
)

// ProgressPhase is where a target's first mirror is (docs/controllers.md#progress).
type ProgressPhase string

const (
	// ProgressWaiting: the target is set; its first snapshot has not reached the worker.
	ProgressWaiting ProgressPhase = "Waiting"
	// ProgressWriting: the worker plans the first snapshot into the folder.
	ProgressWriting ProgressPhase = "Writing"
	// ProgressPushing: the first snapshot is committed, not yet on the remote.
	ProgressPushing ProgressPhase = "Pushing"
	// ProgressMirrored: the first snapshot is on the remote (or wrote nothing).
	ProgressMirrored ProgressPhase = "Mirrored"
)

// Progress is how far a target's first mirror has come: the objects its first snapshot
// listed (Seen) and how many of them the worker has planned into the folder (Written).
type Progress struct {
	Phase         ProgressPhase
	Seen, Written int
}

// ProgressBoard holds the progress of every target's first mirror. Each branch worker
// writes the entries of its own targets; readers (the GitTarget's status) read them
// without waiting for a worker that is busy planning a large snapshot — the reason the
// board exists beside Status. Safe for concurrent use.
type ProgressBoard struct {
	mu      sync.Mutex
	by      map[string]Progress
	owners  map[string]*branchState // the worker that wrote each entry last
	changed map[string]struct{}
	signal  chan struct{}
}

// NewProgressBoard returns an empty board.
func NewProgressBoard() *ProgressBoard {
	return &ProgressBoard{by: map[string]Progress{}, owners: map[string]*branchState{}, changed: map[string]struct{}{},
		signal: make(chan struct{}, 1)}
}

func (b *ProgressBoard) set(owner *branchState, target string, p Progress) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.owners[target] = owner
	if b.by[target] == p {
		b.mu.Unlock()
		return
	}
	b.by[target] = p
	b.changed[target] = struct{}{}
	b.mu.Unlock()
	select {
	case b.signal <- struct{}{}:
	default: // a signal is already waiting; it covers this target too
	}
}

// forget drops the entry of a target its worker let go, unless another worker (of the
// branch the target moved to) has written it since.
func (b *ProgressBoard) forget(owner *branchState, target string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.owners[target] != owner {
		return
	}
	delete(b.by, target)
	delete(b.owners, target)
	delete(b.changed, target)
}

// Get returns a target's progress; false when no worker has it.
func (b *ProgressBoard) Get(target string) (Progress, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.by[target]
	return p, ok
}

// Ready is signalled after a change; Take then returns the changed entries.
func (b *ProgressBoard) Ready() <-chan struct{} { return b.signal }

// Take returns the entries changed since the last Take and forgets that they changed.
func (b *ProgressBoard) Take() map[string]Progress {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]Progress, len(b.changed))
	for name := range b.changed {
		out[name] = b.by[name]
	}
	clear(b.changed)
	return out
}

// progressLogEvery is how often a first mirror's counts are logged while it is planned.
const progressLogEvery = 5 * time.Second

// firstMirror follows the planning of a target's first snapshot.
type firstMirror struct {
	of             *batch // the batch that holds the first snapshot
	seen, written  int
	shown, logged  time.Time
	committedAtSeq uint64 // the pending write that carries it, once committed
}

// beginFirstMirror starts following a batch that holds the target's first snapshot (again,
// when an earlier plan of it ended without a write).
func (s *branchState) beginFirstMirror(ts *targetState, b *batch) {
	if ts.mirrored || len(b.snapshots) == 0 || (ts.first != nil && ts.first.committedAtSeq != 0) {
		return
	}
	seen := len(b.events)
	for _, snap := range b.snapshots {
		seen += len(snap.Objects)
	}
	now := time.Now()
	ts.first = &firstMirror{of: b, seen: seen, shown: now, logged: now}
	s.cfg.Progress.set(s, ts.cfg.Name, Progress{Phase: ProgressWriting, Seen: seen})
}

// planned counts one more object of a first mirror, showing and logging the counts now and
// then: the loop is busy until the whole snapshot is planned.
func (s *branchState) planned(ts *targetState) {
	m := ts.first
	if m == nil || m.committedAtSeq != 0 {
		return
	}
	m.written++
	now := time.Now()
	if now.Sub(m.shown) >= s.cfg.ProgressEvery {
		m.shown = now
		s.cfg.Progress.set(s, ts.cfg.Name, Progress{Phase: ProgressWriting, Seen: m.seen, Written: m.written})
	}
	if now.Sub(m.logged) >= progressLogEvery {
		m.logged = now
		s.cfg.Log.Info("first mirror of the target in progress", "target", ts.cfg.Name, "written", m.written, "seen", m.seen)
	}
}

// firstMirrorDecided ends the planning of the batch b: when it holds the first mirror, that
// is committed by pw, or was mirrored already when pw commits nothing.
func (s *branchState) firstMirrorDecided(ts *targetState, b *batch, pw *pendingWrite) {
	m := ts.first
	if m == nil || m.of != b || m.committedAtSeq != 0 {
		return
	}
	m.of = nil // the batch is decided: nothing of it is held here any more
	if pw == nil || pw.commit == "" {
		s.firstMirrored(ts)
		return
	}
	m.committedAtSeq = pw.seq
	s.cfg.Progress.set(s, ts.cfg.Name, Progress{Phase: ProgressPushing, Seen: m.seen, Written: m.seen})
}

// firstMirrorLanded is told of a write that is done with: pushed, or dropped on replay
// with its changes kept and reported. The first mirror it carries has been through the
// folder.
func (s *branchState) firstMirrorLanded(pw *pendingWrite) {
	ts := s.targets[pw.target]
	if ts != nil && ts.first != nil && ts.first.committedAtSeq == pw.seq {
		s.firstMirrored(ts)
	}
}

func (s *branchState) firstMirrored(ts *targetState) {
	seen := ts.first.seen
	ts.first, ts.mirrored = nil, true
	s.cfg.Progress.set(s, ts.cfg.Name, Progress{Phase: ProgressMirrored, Seen: seen, Written: seen})
	s.cfg.Log.Info("first mirror of the target done", "target", ts.cfg.Name, "objects", seen)
}
