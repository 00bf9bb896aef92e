//go:build e2e

package twoway

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
	"github.com/gitops-reverser/gitops-reverser/internal/operator"
	"github.com/gitops-reverser/gitops-reverser/internal/pipeline"
	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// deadline is how long a test waits for a condition on this loaded machine.
const deadline = 3 * time.Minute

func TestMain(m *testing.M) {
	logs := io.Discard
	if os.Getenv("GITOPS_REVERSER_TEST_LOGS") != "" {
		logs = os.Stderr
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs)))
	os.Exit(m.Run())
}

// loop is one two-way set-up: a control plane with a GitOps applier, a repository, the
// operator, and a GitTarget whose folder "apps" the applier object "apps" (a Flux
// Kustomization or an Argo CD Application) applies through a trigger.
type loop struct {
	t       testing.TB
	applier gitopsApplier
	cp      *testenv.ControlPlane
	git     *testenv.GitServer
	front   *testenv.HTTPFrontend
	ns      string
	folder  string // where the target writes the namespace's ConfigMaps
	// pipeline is the running operator's (its branch workers answer applyStatus).
	pipeline atomic.Pointer[pipeline.Pipeline]
}

func newLoop(t testing.TB, a gitopsApplier) *loop {
	t.Helper()
	return newLoopWith(t, a, nil)
}

// newLoopWith is newLoop with changed operator options.
func newLoopWith(t testing.TB, a gitopsApplier, change func(*operator.Options)) *loop {
	t.Helper()
	l := newStoppedLoop(t, a)
	l.startOperator(change)
	return l
}

// newStoppedLoop sets everything up but the operator (startOperator starts it). The
// appliers of also run too, without an applier object.
func newStoppedLoop(t testing.TB, a gitopsApplier, also ...gitopsApplier) *loop {
	t.Helper()
	all := append([]gitopsApplier{a}, also...)
	var crds []testenv.ControlPlaneOption
	for _, each := range all {
		crds = append(crds, each.crds(t))
	}
	cp := testenv.NewControlPlane(t, crds...)
	l := &loop{t: t, applier: a, cp: cp, git: testenv.NewGitServer(t), ns: "team"}
	l.folder = "apps/" + l.ns + "/core/configmaps/"
	if err := l.git.CreateRepo("fleet.git"); err != nil {
		t.Fatal(err)
	}
	l.front = l.git.ServeHTTP(t, testenv.HTTPAuth{Username: "bot", Password: "s3cret-pass"})
	// The branch exists with the folder the applier applies before anything else.
	if _, err := l.git.PushForeign("fleet.git", "main", testenv.ForeignChange{Files: map[string]string{"apps/README.md": "applied by " + a.String() + "\n"}}); err != nil {
		t.Fatal(err)
	}
	if err := cp.CreateNamespace(l.ctx(), l.ns, nil); err != nil {
		t.Fatal(err)
	}
	for _, each := range all {
		each.start(l)
	}
	l.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "git"}, StringData: map[string]string{"username": "bot", "password": "s3cret-pass"}})
	l.create(&v1.GitProvider{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "origin"}, Spec: v1.GitProviderSpec{
		URL: l.front.URL("fleet.git"), SecretRef: &v1.LocalObjectReference{Name: "git"}, AllowedBranches: []string{"main"},
		Push: v1.PushSpec{CommitWindow: &metav1.Duration{Duration: 300 * time.Millisecond}}}})
	a.source(l, "apps", "apps")
	a.trigger(l)
	l.create(&v1.GitTarget{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "apps"}, Spec: v1.GitTargetSpec{
		GitProviderRef: v1.GitProviderReference{Name: "origin"}, Branch: "main", Path: "apps",
		ApplyTriggerRef: &v1.ApplyTriggerReference{Kind: a.triggerKind(), Name: "apps"}}})
	l.create(&v1.WatchRule{ObjectMeta: metav1.ObjectMeta{Namespace: l.ns, Name: "cms"}, Spec: v1.WatchRuleSpec{
		TargetRef: v1.LocalObjectReference{Name: "apps"},
		Rules:     []v1.ResourceRule{{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}})
	return l
}

func (l *loop) startOperator(change func(*operator.Options)) {
	l.t.Helper()
	kubeconfig, err := servers.WriteKubeconfigFor(l.cp.Config, l.t.TempDir())
	if err != nil {
		l.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	opts := operator.Options{Kubeconfig: kubeconfig, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		LeaderElectionID: "twoway", WorkDir: l.t.TempDir(), Tune: func(c *worker.Config) {
			c.PushCooldown, c.ApplyPoll = 50*time.Millisecond, time.Second
			c.RetryMin, c.RetryMax = 100*time.Millisecond, 2*time.Second
		}}
	opts.OnPipeline = func(p *pipeline.Pipeline) { l.pipeline.Store(p) }
	if change != nil {
		change(&opts)
	}
	go func() { done <- operator.Run(ctx, opts) }()
	l.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				l.t.Errorf("operator: %v", err)
			}
		case <-time.After(time.Minute):
			l.t.Error("the operator did not stop within a minute")
		}
	})
	l.t.Cleanup(l.explainFailure) // runs first: the operator still runs
	l.t.Cleanup(l.noEchoCommits)
}

