package worker

import (
	"context"
	"sort"
	"sync"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// The journal of deletes (docs/branch-worker.md#restart): a DELETE event is the one change
// a new worker cannot derive again from the cluster, since the next snapshot no longer
// lists the object and, under prune: OnEvent, does not sweep. Every delete handed to a
// worker is recorded here, before it enters the inbox, until a change of its object that
// is at least as new is on the remote (written, or found unchanged with nothing pending).
// A worker queues the recorded deletes of a target it gets (journal_queue.go). The journal
// outlives workers (one per operator, shared by every branch), is persisted by its owner
// outside the worker (internal/pipeline), and never blocks on I/O.
//
// A recorded delete still in the inbox of the worker it was handed to is marked so (inbox):
// that worker receives it in its order, after the changes handed to it before, so it does
// not queue the journal's copy (which would go ahead of them). Another worker does.
//
// Every change handed to a worker is stamped with the journal's next sequence number, so
// that a change and a recorded delete of one object can be ordered. Stamps wait until the
// entries of an earlier run are loaded: a stamp is always above every entry.

// MaxJournalEntries bounds the journal. A delete handed over while it is full is written
// as usual, but not kept across a restart; the worker logs it.
const MaxJournalEntries = 4000

// JournalEntry is one recorded delete.
type JournalEntry struct {
	// Seq orders the entry with the other changes of its object.
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

// inboxMark is a recorded delete on its way through a worker's inbox.
type inboxMark struct {
	seq    uint64
	worker uint64
}

// Journal holds the recorded deletes. Its methods are safe for concurrent use; only stamp
// waits (for the journal to be loaded). A nil *Journal records nothing and stamps 0.
type Journal struct {
	mu      sync.Mutex
	seq     uint64
	entries map[journalKey]JournalEntry
	// gone holds GitTargets deleted since: a late delete of theirs is not recorded.
	gone map[string]bool
	// inbox marks the entries handed to a worker that has not received them yet.
	inbox map[journalKey]inboxMark
	// workers numbers the workers, for the inbox marks.
	workers  uint64
	loaded   chan struct{}
	loadOnce sync.Once
	// version counts changes, so that the persister writes only what is new.
	version uint64
	signal  chan struct{}
}

// NewJournal returns an empty journal, not yet loaded.
func NewJournal() *Journal {
	return &Journal{entries: map[journalKey]JournalEntry{}, gone: map[string]bool{}, inbox: map[journalKey]inboxMark{},
		loaded: make(chan struct{}), signal: make(chan struct{}, 1)}
}

// Load adds the entries persisted by an earlier run, but those of GitTargets for which
// exists is false (deleted while no operator ran; nil keeps all), and marks the journal
// loaded: stamps are given from then on, above every entry.
func (j *Journal) Load(entries []JournalEntry, exists func(target string) bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, e := range entries {
		if exists != nil && !exists(e.Target) {
			continue
		}
		k := journalKey{e.Target, e.ID}
		if have, ok := j.entries[k]; !ok || have.Seq < e.Seq {
			j.entries[k] = e
		}
		j.seq = max(j.seq, e.Seq)
	}
	j.loadOnce.Do(func() { close(j.loaded) })
	j.changed()
}

// Loaded reports whether the persisted entries were loaded.
func (j *Journal) Loaded() bool {
	if j == nil {
		return true
	}
	select {
	case <-j.loaded:
		return true
	default:
		return false
	}
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

// ForgetTarget drops the recorded deletes of a GitTarget that no longer exists; a delete
// of it handed over later is not recorded, until the target is set on a worker again.
func (j *Journal) ForgetTarget(target string) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.gone[target] = true
	n := len(j.entries)
	for k := range j.entries {
		if k.target == target {
			delete(j.entries, k)
			delete(j.inbox, k)
		}
	}
	if len(j.entries) != n {
		j.changed()
	}
}

// revive records the deletes of target again (it is set on a worker).
func (j *Journal) revive(target string) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.gone, target)
}

// stamp returns the next sequence number, once the journal is loaded; it gives up when
// ctx ends or stop is closed.
func (j *Journal) stamp(ctx context.Context, stop <-chan struct{}) (uint64, error) {
	if j == nil {
		return 0, nil
	}
	select {
	case <-j.loaded:
	case <-stop:
		return 0, ErrStopped
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	return j.seq, nil
}

// record keeps a stamped delete; false when the journal is full and it is not kept.
func (j *Journal) record(ev Event, worker uint64) bool {
	if j == nil {
		return true
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.gone[ev.Target] {
		return true // its GitTarget was deleted: nothing to keep it for
	}
	k := journalKey{ev.Target, ev.ID}
	if _, ok := j.entries[k]; !ok && len(j.entries) >= MaxJournalEntries {
		return false
	}
	j.entries[k] = JournalEntry{Seq: ev.seq, Target: ev.Target, Author: ev.Author, Type: ev.Type, ID: ev.ID}
	j.inbox[k] = inboxMark{seq: ev.seq, worker: worker}
	j.changed()
	return true
}

// received notes that the delete stamped seq left the inbox it was handed to: the worker
// took it in, or it never entered (the hand-over failed).
func (j *Journal) received(target string, id layout.Identity, seq uint64) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	k := journalKey{target, id}
	if m, ok := j.inbox[k]; ok && m.seq == seq {
		delete(j.inbox, k)
	}
}

// newWorker returns the number of a new worker, for its inbox marks.
func (j *Journal) newWorker() uint64 {
	if j == nil {
		return 0
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.workers++
	return j.workers
}

// holds reports whether the journal has a delete of the target's object.
func (j *Journal) holds(target string, id layout.Identity) bool {
	if j == nil {
		return false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	_, ok := j.entries[journalKey{target, id}]
	return ok
}

// forget drops the recorded delete of the target's object when it is not newer than seq: a
// change of the object stamped seq is on the remote, so the delete is there too, or was
// replaced by a later change that is.
func (j *Journal) forget(target string, id layout.Identity, seq uint64) {
	if j == nil || seq == 0 {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	k := journalKey{target, id}
	if m, ok := j.inbox[k]; ok && m.seq <= seq {
		delete(j.inbox, k)
	}
	if e, ok := j.entries[k]; ok && e.Seq <= seq {
		delete(j.entries, k)
		j.changed()
	}
}

// pending returns the target's recorded deletes as events, oldest first, but those still
// in the inbox of worker (it receives them in their order).
func (j *Journal) pending(target string, worker uint64) []Event {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	var out []JournalEntry
	for k, e := range j.entries {
		if m, ok := j.inbox[k]; ok && m.seq == e.Seq && m.worker == worker {
			continue
		}
		if k.target == target {
			out = append(out, e)
		}
	}
	j.mu.Unlock()
	sort.Slice(out, func(a, b int) bool { return out[a].Seq < out[b].Seq })
	events := make([]Event, len(out))
	for i, e := range out {
		events[i] = Event{Target: e.Target, Author: e.Author, Op: OpDelete, Type: e.Type, ID: e.ID, seq: e.Seq}
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
