package worker

import (
	"strings"
	"testing"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// A folder holding a file the writer cannot understand refuses the target; its changes
// wait (with backoff, not a busy loop) and land once someone fixes the folder in Git.
func TestRefusedFolderParksChangesUntilItIsFixed(t *testing.T) {
	// The junk is there before the worker's first fetch, so the change is planned on it.
	r := rigOn(t, map[string]string{
		"clusters/dev/junk.bin": "\x00\x01binary",
	})
	r.submit(upsert("alice", "team-a", "waiting", "1"))
	st := r.waitStatus("the folder to be refused", func(st Status) bool { return st.Refused["team/live"] != "" })
	if !strings.Contains(st.Refused["team/live"], "junk.bin") {
		t.Fatalf("refusal = %q, want it to name the file", st.Refused["team/live"])
	}
	if !st.RecheckAt.After(time.Now().Add(-time.Second)) {
		t.Fatalf("a refused folder is looked at again without backoff: %+v", st)
	}
	if st.Failures != 0 {
		t.Fatalf("a refused folder counts as a failure of the branch: %+v", st)
	}
	if r.hasFile(cmPath("team-a", "waiting")) {
		t.Fatal("a document was written into a refused folder")
	}

	if _, err := r.server.PushForeign(repoName, "main", testenv.ForeignChange{Delete: []string{"clusters/dev/junk.bin"}}); err != nil {
		t.Fatal(err)
	}
	r.waitFor("the parked change to land after the fix", func() bool { return r.hasFile(cmPath("team-a", "waiting")) })
	st = r.settled()
	if len(st.Refused) != 0 {
		t.Fatalf("still refused after the fix: %v", st.Refused)
	}
}

// A refused folder holds back its own target's writes only: another target of the branch
// keeps being written and pushed.
func TestARefusedFolderDoesNotHoldBackTheOtherTargetsOfItsBranch(t *testing.T) {
	r := rigOn(t, map[string]string{
		"clusters/dev/junk.bin": "\x00\x01binary",
	})
	r.setTarget(TargetConfig{Name: "team/other", Path: "clusters/prod", Prune: PruneOnEvent})
	r.submit(upsert("alice", "team-a", "waiting", "1"))
	r.waitStatus("the folder to be refused", func(st Status) bool { return st.Refused["team/live"] != "" })
	for i := 0; i < 3; i++ { // each lands while the refused folder waits
		ev := upsert("bob", "team-b", "flowing", string(rune('1'+i)))
		ev.Target = "team/other"
		r.submit(ev)
		want := "key: " + string(rune('1'+i))
		r.waitFor("the other target's write to be pushed", func() bool {
			return r.hasFile("clusters/prod/team-b/core/configmaps/flowing.yaml") &&
				strings.Contains(r.file("clusters/prod/team-b/core/configmaps/flowing.yaml"), want)
		})
	}
	st, err := r.worker.Status(r.ctx())
	if err != nil {
		t.Fatal(err)
	}
	if st.Failures != 0 || st.LastError != "" && !strings.Contains(st.LastError, "junk.bin") {
		t.Fatalf("the other target sees a failure of the branch: %+v", st)
	}
	if r.hasFile(cmPath("team-a", "waiting")) {
		t.Fatal("a document was written into the refused folder")
	}
}

func TestCallsAfterStopAreRefused(t *testing.T) {
	r := newRig(t)
	r.cancel()
	<-r.worker.Done()
	for i := 0; i < 20; i++ {
		if err := r.worker.Submit(r.ctx(), upsert("alice", "team-a", "late", "1")); err != ErrStopped {
			t.Fatalf("Submit after stop = %v, want ErrStopped", err)
		}
	}
	if _, err := r.worker.Save(r.ctx(), "team/live", "late"); err != ErrStopped {
		t.Fatalf("Save after stop = %v, want ErrStopped", err)
	}
}
