//go:build e2e

package controller_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
	"github.com/gitops-reverser/gitops-reverser/internal/kustomize"
	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// Helpers the kustomize e2e tests share: a repository pushed as a user would push it, the
// cluster made to hold what a folder renders, an operator with one GitTarget per folder,
// and checks of what the branch holds afterwards.

// kzConds lists a GitTarget's conditions for condition and waitCondition.
func kzConds(gt *v1.GitTarget) func() []metav1.Condition {
	return func() []metav1.Condition { return gt.Status.Conditions }
}

// kzPush pushes files as a user of the Git host would and returns the new tip.
func kzPush(t *testing.T, r *repo, files map[string]string, message string) string {
	t.Helper()
	tip, err := r.server.PushForeign(r.name, "main", testenv.ForeignChange{Files: files, Message: message})
	if err != nil {
		t.Fatal(err)
	}
	return tip
}

// kzPushAndApply pushes files to a new repository, as a user of the Git host would, and
// makes the cluster hold what folder renders. It returns the repository, the pushed tip and
// the objects created.
func kzPushAndApply(t *testing.T, files map[string]string, folder, message string) (*repo, string, []*unstructured.Unstructured) {
	t.Helper()
	r := newRepo(t)
	tip := kzPush(t, r, files, message)
	return r, tip, kzApplyRender(t, files, folder)
}

// kzStartOperator starts the operator with the GitProvider origin of r in namespace ns.
func kzStartOperator(t *testing.T, ns string, r *repo) {
	t.Helper()
	startOperator(t, cp.Config, t.TempDir())
	providerWithSecret(t, ns, "origin", r)
}

// kzTarget creates the GitTarget name of folder on origin, and a WatchRule of the same
// name that feeds it the resources of rules.
func kzTarget(t *testing.T, ns, name, folder string, rules ...v1.ResourceRule) *v1.GitTarget {
	t.Helper()
	gt := target(ns, name, "origin", folder, v1.PruneOnEvent)
	create(t, gt)
	create(t, watchRule(ns, name, name, rules...))
	return gt
}

// kzStartInSync starts the operator with the GitTarget name of folder (see kzTarget),
// waits until the target is Ready and its render matches live, and checks that the start
// committed nothing: the branch is still at tip.
func kzStartInSync(t *testing.T, r *repo, ns, name, folder, tip string, rules ...v1.ResourceRule) *v1.GitTarget {
	t.Helper()
	kzStartOperator(t, ns, r)
	gt := kzTarget(t, ns, name, folder, rules...)
	targetReady(t, gt)
	waitCondition(t, gt, kzConds(gt), v1.ConditionRenderMatchesLive, metav1.ConditionTrue, "")
	if sha := kzNothingPending(t, gt, "start"); sha != tip {
		t.Fatalf("after the start the branch is at %s, want the pushed %s: %q", sha, tip, subjects(r.log()))
	}
	return gt
}

// kzAssertMirroring checks that the target is Ready, its path accepted and its render
// matching live.
func kzAssertMirroring(t *testing.T, gt *v1.GitTarget) {
	t.Helper()
	for _, typ := range []string{v1.ConditionReady, v1.ConditionGitPathAccepted, v1.ConditionRenderMatchesLive} {
		if c := condition(t, gt, kzConds(gt), typ); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("GitTarget %s/%s condition %s is %+v", gt.Namespace, gt.Name, typ, c)
		}
	}
}

// kzApplyRender renders folder with the operator's own kustomize package and creates
// every object it renders, as an applier would.
func kzApplyRender(t *testing.T, repoFiles map[string]string, folder string) []*unstructured.Unstructured {
	t.Helper()
	files := kustomize.MapFiles{}
	var inFolder []string
	for p, content := range repoFiles {
		files[p] = []byte(content)
		if rel, ok := strings.CutPrefix(p, folder+"/"); ok {
			inFolder = append(inFolder, rel)
		}
	}
	sort.Strings(inFolder)
	f, err := kustomize.Load(files, folder, inFolder)
	if err != nil || f == nil {
		t.Fatalf("render %s: %v (folder %v)", folder, err, f)
	}
	var docs []string
	for _, o := range f.Objects() {
		docs = append(docs, string(o.Doc))
	}
	return kzApplyDocs(t, docs...)
}

// kzApplyDocs creates the objects of YAML documents and returns them.
func kzApplyDocs(t *testing.T, docs ...string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, d := range docs {
		u := fromYAML(t, d)
		create(t, u)
		out = append(out, u)
	}
	return out
}

// kzKustomizeBuild runs the real kustomize CLI's `kustomize build` on a folder on disk
// and returns the objects it renders.
func kzKustomizeBuild(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command(testenv.KustomizeCLI(t), "build", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", dir, err, stderr.String())
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(&stdout))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("kustomize build %s: output: %v", dir, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		out = append(out, fromYAML(t, string(doc)))
	}
}

