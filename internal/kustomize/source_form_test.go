package kustomize

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// seedRepo is the folder that started kustomize-aware writing: a kustomization with only
// labels: and commonAnnotations: over the file of its objects.
func seedRepo() map[string]string {
	return map[string]string{
		"prod/kustomization.yaml": `resources:
- app.yaml
labels:
- pairs:
    env: prod
    owner: platform
commonAnnotations:
  team: payments
`,
		"prod/app.yaml": webDeployment + "---\n" + settingsConfigMap,
	}
}

// seedRepoOverBase is seedRepo's kustomization over a base outside the folder.
func seedRepoOverBase() map[string]string {
	return map[string]string{
		"base/kustomization.yaml": "resources:\n- app.yaml\n",
		"base/app.yaml":           webDeployment + "---\n" + settingsConfigMap,
		"prod/kustomization.yaml": `resources:
- ../base
labels:
- pairs:
    env: prod
    owner: platform
commonAnnotations:
  team: payments
`,
	}
}

func TestTheSeedsLabelsAndAnnotationsFolderHasAnEmptySourceFormForEveryObject(t *testing.T) {
	for name, repo := range map[string]map[string]string{"file in the folder": seedRepo(), "base outside the folder": seedRepoOverBase()} {
		t.Run(name, func(t *testing.T) {
			f := loadFolder(t, repo, "prod")
			objects := f.Objects()
			if len(objects) != 2 {
				t.Fatalf("the folder renders %v, want the Deployment and the ConfigMap", renderedIDs(f))
			}
			for _, obj := range objects {
				labels, _ := fieldAt(decodeTest(t, obj.Doc), "metadata", "labels")
				if m, _ := labels.(map[string]any); m["env"] != "prod" || m["owner"] != "platform" {
					t.Fatalf("%s renders labels %v; the fixture should show the build's labels", obj.ID, labels)
				}
				w, err := f.SourceForm(obj.ID, obj.Doc)
				if err != nil {
					t.Fatalf("SourceForm(%s) of its own render: %v", obj.ID, err)
				}
				if !w.Empty() {
					t.Errorf("SourceForm(%s) of its own render writes doc %q and edits %v; the source must keep its bytes", obj.ID, w.Doc, w.Edits)
				}
			}
		})
	}
}

func TestAnEditUnderLabelsWritesTheEditButNotTheBuildsLabelsIntoTheSource(t *testing.T) {
	f := loadFolder(t, seedRepo(), "prod")
	w := writeThrough(t, f, settingsID, func(doc map[string]any) {
		setFieldAt(t, doc, "green", "data", "color")
	})
	if w.Source != "app.yaml" || w.SourceID != settingsID || len(w.Edits) != 0 {
		t.Fatalf("write %+v, want the document of app.yaml and no file edits", w)
	}
	doc := decodeTest(t, w.Doc)
	if got, _ := fieldAt(doc, "data", "color"); got != "green" {
		t.Errorf("the written document has data.color %v, want green", got)
	}
	if got, ok := fieldAt(doc, "metadata", "labels"); ok {
		t.Errorf("the written document has labels %v; the build's labels must stay out of the source", got)
	}
	if got, ok := fieldAt(doc, "metadata", "annotations"); ok {
		t.Errorf("the written document has annotations %v; the build's annotations must stay out of the source", got)
	}
}

func TestAnUnmanagedFieldIsWrittenThroughToTheSourceDocument(t *testing.T) {
	repo := map[string]string{
		"app/kustomization.yaml": "namespace: prod\nresources:\n- settings.yaml\n- deployment.yaml\n",
		"app/settings.yaml":      settingsConfigMap,
		"app/deployment.yaml":    webDeployment,
	}
	f := loadFolder(t, repo, "app")
	w := writeThrough(t, f, inNamespace(settingsID, "prod"), func(doc map[string]any) {
		setFieldAt(t, doc, "green", "data", "color")
		setFieldAt(t, doc, "round", "data", "shape")
	})
	if w.Source != "settings.yaml" {
		t.Errorf("Write.Source = %q, want settings.yaml", w.Source)
	}
	if w.SourceID != settingsID {
		t.Errorf("Write.SourceID = %v, want %v (the document as written, without the build's namespace)", w.SourceID, settingsID)
	}
	if len(w.Edits) != 0 {
		t.Errorf("the write edits %v; only the document changes", w.Edits)
	}
	doc := decodeTest(t, w.Doc)
	want := map[string]any{"color": "green", "size": "large", "shape": "round"}
	if got, _ := fieldAt(doc, "data"); !equal(got, want) {
		t.Errorf("the written data is %v, want %v", got, want)
	}
	if ns, ok := fieldAt(doc, "metadata", "namespace"); ok {
		t.Errorf("the written document has namespace %v; the build sets it", ns)
	}
}

