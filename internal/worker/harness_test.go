package worker

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"golang.org/x/crypto/ssh"

	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

const repoName = "mirror.git"

// rig is a branch worker writing a real repository through the smart HTTP front end.
type rig struct {
	t      *testing.T
	server *testenv.GitServer
	http   *testenv.HTTPFrontend
	worker *Worker
	logs   *syncBuffer
	cancel context.CancelFunc
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// captureLogger writes every log line, errors included, into buf.
func captureLogger(buf *syncBuffer) logr.Logger {
	return funcr.New(func(prefix, args string) {
		fmt.Fprintln(buf, prefix, args)
	}, funcr.Options{Verbosity: 10})
}

type rigOption func(*Config)

func newRig(t *testing.T, opts ...rigOption) *rig {
	t.Helper()
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo(repoName); err != nil {
		t.Fatal(err)
	}
	front := g.ServeHTTP(t, testenv.HTTPAuth{Username: "bot", Password: "bot-password"})
	return startRig(t, g, front, opts...)
}

// rigOn starts a rig on a branch that already holds files: the worker's first fetch sees
// them, so its first plan is made on them.
func rigOn(t *testing.T, files map[string]string, opts ...rigOption) *rig {
	t.Helper()
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo(repoName); err != nil {
		t.Fatal(err)
	}
	if _, err := g.PushForeign(repoName, "main", testenv.ForeignChange{Files: files}); err != nil {
		t.Fatal(err)
	}
	return startRig(t, g, g.ServeHTTP(t, testenv.HTTPAuth{Username: "bot", Password: "bot-password"}), opts...)
}

func startRig(t *testing.T, g *testenv.GitServer, front *testenv.HTTPFrontend, opts ...rigOption) *rig {
	t.Helper()
	logs := &syncBuffer{}
	cfg := rigConfig(t, front, logs, opts...)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := Start(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		<-w.Done()
		// Every change of every test ends, and is counted once (ledger.go); the loop has
		// returned, so its state can be read here.
		if l := w.state.ledgerNow(); !l.Balanced() || l.Open != 0 {
			t.Errorf("the ledger does not add up after the worker stopped: %+v", l)
		}
	})
	r := &rig{t: t, server: g, http: front, worker: w, logs: logs, cancel: cancel}
	r.setTarget(TargetConfig{Name: "team/live", Path: "clusters/dev", Prune: PruneOnEvent})
	return r
}

// rigConfig is the configuration of a rig's worker on front's repository.
func rigConfig(t *testing.T, front *testenv.HTTPFrontend, logs *syncBuffer, opts ...rigOption) Config {
	cfg := Config{
		URL:             front.URL(repoName),
		Branch:          "main",
		Credentials:     credentials("bot", "bot-password"),
		AllowedBranches: []string{"main"},
		Committer:       Author{Name: "GitOps Reverser", Email: "bot@example.com"},
		CommitWindow:    300 * time.Millisecond,
		RetryMin:        50 * time.Millisecond,
		RetryMax:        500 * time.Millisecond,
		Dir:             t.TempDir(),
		Log:             captureLogger(logs),
	}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

func (r *rig) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	r.t.Cleanup(cancel)
	return ctx
}

func (r *rig) setTarget(cfg TargetConfig) {
	r.t.Helper()
	if err := r.worker.SetTarget(r.ctx(), cfg); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) submit(ev Event) {
	r.t.Helper()
	if err := r.worker.Submit(r.ctx(), ev); err != nil {
		r.t.Fatal(err)
	}
}

// waitFor polls cond until it holds; the deadline is generous for a loaded machine.
func (r *rig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.t.Fatalf("timed out waiting for %s; worker log:\n%s", what, r.logs.String())
}

// waitStatus polls the worker's status until cond holds, and returns that status.
func (r *rig) waitStatus(what string, cond func(Status) bool) Status {
	r.t.Helper()
	var st Status
	r.waitFor(what, func() bool {
		var err error
		st, err = r.worker.Status(r.ctx())
		return err == nil && cond(st)
	})
	return st
}

// settled waits until the worker has nothing open, closed or pending.
func (r *rig) settled() Status {
	r.t.Helper()
	st := r.waitStatus("the worker to push everything", func(st Status) bool { return st.Ready && st.PendingWrite == 0 && r.idle() })
	if !st.Ledger.Balanced() {
		r.t.Errorf("the ledger does not add up: %+v", st.Ledger)
	}
	return st
}

// idle asks the loop whether a window or closed batch is waiting.
func (r *rig) idle() bool {
	reply := make(chan bool, 1)
	if err := r.worker.send(r.ctx(), probeMsg{reply}); err != nil {
		return false
	}
	return <-reply
}

func (r *rig) log() []testenv.Commit {
	r.t.Helper()
	log, err := r.server.Log(repoName, "main")
	if err != nil {
		r.t.Fatal(err)
	}
	return log
}

func (r *rig) file(path string) string {
	r.t.Helper()
	content, err := r.server.ReadFile(repoName, "main", path)
	if err != nil {
		r.t.Fatal(err)
	}
	return string(content)
}

func (r *rig) hasFile(path string) bool {
	files, err := r.server.ListFiles(repoName, "main")
	if err != nil {
		return false
	}
	for _, f := range files {
		if f == path {
			return true
		}
	}
	return false
}

var configMapType = layout.TypeInfo{Group: "", Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}

func configMap(ns, name, value string) []byte {
	return []byte(fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  key: %s\n", name, ns, value))
}

func upsert(author, ns, name, value string) Event {
	return Event{
		Target: "team/live",
		Author: Author{Name: author, Email: author + "@example.com"},
		Op:     OpUpsert,
		Type:   configMapType,
		ID:     layout.Identity{Kind: "ConfigMap", Namespace: ns, Name: name},
		Doc:    configMap(ns, name, value),
	}
}

func deleteEvent(author, ns, name string) Event {
	return Event{
		Target: "team/live",
		Author: Author{Name: author, Email: author + "@example.com"},
		Op:     OpDelete,
		Type:   configMapType,
		ID:     layout.Identity{Kind: "ConfigMap", Namespace: ns, Name: name},
	}
}

// cmPath is where a new ConfigMap lands under the target folder: the canonical path
// (docs/layout.md#where-a-new-object-goes).
func cmPath(ns, name string) string {
	return "clusters/dev/" + ns + "/core/configmaps/" + name + ".yaml"
}

func subjects(log []testenv.Commit) []string {
	var out []string
	for _, c := range log {
		out = append(out, strings.SplitN(c.Subject, "\n", 2)[0])
	}
	return out
}

func credentials(user, password string) gitrepo.Credentials {
	return gitrepo.Credentials{Username: user, Password: password}
}

func marshalAuthorizedKey(k *testenv.SSHKey) []byte { return ssh.MarshalAuthorizedKey(k.Public) }
