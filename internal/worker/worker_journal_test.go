package worker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

func loadedJournal(entries ...JournalEntry) *Journal {
	j := NewJournal()
	j.Load(entries, nil)
	return j
}

func journalEntries(j *Journal) []JournalEntry {
	entries, _ := j.Entries()
	return entries
}

func teamASnapshot(objects ...SnapshotObject) Snapshot {
	return Snapshot{Target: "team/live", Scope: Scope{Kind: "ConfigMap", Namespace: "team-a"}, Type: configMapType, Objects: objects}
}

func listed(name, value string) SnapshotObject {
	return SnapshotObject{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: name}, Doc: configMap("team-a", name, value)}
}

// A delete under prune: OnEvent that had not reached the remote when its worker stopped is
// written by the next worker of the branch, although the next snapshot neither lists the
// object nor sweeps (docs/branch-worker.md#restart).
func TestADeleteUnpushedAtStopLandsThroughTheNextWorker(t *testing.T) {
	journal := loadedJournal()
	withJournal := func(c *Config) { c.Journal = journal }
	first := newRig(t, withJournal)
	first.submit(upsert("alice", "team-a", "doomed", "1"))
	first.waitFor("the object", func() bool { return first.hasFile(cmPath("team-a", "doomed")) })
	first.settled()

	// The remote goes down; the delete is committed locally and cannot be pushed.
	first.http.SetDown(true)
	first.submit(deleteEvent("alice", "team-a", "doomed"))
	first.waitStatus("the delete to be committed locally", func(st Status) bool { return st.PendingWrite == 1 })
	first.cancel()
	<-first.worker.Done()
	if entries := journalEntries(journal); len(entries) != 1 {
		t.Fatalf("journal after the stop: %+v, want the one delete", entries)
	}

	// The next worker of the branch (a replaced worker, or the operator after a restart)
	// starts on a fresh local copy and gets the scope's snapshot, which does not list the
	// object.
	first.http.SetDown(false)
	next := startRig(t, first.server, first.http, withJournal)
	if err := next.worker.Resync(next.ctx(), teamASnapshot(listed("kept", "1"))); err != nil {
		t.Fatal(err)
	}
	next.waitFor("the delete to land", func() bool {
		return !next.hasFile(cmPath("team-a", "doomed")) && next.hasFile(cmPath("team-a", "kept"))
	})
	next.settled()
	if entries := journalEntries(journal); len(entries) != 0 {
		t.Fatalf("journal after the delete landed: %+v, want empty", entries)
	}
	// Newest first: the snapshot, the delete (queued ahead of it), the first write.
	if log := next.log(); len(log) != 3 || !strings.HasPrefix(log[1].Author, "alice ") {
		t.Errorf("the delete is not one commit authored by who made it: %+v", log)
	}
}

// A delete recorded by an earlier worker must not remove an object that exists again: it
// waits for the target's snapshot, which lists the object and supersedes it.
func TestAJournalDeleteOfAnObjectThatExistsAgainIsSuperseded(t *testing.T) {
	journal := loadedJournal(JournalEntry{Seq: 1, Target: "team/live", Type: configMapType,
		ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "back"}})
	r := rigOn(t, map[string]string{cmPath("team-a", "back"): string(configMap("team-a", "back", "1"))},
		func(c *Config) { c.Journal = journal })
	before := len(r.log())
	r.settled() // the target is set and the branch fetched: the delete waits for the snapshot
	if err := r.worker.Resync(r.ctx(), teamASnapshot(listed("back", "2"))); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the snapshot's edit", func() bool {
		return r.hasFile(cmPath("team-a", "back")) && r.file(cmPath("team-a", "back")) == string(configMap("team-a", "back", "2"))
	})
	r.settled()
	if entries := journalEntries(journal); len(entries) != 0 {
		t.Fatalf("journal: %+v, want empty once the snapshot wrote the object", entries)
	}
	if log := r.log(); len(log) != before+1 {
		t.Fatalf("%d commits after the snapshot, want only the snapshot's: %v", len(log)-before, subjects(log))
	}
}