// kzGit runs git in the server's bare repository.
func kzGit(t *testing.T, r *repo, args ...string) string {
	t.Helper()
	dir, err := r.server.RepoDir(r.name)
	if err != nil {
		t.Fatal(err)
	}
	out, err := servers.GitOutput(servers.GitCommand("", nil, append([]string{"--git-dir", dir}, args...)...))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// kzSnapshotFiles reads every file of branch main.
func kzSnapshotFiles(t *testing.T, r *repo) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, f := range r.files() {
		b, err := r.server.ReadFile(r.name, "main", f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = string(b)
	}
	return out
}

// kzAssertFilesAre checks that branch main holds exactly files, byte for byte.
func kzAssertFilesAre(t *testing.T, r *repo, files map[string]string) {
	t.Helper()
	got := kzSnapshotFiles(t, r)
	for p, want := range files {
		if g, ok := got[p]; !ok || g != want {
			t.Errorf("%s is not byte-identical (on the branch: %t):\n%s", p, ok, g)
		}
	}
	for p := range got {
		if _, ok := files[p]; !ok {
			t.Errorf("a file was added: %s\n%s", p, got[p])
		}
	}
}

var probes int

// kzNothingPending asks, with a CommitRequest, that the target's open window be committed,
// expects nothing to be waiting, and returns the branch tip the answer names.
func kzNothingPending(t *testing.T, gt *v1.GitTarget, what string) string {
	t.Helper()
	req := kzProbe(t, gt, what)
	cond := waitCondition(t, req, func() []metav1.Condition { return req.Status.Conditions }, v1.ConditionPushed, metav1.ConditionTrue, "")
	if cond.Reason != controller.ReasonNothingPending {
		t.Errorf("after %s a CommitRequest found work waiting: %s (%s)", what, cond.Reason, cond.Message)
	}
	return req.Status.SHA
}

// kzHeldProbe asks, with a CommitRequest, for the target's changes and expects to be told
// they are held, and why: Pushed=False with reason WritesHeld and the cause in the message,
// never Pushed=True.
func kzHeldProbe(t *testing.T, gt *v1.GitTarget, what, cause string) {
	t.Helper()
	req := kzProbe(t, gt, what)
	cond := waitCondition(t, req, func() []metav1.Condition { return req.Status.Conditions }, v1.ConditionPushed, metav1.ConditionFalse, controller.ReasonWritesHeld)
	if !strings.Contains(cond.Message, cause) {
		t.Errorf("after %s the CommitRequest does not name %q: %s", what, cause, cond.Message)
	}
}

// kzProbe creates a CommitRequest for the target.
func kzProbe(t *testing.T, gt *v1.GitTarget, what string) *v1.CommitRequest {
	t.Helper()
	probes++
	req := &v1.CommitRequest{ObjectMeta: metav1.ObjectMeta{Namespace: gt.Namespace, Name: fmt.Sprintf("probe-%d", probes)},
		Spec: v1.CommitRequestSpec{TargetRef: v1.LocalObjectReference{Name: gt.Name}, Message: "probe after " + what}}
	create(t, req)
	return req
}

// kzOneCommitChanging checks that exactly one commit followed from, that nothing waits
// after it, and that it changed exactly the file changed (every other file keeps its bytes,
// none is added or removed). It returns the new tip.
func kzOneCommitChanging(t *testing.T, r *repo, gt *v1.GitTarget, what, from string, before map[string]string, changed string) string {
	t.Helper()
	tip := kzNothingPending(t, gt, what)
	kzCommitChanged(t, r, tip, what, from, before, changed)
	return tip
}

// kzCommitChanged checks that tip is one commit on from that changed exactly the file
// changed (every other file keeps its bytes, none is added or removed).
func kzCommitChanged(t *testing.T, r *repo, tip, what, from string, before map[string]string, changed string) {
	t.Helper()
	log := r.log()
	if len(log) < 2 || log[0].SHA != tip || log[1].SHA != from {
		t.Fatalf("after the %s change the history is %q (tip %s), want one commit on %s", what, subjects(log), tip, from)
	}
	if names := strings.Fields(kzGit(t, r, "diff", "--name-only", from, tip)); len(names) != 1 || names[0] != changed {
		t.Errorf("the %s commit changed %q, want only %s", what, names, changed)
	}
	after := kzSnapshotFiles(t, r)
	for p, content := range before {
		if p != changed && after[p] != content {
			t.Errorf("the %s commit changed %s:\n%s", what, p, after[p])
		}
	}
	if len(after) != len(before) {
		t.Errorf("the %s commit added or removed files: %d files, was %d", what, len(after), len(before))
	}
}

// kzUpdate changes the live object ns/name of type T through the API, retrying on a
// conflict.
func kzUpdate[T any, P interface {
	*T
	client.Object
}](t *testing.T, ns, name string, change func(P)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj := P(new(T))
		if err := cp.Client.Get(ctxOf(t), keyOf(ns, name), obj); err != nil {
			return err
		}
		change(obj)
		return cp.Client.Update(ctxOf(t), obj)
	})
	if err != nil {
		t.Fatalf("update %T %s: %v", P(nil), name, err)
	}
}

// kzUpdateDeployment changes a live Deployment through the API.
func kzUpdateDeployment(t *testing.T, ns, name string, change func(*appsv1.Deployment)) {
	t.Helper()
	kzUpdate(t, ns, name, change)
}

// kzUpdateConfigMap changes a live ConfigMap through the API; change finds its labels and
// data non-nil.
func kzUpdateConfigMap(t *testing.T, ns, name string, change func(*corev1.ConfigMap)) {
	t.Helper()
	kzUpdate(t, ns, name, func(c *corev1.ConfigMap) {
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		if c.Data == nil {
			c.Data = map[string]string{}
		}
		change(c)
	})
}