func TestARemovedFieldIsRemovedFromTheSourceDocument(t *testing.T) {
	f := loadWithFile(t, "app", "resources:\n- settings.yaml\n", "settings.yaml", settingsConfigMap)
	w := writeThrough(t, f, settingsID, func(doc map[string]any) {
		delete(doc["data"].(map[string]any), "size")
	})
	if got, ok := fieldAt(decodeTest(t, w.Doc), "data", "size"); ok {
		t.Errorf("the written document still has data.size %v", got)
	}
}

// imagesRepo supplies the web image by an images: entry with a tag and a digest.
func imagesRepo() map[string]string {
	return map[string]string{
		"app/kustomization.yaml": `resources:
- deployment.yaml
images:
- name: nginx # the web image
  newTag: "1.25.3"
  digest: ` + digestA + `
`,
		"app/deployment.yaml": webDeployment,
	}
}

func TestAnImageEditGoesToTheImagesEntryThatSuppliesIt(t *testing.T) {
	cases := []struct {
		name, live string
		newName    string
		newTag     string
		digest     string
	}{
		{name: "a new tag drops the digest", live: "nginx:1.26.0", newTag: "1.26.0"},
		{name: "a new digest drops the tag", live: "nginx@" + digestB, digest: digestB},
		{name: "tag and digest together", live: "nginx:1.27.1@" + digestB, newTag: "1.27.1", digest: digestB},
		{name: "a new registry", live: "registry.example.com/nginx:2.0", newName: "registry.example.com/nginx", newTag: "2.0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := loadFolder(t, imagesRepo(), "app")
			if got, _ := fieldAt(renderOf(t, f, webID), webImage...); got != "nginx:1.25.3@"+digestA {
				t.Fatalf("the fixture renders image %v", got)
			}
			w := writeThrough(t, f, webID, func(doc map[string]any) { setFieldAt(t, doc, tc.live, webImage...) })
			if w.Doc != nil {
				t.Errorf("the source document is written:\n%s", w.Doc)
			}
			if len(w.Edits) != 1 {
				t.Fatalf("the write edits %d files, want the kustomization only: %v", len(w.Edits), w.Edits)
			}
			content := editOf(t, w.Edits, "kustomization.yaml")
			k := parseKust(t, content)
			if len(k.Images) != 1 {
				t.Fatalf("images: holds %d entries, want the one edited:\n%s", len(k.Images), content)
			}
			img := k.Images[0]
			if img.Name != "nginx" || img.NewName != tc.newName || img.NewTag != tc.newTag || img.Digest != tc.digest {
				t.Errorf("images entry %+v, want name nginx newName %q newTag %q digest %q:\n%s", img, tc.newName, tc.newTag, tc.digest, content)
			}
			if !bytes.Contains(content, []byte("# the web image")) {
				t.Errorf("the entry's comment was lost:\n%s", content)
			}
		})
	}
}

// overlayRepo is an overlay folder over a read-only base outside it.
func overlayRepo(overlay string) map[string]string {
	return map[string]string{
		"base/kustomization.yaml":          "resources:\n- deployment.yaml\n- settings.yaml\n",
		"base/deployment.yaml":             webDeployment,
		"base/settings.yaml":               settingsConfigMap,
		"overlays/prod/kustomization.yaml": overlay,
	}
}