// A second delete of an object whose first delete is committed but not pushed plans to
// nothing on the local tip; the journal keeps the delete until the remote has it.
func TestARepeatedDeleteStaysJournaledUntilTheRemoteHasIt(t *testing.T) {
	journal := loadedJournal()
	r := newRig(t, func(c *Config) { c.Journal = journal })
	r.submit(upsert("alice", "team-a", "doomed", "1"))
	r.waitFor("the object", func() bool { return r.hasFile(cmPath("team-a", "doomed")) })
	r.settled()

	r.http.SetDown(true)
	r.submit(deleteEvent("alice", "team-a", "doomed"))
	r.waitStatus("the delete to be committed locally", func(st Status) bool { return st.PendingWrite == 1 })
	r.submit(deleteEvent("bob", "team-a", "doomed"))
	r.waitStatus("the second delete to be planned", func(st Status) bool { return st.Ledger.Unchanged == 1 })
	if entries := journalEntries(journal); len(entries) != 1 {
		t.Fatalf("journal while the delete is not pushed: %+v, want it kept", entries)
	}

	r.http.SetDown(false)
	r.waitFor("the delete to land", func() bool { return !r.hasFile(cmPath("team-a", "doomed")) })
	r.settled()
	if entries := journalEntries(journal); len(entries) != 0 {
		t.Fatalf("journal after the push: %+v, want empty", entries)
	}
}

// Under prune: Always, an object created and deleted before anything was written leaves
// nothing in Git and nothing in the journal, although a snapshot of its scope follows.
func TestADeleteOfAnObjectNeverWrittenLeavesNoJournalEntry(t *testing.T) {
	journal := loadedJournal()
	r := newRig(t, func(c *Config) { c.Journal = journal })
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneAlways})
	r.submit(upsert("alice", "team-a", "brief", "1"))
	r.submit(deleteEvent("alice", "team-a", "brief"))
	if err := r.worker.Resync(r.ctx(), teamASnapshot(listed("kept", "1"))); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the snapshot", func() bool { return r.hasFile(cmPath("team-a", "kept")) })
	st := r.settled()
	if r.hasFile(cmPath("team-a", "brief")) {
		t.Fatal("the deleted object was written")
	}
	if entries := journalEntries(journal); len(entries) != 0 {
		t.Fatalf("journal: %+v, want empty", entries)
	}
	// Received: two events and one listed object, each once (the worker does not queue the
	// journal's copy of a delete it holds itself).
	if st.Ledger.Received != 3 {
		t.Fatalf("ledger %+v, want 3 changes received", st.Ledger)
	}
}

// A deleted GitTarget's recorded deletes are dropped with it, and a delete of it handed over
// late is not recorded, until the target is set on a worker again.
func TestADeletedGitTargetLeavesNothingInTheJournal(t *testing.T) {
	gone := deleteEvent("alice", "team-a", "x")
	gone.Target, gone.seq = "team/gone", 1
	live := deleteEvent("alice", "team-a", "y")
	live.seq = 2
	j := loadedJournal()
	j.record(gone, 0)
	j.record(live, 0)

	j.ForgetTarget("team/gone")
	gone.seq = 3
	j.record(gone, 0) // late, from a stream still stopping
	if entries := journalEntries(j); len(entries) != 1 || entries[0].Target != "team/live" {
		t.Fatalf("journal after the target was deleted: %+v", entries)
	}
	j.revive("team/gone") // created again and set on a worker
	j.record(gone, 0)
	if entries := journalEntries(j); len(entries) != 2 {
		t.Fatalf("a target set again does not record its deletes: %+v", entries)
	}
}

// A delete recorded by an earlier worker after the target's snapshot was taken lands after
// that snapshot, not ahead of it: planned first, it would find nothing to delete and the
// older snapshot would bring the document back (a credential rotation replaced the worker
// while the snapshot waited for the target, and the old worker got the delete).
func TestAJournalDeleteNewerThanTheWaitingSnapshotLandsAfterIt(t *testing.T) {
	journal := loadedJournal()
	r := newRig(t, func(c *Config) { c.Journal = journal })
	r.settled()
	if err := r.worker.RemoveTarget(r.ctx(), "team/live"); err != nil {
		t.Fatal(err)
	}
	// The snapshot listing the object arrives first and waits for its target.
	if err := r.worker.Resync(r.ctx(), teamASnapshot(listed("doomed", "1"), listed("kept", "1"))); err != nil {
		t.Fatal(err)
	}
	r.waitStatus("the snapshot to wait for its target", func(st Status) bool { return st.Ledger.Open > 0 })
	// Then the object is deleted, and an earlier worker of the branch records the delete.
	seq, err := journal.stamp(r.ctx(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !journal.record(Event{Target: "team/live", Author: Author{Name: "alice", Email: "alice@example.com"}, Op: OpDelete,
		Type: configMapType, ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "doomed"}, seq: seq}, 0) {
		t.Fatal("the journal refused the delete")
	}
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent})
	r.waitFor("the snapshot's other object", func() bool { return r.hasFile(cmPath("team-a", "kept")) })
	r.settled()
	if r.hasFile(cmPath("team-a", "doomed")) {
		t.Fatalf("the deleted object's document is in Git: the delete was planned before the older snapshot\n%v", subjects(r.log()))
	}
	if entries := journalEntries(journal); len(entries) != 0 {
		t.Fatalf("journal: %+v, want empty once the delete landed", entries)
	}
}

