package worker

import "testing"

func TestUnchangedWriteMakesNoCommitAndNoPush(t *testing.T) {
	r := newRig(t)
	r.submit(upsert("alice", "team-a", "cfg", "1"))
	r.settled()
	commits, pushes := len(r.log()), r.server.Pushes(repoName)

	r.submit(upsert("alice", "team-a", "cfg", "1"))
	r.submit(upsert("bob", "team-a", "cfg", "1"))
	r.settled()
	if got := len(r.log()); got != commits {
		t.Fatalf("an unchanged object made a commit (%d commits, want %d)", got, commits)
	}
	if got := r.server.Pushes(repoName); got != pushes {
		t.Fatalf("an unchanged object made a push (%d pushes, want %d)", got, pushes)
	}
}

func TestDeleteRemovesTheDocumentAndNeverModeKeepsIt(t *testing.T) {
	r := newRig(t)
	r.submit(upsert("alice", "team-a", "gone", "1"))
	r.settled()
	r.submit(deleteEvent("alice", "team-a", "gone"))
	r.settled()
	if r.hasFile(cmPath("team-a", "gone")) {
		t.Fatal("OnEvent: a DELETE left the document in Git")
	}

	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneNever})
	r.submit(upsert("alice", "team-a", "kept", "1"))
	r.settled()
	commits := len(r.log())
	r.submit(deleteEvent("alice", "team-a", "kept"))
	r.settled()
	if !r.hasFile(cmPath("team-a", "kept")) || len(r.log()) != commits {
		t.Fatal("Never: a DELETE removed the document or made a commit")
	}
}
