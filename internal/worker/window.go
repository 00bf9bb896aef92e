package worker

import "time"

// closeReason says why a window closed (a metric label later).
type closeReason string

const (
	closeSilence     closeReason = "silence"
	closeMaxAge      closeReason = "max_age"
	closeSizeCap     closeReason = "size_cap"
	closeOtherAuthor closeReason = "other_author_or_target"
	closeSave        closeReason = "save"
	closeResync      closeReason = "resync"
	closeZeroWindow  closeReason = "zero_window"
	closeStop        closeReason = "stop"
	// closeApplyDue: an apply of the target waits for its changes (flush, then apply).
	closeApplyDue closeReason = "apply_due"
	// closeForeignCommit: the apply due is of a Git-side push to the target's folder.
	closeForeignCommit closeReason = "foreign_commit"
	// closeRetry is not a window: the changes a render refused, queued again after their
	// folder changed (docs/branch-worker.md#held-changes).
	closeRetry closeReason = "retry"
	// closeJournal is not a window either: a target's deletes recorded by an earlier worker
	// (docs/branch-worker.md#restart).
	closeJournal closeReason = "journal"
)

// A window that keeps receiving events closes after maxWindowAgeFactor × CommitWindow, and
// never before minMaxWindowAge: under one author's steady stream a change then waits at most
// three windows, and a burst shorter than that still lands in one commit.
const (
	maxWindowAgeFactor = 3
	minMaxWindowAge    = 2 * time.Second
)

// batch is a unit of work to plan: a closed commit window, or a snapshot (resync).
type batch struct {
	target string
	author Author
	events []Event
	// snapshots are set for a resync batch: the scopes of one target listed together, so
	// that a restart's snapshots of every type land in one commit.
	snapshots []*Snapshot
	// message overrides the template (a CommitRequest's message).
	message string
	waiters []chan SaveResult
	reason  closeReason
	// received are the arrival times of the events, for the event-to-push latency.
	received []time.Time
	// held is set once planning it failed: it waits for its target's recheck, even when it
	// is a snapshot (docs/branch-worker.md#held-changes).
	held bool
	// rechecked is set once a recheck decided or passed it; a recheck cut short by the end
	// of a turn goes on with the batches it has not reached (planClosed).
	rechecked bool
}

// window is the open commit window: events of one (author, target) that arrived with less
// than CommitWindow of silence between them.
type window struct {
	batch
	opened, last time.Time
	bytes        int
}

func newWindow(ev Event, now time.Time) *window {
	w := &window{batch: batch{target: ev.Target, author: ev.Author}, opened: now}
	w.add(ev, now)
	return w
}

func (w *window) accepts(ev Event) bool {
	return w.target == ev.Target && w.author == ev.Author
}

func (w *window) add(ev Event, now time.Time) {
	w.events = append(w.events, ev)
	w.received = append(w.received, now)
	w.last = now
	w.bytes += len(ev.Doc)
}

// deadline is when the window closes by itself: silence or maximum age, whichever first.
func (w *window) deadline(cfg *Config) (time.Time, closeReason) {
	silence := w.last.Add(cfg.CommitWindow)
	maxAge := w.opened.Add(cfg.MaxWindowAge)
	if maxAge.Before(silence) {
		return maxAge, closeMaxAge
	}
	return silence, closeSilence
}

// full reports whether the window reached its size cap.
func (w *window) full(cfg *Config) bool { return w.bytes >= cfg.MaxWindowBytes }
