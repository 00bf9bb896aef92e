//go:build e2e

package controller_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/controller"
	"github.com/gitops-reverser/gitops-reverser/internal/kustomize"
	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// Issue 9 through the whole operator: a target folder that is a kustomize overlay of a
// read-only base is written in source form. Each live change lands where the overlay
// supplies the field (an images: or replicas: entry, or the source document in place),
// in exactly one commit, and the folder still builds, with the real kustomize CLI, into
// what the cluster runs.

// editThroughRepo is the repository of the test: base/ (outside the target folder, read
// only) and the overlay clusters/dev, which renders into namespace ns.
func editThroughRepo(ns string) map[string]string {
	return map[string]string{
		"base/kustomization.yaml": "resources:\n- web.yaml\n",
		"base/web.yaml": `# The shared web frontend; every overlay reads it.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: nginx:1.0
`,
		// The folder's own README, so that the first write has nothing to bootstrap.
		"clusters/dev/README.md": "# dev\n\nThe dev overlay of the shop.\n",
		"clusters/dev/kustomization.yaml": `# The dev overlay of the shop.
resources:
- ../../base
- api.yaml
namespace: ` + ns + `
labels:
- pairs:
    env: dev # on every object of the overlay
images:
- name: busybox # the api's image
  newTag: "1.36"
# How many of each the dev cluster runs.
replicas:
- name: api
  count: 2
`,
		"clusters/dev/api.yaml": `# The API server of the shop.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 1 # the overlay's replicas entry decides
  selector:
    matchLabels:
      app: api
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
      - name: api
        image: busybox:1.0
        command: ["sleep", "infinity"]
        env:
        # The answer speed; slow in dev.
        - name: MODE
          value: slow # how fast it answers
        - name: LOG_LEVEL
          value: info
`,
	}
}

func deploymentsRule() v1.ResourceRule {
	return v1.ResourceRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}}
}

func TestAKustomizeOverlayIsWrittenInSourceForm(t *testing.T) {
	ns := newNamespace(t, nil)
	r := newRepo(t)
	const folder = "clusters/dev"
	pushed := editThroughRepo(ns)
	tip := kzPush(t, r, pushed, "the shop's dev overlay")
	applied := kzApplyRender(t, pushed, folder)
	if len(applied) != 2 {
		t.Fatalf("the overlay renders %d objects, want 2 (web, api)", len(applied))
	}
	kzAssertBuildMatchesLive(t, r, folder, ns) // the starting point: the CLI agrees with the library

	startOperator(t, cp.Config, t.TempDir())
	providerWithSecret(t, ns, "origin", r)
	gt := target(ns, "dev", "origin", folder, v1.PruneOnEvent)
	create(t, gt)
	create(t, watchRule(ns, "deploys", "dev", deploymentsRule()))
	targetReady(t, gt)
	waitCondition(t, gt, kzConds(gt), v1.ConditionRenderMatchesLive, metav1.ConditionTrue, "")
	// The start, an in-sync folder, committed nothing.
	if sha := kzNothingPending(t, gt, "start"); sha != tip {
		t.Fatalf("after the start the branch is at %s, want the pushed %s: %q", sha, tip, subjects(r.log()))
	}

	kustomization := folder + "/kustomization.yaml"
	files := kzSnapshotFiles(t, r)

	// (a) A new image, tag and digest together: the overlay's images: entry changes, and
	// nothing else does.
	digest := "sha256:" + strings.Repeat("0123456789abcdef", 4)
	kzUpdateDeployment(t, ns, "api", func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers[0].Image = "busybox:1.37@" + digest
	})
	waitFor(t, "the new image in the overlay", func() bool { return strings.Contains(r.file(kustomization), digest) })
	tip = kzOneCommitChanging(t, r, gt, "image", tip, files, kustomization)
	k := r.file(kustomization)
	kzAssertChangedOnlyWithin(t, "an image change", files[kustomization], k, "images:", "# How many of each")
	img := kzImagesEntry(t, k, "busybox")
	if img["newTag"] != "1.37" || img["digest"] != digest || img["newName"] != nil {
		t.Errorf("the busybox images entry is %v, want newTag 1.37 and digest %s", img, digest)
	}
	if !strings.Contains(k, "- name: busybox # the api's image\n") {
		t.Errorf("the images entry lost its comment:\n%s", k)
	}
	kzAssertBuildMatchesLive(t, r, folder, ns)
	files = kzSnapshotFiles(t, r)

	// (b) A new replica count: the replicas: entry changes, the source's replicas: 1 keeps
	// its bytes.
	kzUpdateDeployment(t, ns, "api", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](4) })
	waitFor(t, "the new count in the overlay", func() bool { return strings.Contains(r.file(kustomization), "count: 4") })
	tip = kzOneCommitChanging(t, r, gt, "replicas", tip, files, kustomization)
	k = r.file(kustomization)
	kzAssertChangedOnlyWithin(t, "a replicas change", files[kustomization], k, "replicas:", "")
	if !strings.Contains(k, "- name: api\n  count: 4\n") {
		t.Errorf("the replicas entry was not edited in place:\n%s", k)
	}
	kzAssertBuildMatchesLive(t, r, folder, ns)
	files = kzSnapshotFiles(t, r)

	// (c) A field no entry supplies (an env value): written through into api.yaml in place,
	// its comments and every other byte kept.
	source := folder + "/api.yaml"
	kzUpdateDeployment(t, ns, "api", func(d *appsv1.Deployment) {
		for i := range d.Spec.Template.Spec.Containers[0].Env {
			if e := &d.Spec.Template.Spec.Containers[0].Env[i]; e.Name == "MODE" {
				e.Value = "fast"
			}
		}
	})
	waitFor(t, "the env value in the source", func() bool { return strings.Contains(r.file(source), "value: fast") })
	tip = kzOneCommitChanging(t, r, gt, "env", tip, files, source)
	want := strings.Replace(files[source], "value: slow # how fast it answers", "value: fast # how fast it answers", 1)
	if got := r.file(source); got != want {
		t.Errorf("api.yaml was not edited in place:\n%s\nwant:\n%s", got, want)
	}
	kzAssertBuildMatchesLive(t, r, folder, ns)
	files = kzSnapshotFiles(t, r)

	// (d) An image of the read-only base: a new images: entry in the overlay; base/ is never
	// written.
	kzUpdateDeployment(t, ns, "web", func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.1" })
	waitFor(t, "an overlay entry for the base's image", func() bool { return strings.Contains(r.file(kustomization), "name: nginx") })
	kzOneCommitChanging(t, r, gt, "base image", tip, files, kustomization)
	k = r.file(kustomization)
	kzAssertChangedOnlyWithin(t, "a base image change", files[kustomization], k, "images:", "# How many of each")
	if img := kzImagesEntry(t, k, "nginx"); img["newTag"] != "1.1" {
		t.Errorf("the overlay's nginx entry is %v, want newTag 1.1", img)
	}
	kzAssertBuildMatchesLive(t, r, folder, ns)
	t.Logf("the overlay after four edits:\n%s", k)

	for _, typ := range []string{v1.ConditionReady, v1.ConditionGitPathAccepted, v1.ConditionRenderMatchesLive} {
		if c := condition(t, gt, kzConds(gt), typ); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("GitTarget condition %s is %+v", typ, c)
		}
	}
}

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
	var out []*unstructured.Unstructured
	for _, o := range f.Objects() {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(o.Doc, &u.Object); err != nil {
			t.Fatalf("%s: %v", o.ID, err)
		}
		create(t, u)
		out = append(out, u)
	}
	return out
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