// noEchoCommits fails the test when the history holds an echo commit (echo_commits_e2e_test.go).
func (l *loop) noEchoCommits() {
	echoes, err := l.echoCommits()
	if err != nil {
		l.t.Errorf("count the echo commits: %v", err)
	}
	for _, e := range echoes {
		l.t.Errorf("echo commit: %s", e)
	}
}

// explainFailure logs, when the test failed, the history of main and what the target's
// applies were doing: the two things a reader of a CI failure needs first.
func (l *loop) explainFailure() {
	if !l.t.Failed() {
		return
	}
	if log, err := l.git.Log("fleet.git", "main"); err == nil {
		var b strings.Builder
		for _, c := range log {
			fmt.Fprintf(&b, "  %s %s: %s\n", c.SHA[:12], c.Author, c.Subject)
		}
		l.t.Logf("history of main, newest first:\n%s", b.String())
	}
	st, err := l.readApplyStatus()
	l.t.Logf("the target's applies: %+v (%v)", st, err)
}

func (l *loop) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	l.t.Cleanup(cancel)
	return ctx
}

func (l *loop) create(obj client.Object) {
	l.t.Helper()
	if err := l.cp.Client.Create(l.ctx(), obj); err != nil {
		l.t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
}

// pushForeign pushes a commit as another Git user would. The operator pushes to the same
// branch: a push it makes meanwhile rejects this one, which is then made again on the new
// tip, as that user would.
func (l *loop) pushForeign(change testenv.ForeignChange) (string, error) {
	var err error
	for attempt := 0; attempt < 10; attempt++ {
		var sha string
		if sha, err = l.git.PushForeign("fleet.git", "main", change); err == nil || !strings.Contains(err.Error(), "rejected") {
			return sha, err
		}
	}
	return "", err
}

// setValue sets v of the namespace's ConfigMap name through the API, reading it again when
// Flux wrote it between the read and the update (as kubectl edit would).
func (l *loop) setValue(name, v string) {
	l.t.Helper()
	if err := l.trySetValue(name, v); err != nil {
		l.t.Fatal(err)
	}
}

// trySetValue is setValue returning its error, for goroutines other than the test's.
func (l *loop) trySetValue(name, v string) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := l.cp.Client.Get(l.ctx(), client.ObjectKey{Namespace: l.ns, Name: name}, cm); err != nil {
			return err
		}
		cm.Data["v"] = v
		return l.cp.Client.Update(l.ctx(), cm)
	})
	if err != nil {
		return fmt.Errorf("set %s to %s: %w", name, v, err)
	}
	return nil
}

