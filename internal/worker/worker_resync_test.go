package worker

import (
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

func snapshotOf(names ...string) Snapshot {
	s := Snapshot{Target: "team/live", Scope: Scope{Kind: "ConfigMap", Namespace: "team-a"}, Type: configMapType}
	for _, n := range names {
		s.Objects = append(s.Objects, SnapshotObject{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: n}, Doc: configMap("team-a", n, "snap")})
	}
	return s
}

func TestResyncSweepHonoursPruneModes(t *testing.T) {
	r := newRig(t)
	for _, n := range []string{"a", "b", "c"} {
		r.submit(upsert("alice", "team-a", n, "1"))
	}
	r.submit(upsert("alice", "team-b", "other-namespace", "1"))
	r.settled()

	// OnEvent: a snapshot without b and c writes a, keeps b and c and counts them.
	if err := r.worker.Resync(r.ctx(), snapshotOf("a")); err != nil {
		t.Fatal(err)
	}
	st := r.settled()
	if !r.hasFile(cmPath("team-a", "b")) || !r.hasFile(cmPath("team-a", "c")) {
		t.Fatal("OnEvent: a sweep deleted documents")
	}
	if st.Retained["team/live"] != 2 {
		t.Fatalf("retained documents = %d, want 2", st.Retained["team/live"])
	}
	if got := r.file(cmPath("team-a", "a")); got != string(configMap("team-a", "a", "snap")) {
		t.Fatalf("the snapshot's object was not written: %q", got)
	}
	if log := r.log(); log[0].Author != "GitOps Reverser <bot@example.com>" {
		t.Fatalf("a resync commit is authored by %s, want the committer", log[0].Author)
	}

	// Always: the same snapshot deletes b and c, and nothing outside its scope.
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneAlways})
	if err := r.worker.Resync(r.ctx(), snapshotOf("a")); err != nil {
		t.Fatal(err)
	}
	st = r.settled()
	if r.hasFile(cmPath("team-a", "b")) || r.hasFile(cmPath("team-a", "c")) {
		t.Fatal("Always: the sweep kept documents whose objects are gone")
	}
	if !r.hasFile(cmPath("team-b", "other-namespace")) {
		t.Fatal("the sweep deleted a document outside its scope")
	}
	if st.Retained["team/live"] != 0 {
		t.Fatalf("retained = %d after an Always sweep, want 0", st.Retained["team/live"])
	}
}

func TestSnapshotsGivenTogetherLandInOneCommit(t *testing.T) {
	r := newRig(t)
	other := snapshotOf("x")
	other.Scope.Namespace = "team-b"
	other.Objects[0].ID.Namespace = "team-b"
	other.Objects[0].Doc = configMap("team-b", "x", "snap")
	if err := r.worker.Resync(r.ctx(), snapshotOf("a", "b"), other); err != nil {
		t.Fatal(err)
	}
	r.settled()
	log := r.log()
	if len(log) != 1 {
		t.Fatalf("%d commits for one resync of two scopes, want 1: %q", len(log), subjects(log))
	}
	for _, p := range []string{cmPath("team-a", "a"), cmPath("team-a", "b"), cmPath("team-b", "x")} {
		if !r.hasFile(p) {
			t.Fatalf("%s is missing after the resync", p)
		}
	}
}

func TestResyncRefusesSnapshotsOfTwoTargetsInOneCall(t *testing.T) {
	r := newRig(t)
	other := snapshotOf("x")
	other.Target = "team/other"
	if err := r.worker.Resync(r.ctx(), snapshotOf("a"), other); err == nil {
		t.Fatal("snapshots of two GitTargets were accepted in one call")
	}
}

func TestAnUnreadableObjectOfASnapshotKeepsItsDocument(t *testing.T) {
	r := newRig(t)
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneAlways})
	r.submit(upsert("alice", "team-a", "unreadable", "1"))
	r.submit(upsert("alice", "team-a", "gone", "1"))
	r.settled()
	snap := snapshotOf("a")
	snap.Objects = append(snap.Objects, SnapshotObject{ID: layout.Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "unreadable"}})
	if err := r.worker.Resync(r.ctx(), snap); err != nil {
		t.Fatal(err)
	}
	r.settled()
	if !r.hasFile(cmPath("team-a", "unreadable")) {
		t.Fatal("the sweep deleted the document of an object that exists but could not be read")
	}
	if r.hasFile(cmPath("team-a", "gone")) {
		t.Fatal("the sweep kept a document whose object is gone")
	}
}
