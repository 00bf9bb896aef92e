package worker

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// pushGate makes the Git server's pre-receive hook wait until the test opens the gate: a
// push the worker makes meanwhile stays in flight.
type pushGate struct{ entered, open string }

func gatePushes(t *testing.T, r *rig) pushGate {
	t.Helper()
	dir, err := r.server.RepoDir(repoName)
	if err != nil {
		t.Fatal(err)
	}
	g := pushGate{entered: filepath.Join(t.TempDir(), "entered"), open: filepath.Join(t.TempDir(), "open")}
	hook := fmt.Sprintf("#!/bin/sh\ncat >/dev/null\ntouch %q\nwhile [ ! -e %q ]; do sleep 0.02; done\n", g.entered, g.open)
	if err := os.WriteFile(filepath.Join(dir, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	return g
}

func (g pushGate) reached() bool {
	_, err := os.Stat(g.entered)
	return err == nil
}

func (g pushGate) release(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(g.open, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Edits that arrive while a push is in flight are committed and pushed together right
// after it: one more push, not one push per edit (docs/branch-worker.md#push).
func TestEditsMadeDuringAPushGoOutTogetherInTheNextPush(t *testing.T) {
	r := newRig(t, func(c *Config) { c.CommitWindow = 0 })
	r.submit(upsert("alice", "team-a", "first", "1"))
	r.settled()
	before := r.server.Pushes(repoName)

	gate := gatePushes(t, r)
	r.submit(upsert("alice", "team-a", "second", "1"))
	r.waitFor("the second write's push to reach the server's hook", gate.reached)
	const during = 10
	for i := range during {
		r.submit(upsert("alice", "team-a", fmt.Sprintf("during-%d", i), "1"))
	}
	gate.release(t)
	r.settled()

	if got := r.server.Pushes(repoName) - before; got != 2 {
		t.Fatalf("%d pushes after the first; want 2: the gated one, and one for the %d edits made during it", got, during)
	}
	for i := range during {
		if !r.hasFile(cmPath("team-a", fmt.Sprintf("during-%d", i))) {
			t.Fatalf("edit during-%d is not on the remote", i)
		}
	}
	// commitWindow 0: each edit is still a commit of its own.
	if got := len(r.log()); got != 2+during {
		t.Fatalf("%d commits, want %d", got, 2+during)
	}
}

// A successful push leaves no cooldown: the next write may be pushed at once. Only a
// failure delays the next push (its backoff).
func TestASuccessfulPushDoesNotDelayTheNext(t *testing.T) {
	r := newRig(t, func(c *Config) { c.CommitWindow = 0 })
	r.submit(upsert("alice", "team-a", "first", "1"))
	st := r.settled()
	if st.Pushes != 1 {
		t.Fatalf("%d pushes, want 1", st.Pushes)
	}
	if st.NextPushAt.After(st.LastPush) {
		t.Fatalf("after a push at %s the next may only leave at %s; want no wait", st.LastPush, st.NextPushAt)
	}
}