// kzCheckout clones branch main of the repository into a new folder.
func kzCheckout(t *testing.T, r *repo) string {
	t.Helper()
	src, err := r.server.RepoDir(r.name)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := servers.GitOutput(servers.GitCommand("", nil, "clone", "--quiet", "--branch", "main", src, dir)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// kzBuild runs `kustomize build` on a folder of a checkout and returns the objects by
// "Kind/name".
func kzBuild(t *testing.T, dir, folder string) map[string]*unstructured.Unstructured {
	t.Helper()
	cmd := exec.Command(testenv.KustomizeCLI(t), "build", filepath.Join(dir, filepath.FromSlash(folder)))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", folder, err, stderr.String())
	}
	out := map[string]*unstructured.Unstructured{}
	dec := utilyaml.NewYAMLOrJSONDecoder(&stdout, 4096)
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("kustomize build %s: output: %v", folder, err)
		}
		if obj == nil {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		out[u.GetKind()+"/"+u.GetName()] = u
	}
}

// kzAssertBuildMatchesLive builds the branch's folder with the kustomize CLI and compares
// every rendered Deployment's namespace, labels, image, replicas and env with the live one.
func kzAssertBuildMatchesLive(t *testing.T, r *repo, folder, ns string) {
	t.Helper()
	built := kzBuild(t, kzCheckout(t, r), folder)
	found := 0
	for key, u := range built {
		if u.GetKind() != "Deployment" {
			continue
		}
		found++
		if u.GetNamespace() != ns {
			t.Errorf("%s builds into namespace %q, want %q", key, u.GetNamespace(), ns)
			continue
		}
		var b appsv1.Deployment
		if err := runtimeFromUnstructured(u, &b); err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		var live appsv1.Deployment
		if err := cp.Client.Get(ctxOf(t), keyOf(ns, u.GetName()), &live); err != nil {
			t.Fatalf("%s: live: %v", key, err)
		}
		if got, want := fmt.Sprint(b.Labels), fmt.Sprint(live.Labels); got != want {
			t.Errorf("%s: the build's labels %s, live %s", key, got, want)
		}
		if got, want := ptr.Deref(b.Spec.Replicas, 1), ptr.Deref(live.Spec.Replicas, 1); got != want {
			t.Errorf("%s: the build's replicas %d, live %d", key, got, want)
		}
		bc, lc := b.Spec.Template.Spec.Containers, live.Spec.Template.Spec.Containers
		if len(bc) != len(lc) {
			t.Errorf("%s: the build has %d containers, live %d", key, len(bc), len(lc))
			continue
		}
		for i := range bc {
			if bc[i].Image != lc[i].Image {
				t.Errorf("%s: container %s: the build's image %s, live %s", key, bc[i].Name, bc[i].Image, lc[i].Image)
			}
			if got, want := envString(bc[i].Env), envString(lc[i].Env); got != want {
				t.Errorf("%s: container %s: the build's env %s, live %s", key, bc[i].Name, got, want)
			}
		}
	}
	if found == 0 {
		t.Errorf("kustomize build %s renders no Deployment", folder)
	}
}