func TestAnImageOfAReadOnlyBaseGetsANewImagesEntryInTheOverlay(t *testing.T) {
	f := loadFolder(t, overlayRepo("resources:\n- ../../base\nnamespace: prod\n"), "overlays/prod")
	w := writeThrough(t, f, inNamespace(webID, "prod"), func(doc map[string]any) { setFieldAt(t, doc, "nginx:1.26", webImage...) })
	if w.Doc != nil || w.Source != "" {
		t.Errorf("the write touches the base document (source %q):\n%s", w.Source, w.Doc)
	}
	k := parseKust(t, editOf(t, w.Edits, "kustomization.yaml"))
	if len(k.Images) != 1 || k.Images[0].Name != "nginx" || k.Images[0].NewTag != "1.26" || k.Images[0].NewName != "" || k.Images[0].Digest != "" {
		t.Fatalf("the overlay's images are %+v, want one entry nginx newTag 1.26", k.Images)
	}
	if len(k.Resources) != 1 || k.Namespace != "prod" {
		t.Errorf("the rest of the overlay changed: %+v", k)
	}
}

func TestAnImageAReadOnlyBaseEntrySuppliesGetsANewImagesEntryInTheOverlay(t *testing.T) {
	repo := overlayRepo("resources:\n- ../../base\n")
	repo["base/kustomization.yaml"] = "resources:\n- deployment.yaml\n- settings.yaml\nimages:\n- name: nginx\n  newTag: \"1.25.9\"\n"
	f := loadFolder(t, repo, "overlays/prod")
	w := writeThrough(t, f, webID, func(doc map[string]any) { setFieldAt(t, doc, "nginx:1.26", webImage...) })
	if w.Doc != nil {
		t.Errorf("the base document is written:\n%s", w.Doc)
	}
	k := parseKust(t, editOf(t, w.Edits, "kustomization.yaml"))
	if len(k.Images) != 1 || k.Images[0].Name != "nginx" || k.Images[0].NewTag != "1.26" {
		t.Fatalf("the overlay's images are %+v, want one new entry nginx newTag 1.26", k.Images)
	}
}

func TestASecondImageEditOverAReadOnlyBaseEditsTheOverlaysEntry(t *testing.T) {
	// The overlay already overrides the base's image: the next edit belongs to the
	// overlay's entry, not to one more entry of the same name.
	repo := overlayRepo("resources:\n- ../../base\nimages:\n- name: nginx\n  newTag: \"1.26\"\n")
	repo["base/kustomization.yaml"] = "resources:\n- deployment.yaml\n- settings.yaml\nimages:\n- name: nginx\n  newTag: \"1.25.9\"\n"
	f := loadFolder(t, repo, "overlays/prod")
	if got, _ := fieldAt(renderOf(t, f, webID), webImage...); got != "nginx:1.26" {
		t.Fatalf("the fixture renders %v, want the overlay's nginx:1.26", got)
	}
	w := writeThrough(t, f, webID, func(doc map[string]any) { setFieldAt(t, doc, "nginx:1.27", webImage...) })
	content := editOf(t, w.Edits, "kustomization.yaml")
	k := parseKust(t, content)
	if len(k.Images) != 1 || k.Images[0].NewTag != "1.27" {
		t.Errorf("the overlay's images are %+v, want its one entry edited to newTag 1.27:\n%s", k.Images, content)
	}
}

func TestAReplicasEditGoesToTheReplicasEntryThatSuppliesIt(t *testing.T) {
	f := loadWithFile(t, "app", "resources:\n- deployment.yaml\nreplicas:\n- name: web # scaled by hand\n  count: 3\n",
		"deployment.yaml", webDeployment)
	w := writeThrough(t, f, webID, func(doc map[string]any) { setFieldAt(t, doc, 5, "spec", "replicas") })
	if w.Doc != nil {
		t.Errorf("the source document is written:\n%s", w.Doc)
	}
	content := editOf(t, w.Edits, "kustomization.yaml")
	k := parseKust(t, content)
	if len(k.Replicas) != 1 || k.Replicas[0].Name != "web" || k.Replicas[0].Count != 5 {
		t.Errorf("replicas: %+v, want web count 5:\n%s", k.Replicas, content)
	}
	if !bytes.Contains(content, []byte("# scaled by hand")) {
		t.Errorf("the entry's comment was lost:\n%s", content)
	}
}

