package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// rotatingConfigs returns the configuration of one branch under two credentials the server
// both accepts: each Ensure that alternates between them replaces the worker, as a
// credential rotation does while every target of the branch is reconciled.
func rotatingConfigs(t *testing.T) [2]Config {
	t.Helper()
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo(repoName); err != nil {
		t.Fatal(err)
	}
	front := g.ServeHTTP(t, testenv.HTTPAuth{Username: "bot", Password: "bot-password", BearerToken: "bot-token"})
	logs := &syncBuffer{}
	base := Config{
		URL: front.URL(repoName), Branch: "main", AllowedBranches: []string{"main"},
		CommitWindow: 0, PushCooldown: 10 * time.Millisecond,
		RetryMin: 50 * time.Millisecond, RetryMax: 500 * time.Millisecond,
		Log: captureLogger(logs),
	}
	basic, bearer := base, base
	basic.Credentials = credentials("bot", "bot-password")
	bearer.Credentials = gitrepo.Credentials{BearerToken: "bot-token"}
	return [2]Config{basic, bearer}
}

// busy gives a worker a target and an event, so that stopping it includes a last push to
// the real server: the window in which a second worker must not start. A worker replaced
// meanwhile answers ErrStopped, which is fine.
func busy(w *Worker, caller, round int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = w.SetTarget(ctx, TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent})
	_ = w.Submit(ctx, upsert("alice", "team-a", fmt.Sprintf("c%d", caller), fmt.Sprint(round)))
}

// Reconciles that rotate a branch's credentials concurrently (four at a time, as the
// GitTarget controller runs them), releases and a final StopAll never leave two workers
// running on one branch at any moment, nor one running after StopAll.
func TestConcurrentReplacementsNeverRunTwoWorkersOnOneBranch(t *testing.T) {
	cfgs := rotatingConfigs(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := NewRegistry(ctx, t.TempDir())
	const callers, rounds = 4, 8
	var wg sync.WaitGroup
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				w, key, _, err := reg.Ensure(cfgs[(c+i)%2])
				if err != nil {
					t.Errorf("caller %d round %d: %v", c, i, err)
					return
				}
				busy(w, c, i)
				if c == 0 && i%3 == 2 {
					reg.Release(key) // the branch's last target left
				}
			}
		}()
	}
	wg.Wait()
	if n := reg.Overlaps(); n != 0 {
		t.Fatalf("%d times a worker started while another worker of its branch still ran", n)
	}
	reg.StopAll()
	if n := reg.Running(); n != 0 {
		t.Fatalf("%d workers still run after StopAll", n)
	}
	if _, _, _, err := reg.Ensure(cfgs[0]); err == nil {
		t.Fatal("Ensure after StopAll returned a worker")
	}
	if n := reg.Running(); n != 0 {
		t.Fatalf("Ensure after StopAll started a worker (%d running)", n)
	}
}

// StopAll racing reconciles: whatever Ensure was doing when StopAll began, nothing runs
// once StopAll has returned, and nothing starts later.
func TestStopAllRacingEnsureLeavesNoWorkerRunning(t *testing.T) {
	cfgs := rotatingConfigs(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := NewRegistry(ctx, t.TempDir())
	var ensured atomic.Int32
	var wg sync.WaitGroup
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ { // until StopAll refuses them
				w, _, _, err := reg.Ensure(cfgs[(c+i)%2])
				if errors.Is(err, ErrRegistryStopped) {
					return
				}
				if err != nil {
					t.Errorf("caller %d: %v", c, err)
					return
				}
				ensured.Add(1)
				busy(w, c, i)
			}
		}()
	}
	deadline := time.Now().Add(2 * time.Minute)
	for ensured.Load() < 8 && time.Now().Before(deadline) { // replacements are under way
		time.Sleep(10 * time.Millisecond)
	}
	reg.StopAll()
	if n := reg.Running(); n != 0 {
		t.Fatalf("%d workers still run after StopAll", n)
	}
	wg.Wait()
	if n := reg.Running(); n != 0 {
		t.Fatalf("%d workers started after StopAll", n)
	}
	if n := reg.Overlaps(); n != 0 {
		t.Fatalf("%d times a worker started while another worker of its branch still ran", n)
	}
}
