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
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo(repoName); err != nil {
		t.Fatal(err)
	}
	if _, err := g.PushForeign(repoName, "main", testenv.ForeignChange{Files: map[string]string{
		"clusters/dev/junk.bin": "\x00\x01binary",
	}}); err != nil {
		t.Fatal(err)
	}
	r := startRig(t, g, g.ServeHTTP(t, testenv.HTTPAuth{Username: "bot", Password: "bot-password"}))
	r.submit(upsert("alice", "team-a", "waiting", "1"))
	var st Status
	r.waitFor("the folder to be refused", func() bool {
		var err error
		st, err = r.worker.Status(r.ctx())
		return err == nil && st.Refused["team/live"] != ""
	})
	if !strings.Contains(st.Refused["team/live"], "junk.bin") {
		t.Fatalf("refusal = %q, want it to name the file", st.Refused["team/live"])
	}
	if !st.RetryAt.After(time.Now().Add(-time.Second)) || st.Failures == 0 {
		t.Fatalf("a refused folder is retried without backoff: %+v", st)
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
