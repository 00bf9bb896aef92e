package worker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

const wrongPassword = "wrong-password-9f3a7c"

func TestWrongPasswordIsReportedWithoutRetryStormOrLeak(t *testing.T) {
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo(repoName); err != nil {
		t.Fatal(err)
	}
	front := g.ServeHTTP(t, testenv.HTTPAuth{Username: "bot", Password: "right"})
	r := startRig(t, g, front, func(c *Config) {
		c.Credentials = gitrepo.Credentials{Username: "bot", Password: wrongPassword}
		c.RetryMin, c.RetryMax = 10*time.Millisecond, time.Hour
	})
	r.submit(upsert("alice", "team-a", "cfg", "1"))
	st := r.waitStatus("the authentication failure to be reported", func(st Status) bool { return st.LastError != "" })
	if !strings.Contains(st.LastError, "authentication") {
		t.Fatalf("LastError = %q, want it to say authentication failed", st.LastError)
	}
	if wait := time.Until(st.RetryAt); wait < 30*time.Minute {
		t.Fatalf("a refused password is retried in %s; want the maximum backoff (no retry storm)", wait)
	}
	requests := front.Requests()
	st, _ = r.worker.Status(r.ctx())
	if front.Requests() != requests || st.Failures != 1 {
		t.Fatalf("the worker kept retrying: %d requests, %d failures", front.Requests(), st.Failures)
	}
	r.cancel()
	<-r.worker.Done()
	if strings.Contains(r.logs.String(), wrongPassword) || strings.Contains(st.LastError, wrongPassword) {
		t.Fatalf("the password appears in the logs or status:\n%s", r.logs.String())
	}
	if !strings.Contains(r.logs.String(), "authentication") {
		t.Fatalf("the logs do not report the failure:\n%s", r.logs.String())
	}
}

func TestUnknownSSHHostKeyFailsClosed(t *testing.T) {
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo(repoName); err != nil {
		t.Fatal(err)
	}
	client, err := testenv.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	front := g.ServeSSH(t, client.Public)
	impostor, err := testenv.NewSSHKey()
	if err != nil {
		t.Fatal(err)
	}
	host := strings.Fields(string(front.KnownHosts()))[0]
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := Start(ctx, Config{
		URL: front.URL(repoName), Branch: "main", AllowedBranches: []string{"main"},
		Credentials: gitrepo.Credentials{SSHPrivateKey: client.PrivateKeyPEM,
			KnownHosts: []byte(host + " " + string(marshalAuthorizedKey(impostor)))},
		CommitWindow: 10 * time.Millisecond, RetryMin: 10 * time.Millisecond, RetryMax: time.Hour,
		Dir: t.TempDir(), Log: captureLogger(logs),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetTarget(ctx, TargetConfig{Name: "team/live", Path: "."}); err != nil {
		t.Fatal(err)
	}
	if err := w.Submit(ctx, upsert("alice", "team-a", "cfg", "1")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	var st Status
	for time.Now().Before(deadline) {
		if st, err = w.Status(ctx); err == nil && st.LastError != "" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(st.LastError, "host key") {
		t.Fatalf("LastError = %q, want an unknown host key", st.LastError)
	}
	if time.Until(st.RetryAt) < 30*time.Minute {
		t.Fatal("an unknown host key is retried soon; want the maximum backoff")
	}
	if tip, _ := g.BranchTip(repoName, "main"); tip != "" {
		t.Fatal("something was pushed to a host whose key is unknown")
	}
	if strings.Contains(logs.String(), "PRIVATE KEY") {
		t.Fatal("key material in the logs")
	}
}

func TestBranchNotAllowedIsRefusedAtOnce(t *testing.T) {
	_, err := New(Config{URL: "https://git.example.com/a.git", Branch: "prod", AllowedBranches: []string{"main", "release-*"}, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), `branch "prod" is not allowed`) {
		t.Fatalf("New = %v, want a refusal naming the branch", err)
	}
}
