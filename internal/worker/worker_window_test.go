package worker

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestBurstFromOneAuthorBecomesOneCommit(t *testing.T) {
	r := newRig(t, func(c *Config) { c.CommitWindow = 3 * time.Second })
	for i := 0; i < 500; i++ {
		r.submit(upsert("alice", "team-a", fmt.Sprintf("cm-%03d", i), "v"))
	}
	r.settled()
	log := r.log()
	if len(log) != 1 {
		t.Fatalf("500 upserts from one author made %d commits, want 1: %v", len(log), subjects(log))
	}
	if log[0].Author != "alice <alice@example.com>" || !strings.HasPrefix(log[0].Subject, "alice: create 500 in team-a") {
		t.Fatalf("commit = %+v", log[0])
	}
	files, _ := r.server.ListFiles(repoName, "main")
	if len(files) != 501 { // 500 documents and the bootstrap README.md
		t.Fatalf("%d files on the remote, want 501", len(files))
	}
}

func TestInterleavedAuthorsGetSeparateCommitsInOrder(t *testing.T) {
	r := newRig(t, func(c *Config) { c.CommitWindow = 2 * time.Second })
	r.submit(upsert("alice", "team-a", "a1", "1"))
	r.submit(upsert("alice", "team-a", "a2", "1"))
	r.submit(upsert("bob", "team-a", "b1", "1"))
	r.submit(upsert("alice", "team-a", "a3", "1"))
	r.settled()
	var authors []string
	log := r.log()
	for i := len(log) - 1; i >= 0; i-- {
		authors = append(authors, log[i].Author)
	}
	want := "alice <alice@example.com>,bob <bob@example.com>,alice <alice@example.com>"
	if strings.Join(authors, ",") != want {
		t.Fatalf("commit authors oldest first = %v, want %s", authors, want)
	}
}

func TestZeroCommitWindowCommitsEveryEvent(t *testing.T) {
	r := newRig(t, func(c *Config) { c.CommitWindow = 0 })
	for i := 0; i < 5; i++ {
		r.submit(upsert("alice", "team-a", fmt.Sprintf("cm-%d", i), "v"))
	}
	r.settled()
	if log := r.log(); len(log) != 5 {
		t.Fatalf("5 events with commitWindow 0 made %d commits, want 5: %v", len(log), subjects(log))
	}
}

func TestSizeCapClosesTheWindow(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.CommitWindow = time.Minute
		c.MaxWindowBytes = 300
	})
	for i := 0; i < 6; i++ { // ~90 bytes each: the cap closes a window every 4 events
		r.submit(upsert("alice", "team-a", fmt.Sprintf("cm-%d", i), "v"))
	}
	r.waitFor("the first capped window to be pushed", func() bool {
		log, err := r.server.Log(repoName, "main")
		return err == nil && len(log) >= 1
	})
	if got := len(r.log()); got != 1 {
		t.Fatalf("commits after the cap = %d, want 1", got)
	}
	// The capped window holds the first four documents; the last two wait in a new one.
	for i := 0; i < 6; i++ {
		if got, want := r.hasFile(cmPath("team-a", fmt.Sprintf("cm-%d", i))), i < 4; got != want {
			t.Fatalf("cm-%d on the remote = %v, want %v (the cap closes the window at 300 bytes)", i, got, want)
		}
	}
}

func TestSaveClosesTheWindowAndReportsTheRemoteCommit(t *testing.T) {
	r := newRig(t, func(c *Config) { c.CommitWindow = time.Minute })
	r.submit(upsert("alice", "team-a", "cfg", "1"))
	reply, err := r.worker.Save(r.ctx(), "team/live", "release 1.2")
	if err != nil {
		t.Fatal(err)
	}
	var res SaveResult
	select {
	case res = <-reply:
	case <-time.After(90 * time.Second):
		t.Fatal("no answer to the save")
	}
	if res.Err != nil || res.SHA == "" {
		t.Fatalf("save = %+v", res)
	}
	tip, _ := r.server.BranchTip(repoName, "main")
	if tip != res.SHA {
		t.Fatalf("save reported %s, remote tip is %s", res.SHA, tip)
	}
	if log := r.log(); log[0].Subject != "release 1.2" {
		t.Fatalf("commit subject = %q, want the request's message", log[0].Subject)
	}
	noWindow, _ := r.worker.Save(r.ctx(), "team/live", "nothing open")
	if res := <-noWindow; !res.NothingCommitted {
		t.Fatalf("a save with no open window = %+v, want NothingCommitted", res)
	}
}