func TestTheReplicasOfAReadOnlyBaseObjectGetANewOverlayEntry(t *testing.T) {
	for name, base := range map[string]string{
		"count in the document":     "resources:\n- deployment.yaml\n- settings.yaml\n",
		"count from a base's entry": "resources:\n- deployment.yaml\n- settings.yaml\nreplicas:\n- name: web\n  count: 2\n",
	} {
		t.Run(name, func(t *testing.T) {
			repo := overlayRepo("resources:\n- ../../base\nnamespace: prod\n")
			repo["base/kustomization.yaml"] = base
			f := loadFolder(t, repo, "overlays/prod")
			w := writeThrough(t, f, inNamespace(webID, "prod"), func(doc map[string]any) { setFieldAt(t, doc, 4, "spec", "replicas") })
			if w.Doc != nil {
				t.Errorf("the base document is written:\n%s", w.Doc)
			}
			k := parseKust(t, editOf(t, w.Edits, "kustomization.yaml"))
			if len(k.Replicas) != 1 || k.Replicas[0].Name != "web" || k.Replicas[0].Count != 4 {
				t.Fatalf("the overlay's replicas are %+v, want web count 4", k.Replicas)
			}
		})
	}
}

func TestAReplicaCountNoEntrySuppliesIsWrittenThroughToTheSource(t *testing.T) {
	f := loadWithFile(t, "app", "resources:\n- deployment.yaml\n", "deployment.yaml", webDeployment)
	w := writeThrough(t, f, webID, func(doc map[string]any) { setFieldAt(t, doc, 6, "spec", "replicas") })
	if len(w.Edits) != 0 {
		t.Errorf("the kustomization is edited: %v", w.Edits)
	}
	if got, _ := fieldAt(decodeTest(t, w.Doc), "spec", "replicas"); got != float64(6) {
		t.Errorf("the written replicas are %v, want 6", got)
	}
}

func TestAnUnmanagedFieldOfABaseOutsideTheFolderIsRefusedAsEscapingScope(t *testing.T) {
	repo := overlayRepo("resources:\n- ../../base\nnamespace: prod\n")
	f := loadFolder(t, repo, "overlays/prod")
	id := inNamespace(settingsID, "prod")
	live := liveFrom(t, f, id, func(doc map[string]any) { setFieldAt(t, doc, "green", "data", "color") })
	_, err := f.SourceForm(id, live)
	r := wantRefusal(t, err, CodeEscapesScope, "data.color")
	if r.Object != id.String() || !strings.Contains(r.Detail, "base/settings.yaml") {
		t.Errorf("the refusal %v should name the object and the base file", r)
	}
}

// fanInRepo is a folder with a base inside it that two overlays of the folder read.
func fanInRepo(aNamespace, bNamespace string) map[string]string {
	overlay := func(ns string) string {
		k := "resources:\n- ../base\n"
		if ns != "" {
			k += "namespace: " + ns + "\n"
		}
		return k
	}
	return map[string]string{
		"env/base/kustomization.yaml": "resources:\n- settings.yaml\n- deployment.yaml\nimages:\n- name: nginx\n  newTag: \"1.25.9\"\n",
		"env/base/settings.yaml":      settingsConfigMap,
		"env/base/deployment.yaml":    webDeployment,
		"env/a/kustomization.yaml":    overlay(aNamespace),
		"env/b/kustomization.yaml":    overlay(bNamespace),
	}
}

func TestEditingABaseTwoOverlaysOfTheFolderReadIsRefusedAsFanIn(t *testing.T) {
	repo := fanInRepo("a", "b")
	f := loadFolder(t, repo, "env")
	if roots := f.Roots(); len(roots) != 2 || roots[0] != "a/kustomization.yaml" || roots[1] != "b/kustomization.yaml" {
		t.Fatalf("render roots %v, want the two overlays", roots)
	}
	id := inNamespace(settingsID, "a")
	live := liveFrom(t, f, id, func(doc map[string]any) { setFieldAt(t, doc, "green", "data", "color") })
	_, err := f.SourceForm(id, live)
	r := wantRefusal(t, err, CodeFanIn, "data.color")
	if !strings.Contains(r.Detail, "env/base/settings.yaml") {
		t.Errorf("the refusal %v should name the shared file", r)
	}
}

