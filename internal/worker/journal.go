package worker

import (
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// The journal of deletes (docs/branch-worker.md#restart): a DELETE event is the one change
// a new worker cannot derive again from the cluster, since the next snapshot no longer
// lists the object and, under prune: OnEvent, does not sweep. Every delete a worker
// receives is recorded here until a change of its object ends written or unchanged; a
// worker that starts, or gets a target set, queues the target's recorded deletes before
// anything else of it. The journal outlives workers (one per operator, shared by every
// branch) and is persisted by its owner outside the worker (internal/pipeline); it never
// blocks a worker.

// MaxJournalEntries bounds the journal (its persisted form must fit one ConfigMap). A
// delete received while it is full is still written as usual, but not kept across a
// restart; the worker logs it.
const MaxJournalEntries = 4000

// JournalEntry is one recorded delete.
type JournalEntry struct {
	// Seq orders the entry with the other changes of its object (Journal.stamp).
	Seq    uint64
	Target string
	Author Author
	Type   layout.TypeInfo
	ID     layout.Identity
}

type journalKey struct {
	target string
	id     layout.Identity
}

// Journal holds the recorded deletes. Its methods are safe for concurrent use and never
// block on I/O. A nil *Journal records nothing.
type Journal struct {
	mu      sync.Mutex
	seq     uint64
	entries map[journalKey]JournalEntry
	loaded  bool
	// version counts changes, so that the persister writes only what is new.
	version uint64
	signal  chan struct{}
}

// NewJournal returns an empty journal, not yet loaded.
func NewJournal() *Journal {
	return &Journal{entries: map[journalKey]JournalEntry{}, signal: make(chan struct{}, 1)}
}

// Load sets the entries persisted by an earlier run (merged with any recorded since) and
// marks the journal loaded: from then on workers take their targets' entries.
func (j *Journal) Load(entries []JournalEntry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, e := range entries {
		k := journalKey{e.Target, e.ID}
		if have, ok := j.entries[k]; !ok || have.Seq < e.Seq {
			j.entries[k] = e
		}
		j.seq = max(j.seq, e.Seq)
	}
	j.loaded = true
	j.changed()
}

// Loaded reports whether the persisted entries were loaded.
func (j *Journal) Loaded() bool {
	if j == nil {
		return true
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.loaded
}

// Changed is signalled after the entries changed.
func (j *Journal) Changed() <-chan struct{} { return j.signal }

// Entries returns every entry, oldest first, and the version they are at.
func (j *Journal) Entries() ([]JournalEntry, uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]JournalEntry, 0, len(j.entries))
	for _, e := range j.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Seq < out[b].Seq })
	return out, j.version
}

// Version is the number of changes made so far.
func (j *Journal) Version() uint64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.version
}

// stamp returns the next sequence number, which orders a change with recorded deletes.
func (j *Journal) stamp() uint64 {
	if j == nil {
		return 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	return j.seq
}

// record keeps a delete; false when the journal is full and it is not kept.
func (j *Journal) record(ev Event, seq uint64) bool {
	if j == nil {
		return true
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	k := journalKey{ev.Target, ev.ID}
	if _, ok := j.entries[k]; !ok && len(j.entries) >= MaxJournalEntries {
		return false
	}
	j.entries[k] = JournalEntry{Seq: seq, Target: ev.Target, Author: ev.Author, Type: ev.Type, ID: ev.ID}
	j.changed()
	return true
}

// forget drops the recorded delete of the target's object when it is not newer than seq: a
// change of the object stamped seq ended written or unchanged, so the delete is in Git or
// was replaced by a later change that is.
func (j *Journal) forget(target string, id layout.Identity, seq uint64) {
	if j == nil || seq == 0 {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	k := journalKey{target, id}
	if e, ok := j.entries[k]; ok && e.Seq <= seq {
		delete(j.entries, k)
		j.changed()
	}
}

// ForgetTarget drops the recorded deletes of a GitTarget that no longer exists.
func (j *Journal) ForgetTarget(target string) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	n := len(j.entries)
	for k := range j.entries {
		if k.target == target {
			delete(j.entries, k)
		}
	}
	if len(j.entries) != n {
		j.changed()
	}
}

// pending returns the target's recorded deletes as events, oldest first.
func (j *Journal) pending(target string) []Event {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	var out []JournalEntry
	for k, e := range j.entries {
		if k.target == target {
			out = append(out, e)
		}
	}
	j.mu.Unlock()
	sort.Slice(out, func(a, b int) bool { return out[a].Seq < out[b].Seq })
	events := make([]Event, len(out))
	for i, e := range out {
		events[i] = Event{Target: e.Target, Author: e.Author, Op: OpDelete, Type: e.Type, ID: e.ID, seq: e.Seq, changes: 1}
	}
	return events
}

// changed bumps the version and signals; j.mu is held.
func (j *Journal) changed() {
	j.version++
	select {
	case j.signal <- struct{}{}:
	default:
	}
}

// journalPoll is how often a worker that waits for the journal to be loaded looks again.
const journalPoll = 200 * time.Millisecond

// queueJournal queues, for each target set since the last call, the deletes the journal
// keeps for it, one batch per author, ahead of the target's other batches: they were
// received before anything this worker holds of the target (a snapshot queued behind them
// supersedes those of objects that exist again). Each is a change received by this worker.
func (s *branchState) queueJournal(now time.Time) {
	for name, ts := range s.targets {
		if !ts.journalDue {
			continue
		}
		ts.journalDue = false
		var batches []*batch
		byAuthor := map[Author]*batch{}
		for _, ev := range s.cfg.Journal.pending(name) {
			b := byAuthor[ev.Author]
			if b == nil {
				b = &batch{target: name, author: ev.Author, reason: closeJournal}
				byAuthor[ev.Author] = b
				batches = append(batches, b)
			}
			b.events = append(b.events, ev)
			b.received = append(b.received, now)
			s.count(outcomeReceived, ev.changes)
		}
		if len(batches) == 0 {
			continue
		}
		s.cfg.Log.Info("queued the deletes an earlier worker received", "target", name, "batches", len(batches))
		at := slices.IndexFunc(s.closed, func(b *batch) bool { return b.target == name })
		if at < 0 {
			at = len(s.closed)
		}
		s.closed = slices.Insert(s.closed, at, batches...)
	}
}