// The same for an upsert that waited for its target: a delete an earlier worker recorded
// after it goes after it, also when the upsert's batch holds a later change of another
// object.
func TestAJournalDeleteNewerThanAWaitingUpsertLandsAfterIt(t *testing.T) {
	journal := loadedJournal()
	r := newRig(t, func(c *Config) { c.Journal = journal })
	r.settled()
	if err := r.worker.RemoveTarget(r.ctx(), "team/live"); err != nil {
		t.Fatal(err)
	}
	r.submit(upsert("alice", "team-a", "doomed", "1"))
	seq, err := journal.stamp(r.ctx(), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.submit(upsert("alice", "team-a", "other", "1"))
	if err := r.worker.Resync(r.ctx(), teamASnapshot(listed("other", "1"))); err != nil {
		t.Fatal(err)
	}
	r.waitStatus("the changes to wait for their target", func(st Status) bool { return st.Ledger.Open >= 3 })
	if !journal.record(Event{Target: "team/live", Author: Author{Name: "alice", Email: "alice@example.com"}, Op: OpDelete,
		Type: configMapType, ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "doomed"}, seq: seq}, 0) {
		t.Fatal("the journal refused the delete")
	}
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent})
	r.waitFor("the other object", func() bool { return r.hasFile(cmPath("team-a", "other")) })
	r.settled()
	if r.hasFile(cmPath("team-a", "doomed")) {
		t.Fatalf("the deleted object's document is in Git: the delete was planned before the older upsert\n%v", subjects(r.log()))
	}
	if entries := journalEntries(journal); len(entries) != 0 {
		t.Fatalf("journal: %+v, want empty once the delete landed", entries)
	}
}

// A delete recorded on its way into a worker's own inbox is received there, in its order,
// behind what was handed over before it: the worker does not queue the journal's copy of
// it, which would go ahead of those changes. The stress test found the loss: a worker whose
// inbox was backed up queued the copy when the target's snapshot came in, planned it
// before the object's create (still in the inbox), found nothing to delete and forgot it;
// the create was written after it, and a credential rotation stopped the worker before it
// received the delete itself. Here the loop is driven by hand to hold exactly that order.
func TestADeleteInTheWorkersOwnInboxIsNotQueuedAheadOfWhatCameBefore(t *testing.T) {
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo(repoName); err != nil {
		t.Fatal(err)
	}
	front := g.ServeHTTP(t, testenv.HTTPAuth{Username: "bot", Password: "bot-password"})
	journal := loadedJournal()
	first, err := New(rigConfig(t, front, &syncBuffer{}, func(c *Config) { c.Journal, c.CommitWindow = journal, 0 }))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	target := TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent}
	// Everything is handed over before the loop takes anything in.
	if err := first.SetTarget(ctx, target); err != nil {
		t.Fatal(err)
	}
	if err := first.Resync(ctx, teamASnapshot(listed("kept", "1"))); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []Event{upsert("alice", "team-a", "doomed", "1"), deleteEvent("alice", "team-a", "doomed")} {
		if err := first.Submit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	// The loop takes in the target, its snapshot and the create, and pushes.
	s := first.state
	for range 3 {
		s.handle(<-first.inbox, time.Now())
		s.tick(ctx, time.Now())
	}
	deadline := time.Now().Add(time.Minute)
	for s.localTip != s.remoteTip || len(s.closed) > 0 || len(s.pending) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the first worker did not push: %+v", s.status())
		}
		time.Sleep(10 * time.Millisecond) // pacing the ticks this test drives by hand
		s.tick(ctx, time.Now())
	}
	if !hasFile(t, g, cmPath("team-a", "doomed")) {
		t.Fatal("the create was not written")
	}
	// Stopped with the delete still in the inbox: it is released, and stays in the journal.
	s.shutdown()
	first.drain()
	if entries := journalEntries(journal); len(entries) != 1 {
		t.Fatalf("journal after the stop: %+v, want the delete", entries)
	}

	// The next worker of the branch writes it.
	r := startRig(t, g, front, func(c *Config) { c.Journal = journal })
	if err := r.worker.Resync(r.ctx(), teamASnapshot(listed("kept", "1"))); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the delete written by the next worker", func() bool { return !r.hasFile(cmPath("team-a", "doomed")) })
}

// hasFile reports whether main holds path.
func hasFile(t *testing.T, g *testenv.GitServer, path string) bool {
	t.Helper()
	_, err := g.ReadFile(repoName, "main", path)
	return err == nil
}
