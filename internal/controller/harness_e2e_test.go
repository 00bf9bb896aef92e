//go:build e2e

package controller_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/operator"
	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
	"github.com/gitops-reverser/gitops-reverser/internal/worker"
)

// The tests of this package run the whole operator (operator.Run: manager, reconcilers,
// pipeline) out of cluster against a real kube-apiserver, writing to a real Git server.

var cp *testenv.ControlPlane

func TestMain(m *testing.M) {
	// The operator's logs go to stderr with GITOPS_REVERSER_TEST_LOGS=1, else nowhere.
	logs := io.Discard
	if os.Getenv("GITOPS_REVERSER_TEST_LOGS") != "" {
		logs = os.Stderr
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs)))
	var err error
	cp, err = testenv.StartControlPlane()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := cp.Stop(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "stop control plane:", err)
		code = 1
	}
	os.Exit(code)
}

// deadline is how long a test waits for a condition on this loaded machine.
const deadline = 3 * time.Minute

var nsCounter atomic.Int64

// newNamespace creates a namespace of its own for one test.
func newNamespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%s", nsCounter.Add(1), strings.ToLower(strings.ReplaceAll(t.Name(), "_", "-")))
	if len(name) > 50 {
		name = name[:50]
	}
	name = strings.TrimRight(name, "-")
	if err := cp.CreateNamespace(ctxOf(t), name, labels); err != nil {
		t.Fatal(err)
	}
	return name
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// runningOperator is the operator started by a test.
type runningOperator struct {
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// startOperator runs the operator against cfg until the test ends (or stop).
func startOperator(t *testing.T, cfg *rest.Config, workDir string) *runningOperator {
	t.Helper()
	return startOperatorWith(t, cfg, workDir, nil)
}

// startOperatorWith is startOperator with changed options.
func startOperatorWith(t *testing.T, cfg *rest.Config, workDir string, change func(*operator.Options)) *runningOperator {
	t.Helper()
	kubeconfig, err := servers.WriteKubeconfigFor(cfg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	op := &runningOperator{cancel: cancel, done: make(chan error, 1)}
	opts := operator.Options{
		Kubeconfig: kubeconfig, MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		LeaderElectionID: "test", WorkDir: workDir,
		Tune: func(c *worker.Config) {
			c.PushCooldown = 50 * time.Millisecond
			c.RetryMin, c.RetryMax = 100*time.Millisecond, 2*time.Second
		},
	}
	if change != nil {
		change(&opts)
	}
	go func() { op.done <- operator.Run(ctx, opts) }()
	t.Cleanup(func() { op.stop(t) })
	return op
}

// stop ends the operator and waits for it (idempotent).
func (o *runningOperator) stop(t *testing.T) {
	t.Helper()
	o.once.Do(func() {
		o.cancel()
		select {
		case err := <-o.done:
			if err != nil {
				t.Errorf("operator: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("the operator did not stop within a minute")
		}
	})
}

// repo is one repository on a Git server, reachable over HTTP with a password.
type repo struct {
	t      *testing.T
	server *testenv.GitServer
	http   *testenv.HTTPFrontend
	name   string
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo("mirror.git"); err != nil {
		t.Fatal(err)
	}
	front := g.ServeHTTP(t, testenv.HTTPAuth{Username: "bot", Password: "s3cret-pass"})
	return &repo{t: t, server: g, http: front, name: "mirror.git"}
}

func (r *repo) url() string { return r.http.URL(r.name) }

// file returns a file of branch main ("" when absent).
func (r *repo) file(path string) string {
	b, err := r.server.ReadFile(r.name, "main", path)
	if err != nil {
		return ""
	}
	return string(b)
}

func (r *repo) has(path string) bool {
	_, err := r.server.ReadFile(r.name, "main", path)
	return err == nil
}

func (r *repo) log() []testenv.Commit {
	log, err := r.server.Log(r.name, "main")
	if err != nil {
		return nil
	}
	return log
}

func (r *repo) files() []string {
	files, err := r.server.ListFiles(r.name, "main")
	if err != nil {
		return nil
	}
	return files
}

// create makes obj, failing the test on error, and deletes it when the test ends: the
// control plane is shared, and every later test's operator would otherwise serve it too.
func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := cp.Client.Create(ctxOf(t), obj); err != nil {
		t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
	}
	t.Cleanup(func() { _ = cp.Client.Delete(context.Background(), obj) })
}

// providerWithSecret creates a Secret with the repository's password and a GitProvider.
func providerWithSecret(t *testing.T, ns, name string, r *repo, mutate ...func(*v1.GitProvider)) *v1.GitProvider {
	t.Helper()
	create(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-auth"},
		StringData: map[string]string{"username": "bot", "password": "s3cret-pass"}})
	p := &v1.GitProvider{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.GitProviderSpec{
		URL: r.url(), SecretRef: &v1.LocalObjectReference{Name: name + "-auth"}, AllowedBranches: []string{"main"},
		Push: v1.PushSpec{CommitWindow: &metav1.Duration{Duration: 500 * time.Millisecond}},
	}}
	for _, m := range mutate {
		m(p)
	}
	create(t, p)
	return p
}

func target(ns, name, provider, path string, prune v1.PruneMode) *v1.GitTarget {
	return &v1.GitTarget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.GitTargetSpec{
		GitProviderRef: v1.GitProviderReference{Name: provider}, Branch: "main", Path: path, Prune: v1.PruneSpec{Mode: prune},
	}}
}

func watchRule(ns, name, targetName string, rules ...v1.ResourceRule) *v1.WatchRule {
	return &v1.WatchRule{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.WatchRuleSpec{
		TargetRef: v1.LocalObjectReference{Name: targetName}, Rules: rules,
	}}
}

func configMapsRule() v1.ResourceRule {
	return v1.ResourceRule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}
}

func configMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %s waiting for %s", deadline, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// condition returns the condition typ of obj as the API server has it.
func condition(t *testing.T, obj client.Object, list func() []metav1.Condition, typ string) *metav1.Condition {
	t.Helper()
	if err := cp.Client.Get(ctxOf(t), client.ObjectKeyFromObject(obj), obj); err != nil {
		return nil
	}
	return meta.FindStatusCondition(list(), typ)
}

// waitCondition waits until obj's condition typ has status and reason, and returns it.
func waitCondition(t *testing.T, obj client.Object, list func() []metav1.Condition, typ string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var got *metav1.Condition
	end := time.Now().Add(deadline)
	for {
		got = condition(t, obj, list, typ)
		if got != nil && got.Status == status && (reason == "" || got.Reason == reason) {
			return got
		}
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s %s condition %s=%s (%s); last: %+v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), typ, status, reason, got)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func targetReady(t *testing.T, gt *v1.GitTarget) {
	t.Helper()
	waitCondition(t, gt, func() []metav1.Condition { return gt.Status.Conditions }, v1.ConditionReady, metav1.ConditionTrue, "")
}

func keyOf(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

func subjects(log []testenv.Commit) []string {
	out := make([]string, len(log))
	for i, c := range log {
		out[i] = c.Subject
	}
	return out
}

func secretWith(ns, name string, data map[string]string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, StringData: data}
}