func TestEditingAnImagesEntryOfABaseTwoOverlaysReadIsRefusedAsFanIn(t *testing.T) {
	repo := fanInRepo("a", "b")
	f := loadFolder(t, repo, "env")
	id := inNamespace(webID, "b")
	live := liveFrom(t, f, id, func(doc map[string]any) { setFieldAt(t, doc, "nginx:1.26", webImage...) })
	_, err := f.SourceForm(id, live)
	wantRefusal(t, err, CodeFanIn, "images")
}

func TestAnObjectTwoRenderRootsProduceIsRefusedAsFanIn(t *testing.T) {
	repo := fanInRepo("", "")
	f := loadFolder(t, repo, "env")
	live := liveFrom(t, f, settingsID, func(doc map[string]any) { setFieldAt(t, doc, "green", "data", "color") })
	_, err := f.SourceForm(settingsID, live)
	wantRefusal(t, err, CodeFanIn, "")
	// Its own render is still no edit at all.
	obj, _ := f.Lookup(settingsID)
	if w, err := f.SourceForm(settingsID, obj.Doc); err != nil || !w.Empty() {
		t.Errorf("SourceForm of the render = %+v, %v; want an empty write", w, err)
	}
}

func TestAnObjectTheFolderDoesNotRenderIsAnError(t *testing.T) {
	f := loadFolder(t, seedRepo(), "prod")
	if _, err := f.SourceForm(objectID("", "ConfigMap", "", "other"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n")); err == nil {
		t.Fatal("SourceForm of an object the folder does not render succeeded")
	}
}

// patchRepo is a folder whose deployment a strategic-merge patch file changes.
func patchRepo(patch string) map[string]string {
	return map[string]string{
		"app/kustomization.yaml": "resources:\n- deployment.yaml\npatches:\n- path: patch.yaml\n",
		"app/deployment.yaml":    webDeployment,
		"app/patch.yaml":         patch,
	}
}

const patchHeader = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
`

func TestAnUnnamedListAPatchAndLiveBothRewroteIsRefusedAsUnplaceable(t *testing.T) {
	cases := []struct {
		name, patch string
		edit        []any
		value       any
		field       string
	}{
		{
			name:  "args",
			patch: patchHeader + "      containers:\n      - name: web\n        args: [\"--port\", \"9090\"]\n",
			edit:  []any{"spec", "template", "spec", "containers", "name=web", "args"},
			value: []any{"--port", "9090", "--verbose"},
			field: "spec.template.spec.containers[name=web].args",
		},
		{
			name:  "tolerations",
			patch: patchHeader + "      tolerations:\n      - key: dedicated\n        operator: Exists\n",
			edit:  []any{"spec", "template", "spec", "tolerations"},
			value: []any{map[string]any{"key": "dedicated", "operator": "Exists"}, map[string]any{"key": "spot", "operator": "Exists"}},
			field: "spec.template.spec.tolerations",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := loadFolder(t, patchRepo(tc.patch), "app")
			live := liveFrom(t, f, webID, func(doc map[string]any) { setFieldAt(t, doc, tc.value, tc.edit...) })
			_, err := f.SourceForm(webID, live)
			wantRefusal(t, err, CodeUnplaceable, tc.field)
		})
	}
}

func TestAnUnnamedListTheBuildLeftAloneIsReplacedByTheLiveList(t *testing.T) {
	f := loadWithFile(t, "app", "resources:\n- deployment.yaml\nlabels:\n- pairs:\n    env: prod\n", "deployment.yaml", webDeployment)
	args := []any{"spec", "template", "spec", "containers", "name=web", "args"}
	w := writeThrough(t, f, webID, func(doc map[string]any) {
		setFieldAt(t, doc, []any{"--port", "8081", "--verbose"}, args...)
	})
	if got, _ := fieldAt(decodeTest(t, w.Doc), args...); !equal(got, []any{"--port", "8081", "--verbose"}) {
		t.Errorf("the written args are %v", got)
	}
}

const sidecarPatch = patchHeader + `      containers:
      - name: log-shipper
        image: fluent-bit:3.0
`

func TestAMainContainerEditIsPlacedByNameNextToTheSidecarAPatchAdds(t *testing.T) {
	repo := patchRepo(sidecarPatch)
	f := loadFolder(t, repo, "app")
	containers, _ := fieldAt(renderOf(t, f, webID), "spec", "template", "spec", "containers")
	if l, _ := containers.([]any); len(l) != 2 {
		t.Fatalf("the fixture renders containers %v, want the main container and the sidecar", containers)
	}
	w := writeThrough(t, f, webID, func(doc map[string]any) {
		setFieldAt(t, doc, "nginx:1.26", webImage...)
		setFieldAt(t, doc, []any{"--port", "8081"}, "spec", "template", "spec", "containers", "name=web", "args")
	})
	got, _ := fieldAt(decodeTest(t, w.Doc), "spec", "template", "spec", "containers")
	want := []any{map[string]any{"name": "web", "image": "nginx:1.26", "args": []any{"--port", "8081"}}}
	if !equal(got, want) {
		t.Errorf("the written containers are %v, want only the main container, edited: %v", got, want)
	}
}

func TestAMainContainerImageEditNextToAPatchedSidecarGoesToTheImagesEntry(t *testing.T) {
	repo := patchRepo(sidecarPatch)
	repo["app/kustomization.yaml"] += "images:\n- name: nginx\n  newTag: \"1.25.9\"\n"
	f := loadFolder(t, repo, "app")
	w := writeThrough(t, f, webID, func(doc map[string]any) { setFieldAt(t, doc, "nginx:1.26", webImage...) })
	if w.Doc != nil {
		t.Errorf("the source document is written:\n%s", w.Doc)
	}
	k := parseKust(t, editOf(t, w.Edits, "kustomization.yaml"))
	if len(k.Images) != 1 || k.Images[0].NewTag != "1.26" {
		t.Errorf("images: %+v, want nginx newTag 1.26", k.Images)
	}
}

func TestAFolderWithoutAKustomizationLoadsAsNil(t *testing.T) {
	f, err := tryLoad(map[string]string{"app/settings.yaml": settingsConfigMap}, "app")
	if f != nil || err != nil {
		t.Fatalf("Load = %v, %v; want nil, nil", f, err)
	}
}

// Kustomizations stay out of the list: the layout keeps indexing them as kustomizations,
// whose resources: entries a delete must release.
func TestContextFilesAreThePatchFilesOfTheFolder(t *testing.T) {
	f := loadFolder(t, patchRepo(sidecarPatch), "app")
	got := f.ContextFiles()
	if !equal(anySlice(got), anySlice([]string{"patch.yaml"})) {
		t.Errorf("ContextFiles = %v", got)
	}
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func TestAnImageEditGoesToTheLastOfTwoImagesEntriesInTheFolder(t *testing.T) {
	// A base inside the folder sets the tag and the overlay overrides it: the overlay's
	// entry supplies the rendered image, so the edit belongs there.
	repo := map[string]string{
		"env/base/kustomization.yaml": "resources:\n- deployment.yaml\nimages:\n- name: nginx\n  newTag: \"1.25.9\"\n",
		"env/base/deployment.yaml":    webDeployment,
		"env/a/kustomization.yaml":    "resources:\n- ../base\nimages:\n- name: nginx\n  newTag: \"1.26\"\n",
	}
	f := loadFolder(t, repo, "env")
	if got, _ := fieldAt(renderOf(t, f, webID), webImage...); got != "nginx:1.26" {
		t.Fatalf("the fixture renders %v, want the overlay's nginx:1.26", got)
	}
	w := writeThrough(t, f, webID, func(doc map[string]any) { setFieldAt(t, doc, "nginx:1.27", webImage...) })
	if paths := editPaths(w.Edits); len(paths) != 1 || paths[0] != "a/kustomization.yaml" {
		t.Errorf("the write edits %v, want the overlay's kustomization only", paths)
	}
}

func TestAnEditOfABaseInsideTheFolderThatOneRootReadsIsWrittenThrough(t *testing.T) {
	repo := map[string]string{
		"env/base/kustomization.yaml": "resources:\n- settings.yaml\n",
		"env/base/settings.yaml":      settingsConfigMap,
		"env/prod/kustomization.yaml": "resources:\n- ../base\nnamespace: prod\nlabels:\n- pairs:\n    env: prod\n",
	}
	f := loadFolder(t, repo, "env")
	w := writeThrough(t, f, inNamespace(settingsID, "prod"), func(doc map[string]any) { setFieldAt(t, doc, "green", "data", "color") })
	if w.Source != "base/settings.yaml" || w.SourceID != settingsID {
		t.Errorf("the write goes to %q %v, want base/settings.yaml %v", w.Source, w.SourceID, settingsID)
	}
}

func TestTheSourceKeepsItsOwnNamespaceUnderTheBuildsNamespace(t *testing.T) {
	f := loadWithFile(t, "app", "namespace: prod\nresources:\n- settings.yaml\n",
		"settings.yaml", strings.Replace(settingsConfigMap, "  name: settings\n", "  name: settings\n  namespace: dev\n", 1))
	w := writeThrough(t, f, inNamespace(settingsID, "prod"), func(doc map[string]any) { setFieldAt(t, doc, "green", "data", "color") })
	if w.SourceID != inNamespace(settingsID, "dev") {
		t.Errorf("Write.SourceID = %v, want the document's own namespace dev", w.SourceID)
	}
	if ns, _ := fieldAt(decodeTest(t, w.Doc), "metadata", "namespace"); ns != "dev" {
		t.Errorf("the written namespace is %v, want the source's dev", ns)
	}
}

func TestATokenTheBuildOverwritesStaysInTheSource(t *testing.T) {
	f := loadEnvTokenFolder(t)
	w := writeThrough(t, f, settingsID, func(doc map[string]any) { setFieldAt(t, doc, "green", "data", "color") })
	if got, _ := fieldAt(decodeTest(t, w.Doc), "metadata", "labels", "env"); got != "${ENV}" {
		t.Errorf("the written label env is %v, want the source's ${ENV} kept", got)
	}
}

func TestAFolderAtTheRepositoryRootUsesRootRelativePaths(t *testing.T) {
	f := loadWithFile(t, "", "resources:\n- settings.yaml\nimages:\n- name: nginx\n  newTag: \"1.25.9\"\n", "settings.yaml", settingsConfigMap)
	if roots := f.Roots(); len(roots) != 1 || roots[0] != "kustomization.yaml" {
		t.Errorf("Roots = %v", roots)
	}
	w := writeThrough(t, f, settingsID, func(doc map[string]any) { setFieldAt(t, doc, "green", "data", "color") })
	if w.Source != "settings.yaml" {
		t.Errorf("Write.Source = %q", w.Source)
	}
}

func TestAnImageWithADigestInAReadOnlyBaseTakesTheLiveTag(t *testing.T) {
	repo := overlayRepo("resources:\n- ../../base\n")
	repo["base/deployment.yaml"] = strings.Replace(webDeployment, "nginx:1.25", "nginx@"+digestA, 1)
	f := loadFolder(t, repo, "overlays/prod")
	writeThrough(t, f, webID, func(doc map[string]any) { setFieldAt(t, doc, "nginx:1.26", webImage...) })
}

func TestASweepSeesTheRenderAndTheDocumentsTheRenderDoesNotProduce(t *testing.T) {
	repo := map[string]string{
		"app/kustomization.yaml": "namespace: prod\nresources:\n- settings.yaml\n",
		"app/settings.yaml":      settingsConfigMap,
		"app/stray.yaml":         strings.Replace(settingsConfigMap, "name: settings", "name: stray", 1),
	}
	f := loadFolder(t, repo, "app")
	stray := objectID("", "ConfigMap", "", "stray")
	got := f.Identities([]layout.Identity{settingsID, stray})
	want := []layout.Identity{inNamespace(settingsID, "prod"), stray}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Identities = %v, want %v (the rendered object, and the document the render does not list, but not the source of a rendered object)", got, want)
	}
}

func TestAnEditBesideAListThePatchRewroteIsPlaced(t *testing.T) {
	f := loadFolder(t, patchRepo(patchHeader+"      containers:\n      - name: web\n        args: [\"--port\", \"9090\"]\n"), "app")
	w := writeThrough(t, f, webID, func(doc map[string]any) { setFieldAt(t, doc, "nginx:1.26", webImage...) })
	if got, _ := fieldAt(decodeTest(t, w.Doc), "spec", "template", "spec", "containers", "name=web", "args"); !equal(got, []any{"--port", "8080"}) {
		t.Errorf("the source's args became %v; the patch's args must stay out of the source", got)
	}
}