func runtimeFromUnstructured(u *unstructured.Unstructured, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into)
}

func envString(env []corev1.EnvVar) string {
	parts := make([]string, len(env))
	for i, e := range env {
		parts[i] = e.Name + "=" + e.Value
	}
	return strings.Join(parts, ",")
}

// kzUpdateDeployment changes a live Deployment through the API.
func kzUpdateDeployment(t *testing.T, ns, name string, change func(*appsv1.Deployment)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var d appsv1.Deployment
		if err := cp.Client.Get(ctxOf(t), keyOf(ns, name), &d); err != nil {
			return err
		}
		change(&d)
		return cp.Client.Update(ctxOf(t), &d)
	})
	if err != nil {
		t.Fatalf("update Deployment %s: %v", name, err)
	}
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

var probes int

// kzNothingPending asks, with a CommitRequest, that the target's open window be committed,
// expects nothing to be waiting, and returns the branch tip the answer names.
func kzNothingPending(t *testing.T, gt *v1.GitTarget, what string) string {
	t.Helper()
	probes++
	req := &v1.CommitRequest{ObjectMeta: metav1.ObjectMeta{Namespace: gt.Namespace, Name: fmt.Sprintf("probe-%d", probes)},
		Spec: v1.CommitRequestSpec{TargetRef: v1.LocalObjectReference{Name: gt.Name}, Message: "probe after " + what}}
	create(t, req)
	cond := waitCondition(t, req, func() []metav1.Condition { return req.Status.Conditions }, v1.ConditionPushed, metav1.ConditionTrue, "")
	if cond.Reason != controller.ReasonNothingPending {
		t.Errorf("after %s a CommitRequest found work waiting: %s (%s)", what, cond.Reason, cond.Message)
	}
	return req.Status.SHA
}

// kzOneCommitChanging checks that exactly one commit followed from, that nothing waits
// after it, and that it changed exactly the file changed (every other file keeps its bytes,
// none is added or removed). It returns the new tip.
func kzOneCommitChanging(t *testing.T, r *repo, gt *v1.GitTarget, what, from string, before map[string]string, changed string) string {
	t.Helper()
	tip := kzNothingPending(t, gt, what)
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
	return tip
}

// kzAssertChangedOnlyWithin checks that every line the change touched, before and after,
// lies in the block that starts with the line start and ends before the line end ("" for
// the end of the file).
func kzAssertChangedOnlyWithin(t *testing.T, what, before, after, start, end string) {
	t.Helper()
	b, a := strings.SplitAfter(before, "\n"), strings.SplitAfter(after, "\n")
	head := 0
	for head < len(b) && head < len(a) && b[head] == a[head] {
		head++
	}
	tail := 0
	for tail < len(b)-head && tail < len(a)-head && b[len(b)-1-tail] == a[len(a)-1-tail] {
		tail++
	}
	check := func(lines []string, from, to int, side string) {
		s, e := blockOf(lines, start, end)
		if s < 0 || from <= s || to > e {
			t.Errorf("%s changed lines %d-%d of the %s file, outside the %q block (lines %d-%d):\n--- before\n%s--- after\n%s",
				what, from+1, to, side, start, s+1, e, before, after)
		}
	}
	if head == len(b) && head == len(a) {
		t.Errorf("%s changed nothing", what)
		return
	}
	check(b, head, len(b)-tail, "old")
	check(a, head, len(a)-tail, "new")
}

// blockOf returns the index of the line that starts with start and the index of the first
// line after it that starts with end (len(lines) when end is "" or absent).
func blockOf(lines []string, start, end string) (int, int) {
	s := -1
	for i, l := range lines {
		if s < 0 && strings.HasPrefix(l, start) {
			s = i
			continue
		}
		if s >= 0 && end != "" && strings.HasPrefix(l, end) {
			return s, i
		}
	}
	return s, len(lines)
}

// kzImagesEntry returns the kustomization's images entry of name.
func kzImagesEntry(t *testing.T, kustomization, name string) map[string]any {
	t.Helper()
	var k struct {
		Images []map[string]any `json:"images"`
	}
	if err := yaml.Unmarshal([]byte(kustomization), &k); err != nil {
		t.Fatalf("the kustomization does not parse: %v\n%s", err, kustomization)
	}
	for _, img := range k.Images {
		if img["name"] == name {
			return img
		}
	}
	t.Fatalf("no images entry for %s:\n%s", name, kustomization)
	return nil
}