// forceResync edits the WatchRule's selector (it still selects everything): the subscription
// is renewed and the streams send the target a new snapshot of the cluster.
func (l *loop) forceResync() {
	l.t.Helper()
	var rule v1.WatchRule
	if err := l.cp.Client.Get(l.ctx(), client.ObjectKey{Namespace: l.ns, Name: "cms"}, &rule); err != nil {
		l.t.Fatal(err)
	}
	rule.Spec.Rules[0].LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "never-set", Operator: metav1.LabelSelectorOpDoesNotExist}}}
	if err := l.cp.Client.Update(l.ctx(), &rule); err != nil {
		l.t.Fatal(err)
	}
}

// inGit returns the file of main, "" when absent.
func (l *loop) inGit(path string) string {
	b, err := l.git.ReadFile("fleet.git", "main", path)
	if err != nil {
		return ""
	}
	return string(b)
}

// live returns the value v of the namespace's ConfigMap name, "" when absent.
func (l *loop) live(name string) string {
	var cm corev1.ConfigMap
	if err := l.cp.Client.Get(l.ctx(), client.ObjectKey{Namespace: l.ns, Name: name}, &cm); err != nil {
		return ""
	}
	return cm.Data["v"]
}

// adopted reports whether the applier applied the namespace's ConfigMap name: its marks
// name the applier object "apps" (whose inventory holds it, so a Git-side delete prunes it).
func (l *loop) adopted(name string) bool {
	var cm corev1.ConfigMap
	if err := l.cp.Client.Get(l.ctx(), client.ObjectKey{Namespace: l.ns, Name: name}, &cm); err != nil {
		return false
	}
	return l.applier.owns(&cm, "apps")
}

// appliesSettled waits until the target's Applied condition is True: no apply is due or in
// flight (the adoption of what the test created is done).
func (l *loop) appliesSettled() {
	l.t.Helper()
	waitFor(l.t, "no apply due or in flight", func() bool {
		var gt v1.GitTarget
		if err := l.cp.Client.Get(l.ctx(), client.ObjectKey{Namespace: l.ns, Name: "apps"}, &gt); err != nil {
			return false
		}
		c := meta.FindStatusCondition(gt.Status.Conditions, controller.ConditionApplied)
		return c != nil && c.Status == metav1.ConditionTrue
	})
}

// applyStatus asks the target's branch worker what its applies are doing. The question goes
// through the worker's loop: it is answered after whatever the loop was doing when asked.
func (l *loop) applyStatus() worker.ApplyStatus {
	l.t.Helper()
	st, err := l.readApplyStatus()
	if err != nil {
		l.t.Fatal(err)
	}
	return st
}

// readApplyStatus is applyStatus returning its error.
func (l *loop) readApplyStatus() (worker.ApplyStatus, error) {
	st, err := l.workerStatus()
	return st.Applies[l.ns+"/apps"], err
}

// workerStatus asks the target's branch worker for its status; empty while there is no
// operator or no worker yet.
func (l *loop) workerStatus() (worker.Status, error) {
	p := l.pipeline.Load()
	if p == nil {
		return worker.Status{}, nil
	}
	key, ok := p.Router.Key(l.ns + "/apps")
	if !ok {
		return worker.Status{}, nil
	}
	w, ok := p.Workers.Lookup(key)
	if !ok {
		return worker.Status{}, nil
	}
	return w.Status(l.ctx())
}

// commitsTouching lists the commits of main that changed path, newest first.
func (l *loop) commitsTouching(path string) []testenv.Commit {
	l.t.Helper()
	log, err := l.git.Log("fleet.git", "main", path)
	if err != nil {
		l.t.Fatal(err)
	}
	return log
}

func configMapDoc(ns, name, value string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\ndata:\n  v: %q\n", name, ns, value)
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %s waiting for %s", deadline, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
