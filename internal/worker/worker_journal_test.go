package worker

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// A delete under prune: OnEvent that had not reached the remote when its worker stopped is
// written by the next worker of the branch, although the next snapshot neither lists the
// object nor sweeps (docs/branch-worker.md#restart).
func TestADeleteUnpushedAtStopLandsThroughTheNextWorker(t *testing.T) {
	journal := NewJournal()
	journal.Load(nil)
	withJournal := func(c *Config) { c.Journal = journal }
	first := newRig(t, withJournal)
	first.submit(upsert("alice", "team-a", "doomed", "1"))
	first.waitFor("the object", func() bool { return first.hasFile(cmPath("team-a", "doomed")) })
	first.settled()

	// The remote goes down; the delete is committed locally and cannot be pushed.
	first.http.SetDown(true)
	first.submit(deleteEvent("alice", "team-a", "doomed"))
	first.waitFor("the delete to be committed locally", func() bool {
		st, err := first.worker.Status(first.ctx())
		return err == nil && st.PendingWrite == 1
	})
	first.cancel()
	<-first.worker.Done()
	if entries, _ := journal.Entries(); len(entries) != 1 {
		t.Fatalf("journal after the stop: %+v, want the one delete", entries)
	}

	// The next worker of the branch (a replaced worker, or the operator after a restart)
	// starts on a fresh local copy and gets the scope's snapshot, which does not list the
	// object.
	first.http.SetDown(false)
	next := startRig(t, first.server, first.http, withJournal)
	snap := Snapshot{Target: "team/live", Scope: Scope{Kind: "ConfigMap", Namespace: "team-a"}, Type: configMapType,
		Objects: []SnapshotObject{{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "kept"}, Doc: configMap("team-a", "kept", "1")}}}
	if err := next.worker.Resync(next.ctx(), snap); err != nil {
		t.Fatal(err)
	}
	next.waitFor("the delete to land", func() bool {
		return !next.hasFile(cmPath("team-a", "doomed")) && next.hasFile(cmPath("team-a", "kept"))
	})
	next.settled()
	if entries, _ := journal.Entries(); len(entries) != 0 {
		t.Fatalf("journal after the delete landed: %+v, want empty", entries)
	}
	// Newest first: the snapshot, the delete (queued ahead of it), the first write.
	if log := next.log(); len(log) != 3 || !strings.HasPrefix(log[1].Author, "alice ") {
		t.Errorf("the delete is not one commit authored by who made it: %+v", log)
	}
}

// A delete recorded by an earlier worker must not remove an object that exists again: the
// snapshot that lists it supersedes the delete.
func TestAJournalDeleteOfAnObjectThatExistsAgainIsSuperseded(t *testing.T) {
	journal := NewJournal()
	journal.Load([]JournalEntry{{Seq: 1, Target: "team/live", Type: configMapType,
		ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "back"}}})
	r := rigOn(t, map[string]string{cmPath("team-a", "back"): string(configMap("team-a", "back", "1"))},
		func(c *Config) { c.Journal = journal })
	snap := Snapshot{Target: "team/live", Scope: Scope{Kind: "ConfigMap", Namespace: "team-a"}, Type: configMapType,
		Objects: []SnapshotObject{{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "back"}, Doc: configMap("team-a", "back", "2")}}}
	if err := r.worker.Resync(r.ctx(), snap); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the snapshot's edit", func() bool {
		return r.hasFile(cmPath("team-a", "back")) && r.file(cmPath("team-a", "back")) == string(configMap("team-a", "back", "2"))
	})
	r.settled()
	if entries, _ := journal.Entries(); len(entries) != 0 {
		t.Fatalf("journal: %+v, want empty once the snapshot wrote the object", entries)
	}
}
