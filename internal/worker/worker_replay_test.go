package worker

import (
	"fmt"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// While the worker holds pending writes, 20 foreign commits land on the branch: ten touch
// files the worker does not write, ten touch the very documents it decided to write.
func TestReplayKeepsForeignChangesAndEveryDecidedWrite(t *testing.T) {
	r := newRig(t, func(c *Config) { c.CommitWindow = 0 })
	for i := 0; i < 6; i++ {
		r.submit(upsert("alice", "team-a", fmt.Sprintf("shared-%d", i), "v0"))
	}
	r.settled()
	before, _ := r.server.BranchTip(repoName, "main")

	// Keep the worker from pushing while the foreign commits land.
	r.http.SetDown(true)
	for i := 0; i < 5; i++ {
		r.submit(upsert("alice", "team-a", fmt.Sprintf("shared-%d", i), "v1"))
		r.submit(upsert("alice", "team-a", fmt.Sprintf("mine-%d", i), "new"))
	}
	r.waitStatus("the writes to be decided and pending", func(st Status) bool { return st.PendingWrite == 10 && r.idle() })

	var foreign []string
	push := func(change testenv.ForeignChange) {
		sha, err := r.server.PushForeign(repoName, "main", change)
		if err != nil {
			t.Fatal(err)
		}
		foreign = append(foreign, sha)
	}
	for i := 0; i < 10; i++ {
		push(testenv.ForeignChange{Files: map[string]string{
			fmt.Sprintf("docs/foreign-%d.txt", i%3): fmt.Sprintf("foreign %d\n", i),
		}, Message: fmt.Sprintf("foreign other file %d", i)})
	}
	for i := 0; i < 10; i++ {
		push(testenv.ForeignChange{Files: map[string]string{
			cmPath("team-a", fmt.Sprintf("shared-%d", i%6)): string(configMap("team-a", fmt.Sprintf("shared-%d", i%6), fmt.Sprintf("foreign-%d", i))),
		}, Message: fmt.Sprintf("foreign same file %d", i)})
	}
	r.http.SetDown(false)
	r.settled()

	// Foreign changes to files the worker did not decide to write survive.
	for i := 0; i < 3; i++ {
		want := fmt.Sprintf("foreign %d\n", 9-((9-i)%3))
		if got := r.file(fmt.Sprintf("docs/foreign-%d.txt", i)); got != want {
			t.Errorf("docs/foreign-%d.txt = %q, want the foreign %q", i, got, want)
		}
	}
	// shared-5 was written by the worker earlier but is in no pending write: the last
	// foreign edit of it (i=5) survives.
	if got, want := r.file(cmPath("team-a", "shared-5")), string(configMap("team-a", "shared-5", "foreign-5")); got != want {
		t.Errorf("shared-5 = %q, want the foreign edit %q", got, want)
	}
	// Every decided write is on the remote.
	for i := 0; i < 5; i++ {
		if got, want := r.file(cmPath("team-a", fmt.Sprintf("shared-%d", i))), string(configMap("team-a", fmt.Sprintf("shared-%d", i), "v1")); got != want {
			t.Errorf("shared-%d = %q, want the decided write %q", i, got, want)
		}
		if !r.hasFile(cmPath("team-a", fmt.Sprintf("mine-%d", i))) {
			t.Errorf("mine-%d is missing", i)
		}
	}
	// No commit is lost, and nothing was forced: old tips are ancestors of the new one.
	tip, _ := r.server.BranchTip(repoName, "main")
	for _, sha := range append([]string{before}, foreign...) {
		if ok, err := r.server.IsAncestor(repoName, sha, tip); err != nil || !ok {
			t.Fatalf("commit %s is not an ancestor of the final tip %s (force-push or lost commit)", sha, tip)
		}
	}
	if got := len(r.log()); got != 6+20+10 {
		t.Errorf("history has %d commits, want %d (6 seed, 20 foreign, 10 replayed)", got, 36)
	}
}