func TestSaveAfterAnotherAuthorClosedTheWindowWaitsForTheCommit(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.CommitWindow = time.Minute
		c.PushCooldown = time.Hour
	})
	r.submit(upsert("alice", "team-a", "first", "1"))
	first, err := r.worker.Save(r.ctx(), "team/live", "first")
	if err != nil {
		t.Fatal(err)
	}
	if res := <-first; res.SHA == "" {
		t.Fatalf("first save = %+v", res)
	}
	// alice's next window is closed by bob's event for another target; the cooldown
	// holds the push.
	r.setTarget(TargetConfig{Name: "team/other", Path: "clusters/other"})
	r.submit(upsert("alice", "team-a", "cfg", "1"))
	other := upsert("bob", "team-a", "x", "1")
	other.Target = "team/other"
	r.submit(other)
	reply, err := r.worker.Save(r.ctx(), "team/live", "too late for the window")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.worker.Status(r.ctx()); err != nil { // the loop has handled the save
		t.Fatal(err)
	}
	select {
	case res := <-reply:
		t.Fatalf("save answered %+v while alice's change is not on the remote", res)
	default:
	}
}

func TestAWindowWithoutAuthorNamesTheCommitterInItsMessage(t *testing.T) {
	r := newRig(t, func(c *Config) { c.CommitWindow = 3 * time.Second })
	for _, name := range []string{"anonymous", "nameless"} {
		ev := upsert("", "team-a", name, "1")
		ev.Author = Author{}
		r.submit(ev)
	}
	r.settled()
	log := r.log()
	if !strings.HasPrefix(log[0].Subject, "GitOps Reverser: ") {
		t.Fatalf("subject %q does not name the committer", log[0].Subject)
	}
}

func TestEventsOfATargetNotYetSetWaitForIt(t *testing.T) {
	r := newRig(t)
	ev := upsert("alice", "team-a", "early", "1")
	ev.Target = "team/later"
	r.submit(ev)
	r.submit(upsert("alice", "team-a", "other-target", "1"))
	r.settled()
	if r.hasFile("later/team-a/core/configmaps/early.yaml") {
		t.Fatal("a batch of an unknown target was written somewhere")
	}
	r.setTarget(TargetConfig{Name: "team/later", Path: "later", Prune: PruneOnEvent})
	r.waitFor("the early event once its target is set", func() bool { return r.hasFile("later/team-a/core/configmaps/early.yaml") })
}

func TestTrailersOfAWindowsEventsEndItsMessageOnce(t *testing.T) {
	r := newRig(t)
	a := upsert("alice", "team-a", "one", "1")
	a.Trailers = []string{"Audit-ID: 1111", "Kubernetes-User: alice"}
	b := upsert("alice", "team-a", "two", "1")
	b.Trailers = []string{"Audit-ID: 2222", "Kubernetes-User: alice"}
	r.submit(a)
	r.submit(b)
	r.settled()
	out, err := exec.Command("git", "--git-dir", r.server.Root()+"/"+repoName, "log", "-1", "--format=%(trailers:only,unfold)", "main").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "Audit-ID: 1111\nKubernetes-User: alice\nAudit-ID: 2222\n"
	if got := strings.TrimSpace(string(out)) + "\n"; got != want {
		t.Fatalf("trailers:\n%s\nwant\n%s", got, want)
	}
}

// Under one author's steady stream there is never a window of silence: the window closes by
// age after three windows (never before 2 s), so a change waits at most that long to be
// committed, and a burst shorter than that is still one commit.
func TestASteadyStreamClosesItsWindowAfterThreeWindows(t *testing.T) {
	for _, tc := range []struct {
		window, maxAge time.Duration
	}{
		{time.Second, 3 * time.Second},
		{5 * time.Second, 15 * time.Second},
		{100 * time.Millisecond, 2 * time.Second},
	} {
		cfg := Config{CommitWindow: tc.window}
		cfg.applyDefaults()
		opened := time.Unix(1000, 0)
		w := newWindow(upsert("alice", "team-a", "cfg", "0"), opened)
		for at := opened; at.Before(opened.Add(time.Minute)); at = at.Add(tc.window / 10) {
			w.add(upsert("alice", "team-a", "cfg", at.String()), at)
		}
		at, reason := w.deadline(&cfg)
		if reason != closeMaxAge || !at.Equal(opened.Add(tc.maxAge)) {
			t.Errorf("commitWindow %s: a steady stream's window closes at +%s (%s), want +%s by age",
				tc.window, at.Sub(opened), reason, tc.maxAge)
		}
	}
}
