//go:build e2e

package controller_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	v1 "github.com/gitops-reverser/gitops-reverser/api/v1alpha1"
	"github.com/gitops-reverser/gitops-reverser/internal/sandbox/servers"
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
	const folder = "clusters/dev"
	r, tip, applied := kzPushAndApply(t, editThroughRepo(ns), folder, "the shop's dev overlay")
	if len(applied) != 2 {
		t.Fatalf("the overlay renders %d objects, want 2 (web, api)", len(applied))
	}
	kzAssertBuildMatchesLive(t, r, folder, ns) // the starting point: the CLI agrees with the library

	// The start, an in-sync folder, commits nothing.
	gt := kzStartInSync(t, r, ns, "dev", folder, tip, deploymentsRule())

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
	kzAssertMirroring(t, gt)
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
	out := map[string]*unstructured.Unstructured{}
	for _, u := range kzKustomizeBuild(t, filepath.Join(dir, filepath.FromSlash(folder))) {
		out[u.GetKind()+"/"+u.GetName()] = u
	}
	return out
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
