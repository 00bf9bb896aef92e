package kustomize

import (
	"errors"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// deploymentNamed is the web Deployment under another name and image.
func deploymentNamed(name, image string) string {
	d := strings.ReplaceAll(webDeployment, "web", name)
	return strings.Replace(d, "nginx:1.25", image, 1)
}

func TestAnUntouchedFolderVerifies(t *testing.T) {
	f := loadFolder(t, seedRepo(), "prod")
	if err := f.Verify(nil); err != nil {
		t.Fatalf("Verify of an untouched folder: %v", err)
	}
	obj, _ := f.Lookup(webID)
	if err := f.Verify(map[layout.Identity][]byte{webID: obj.Doc}); err != nil {
		t.Fatalf("Verify of an object expected as it renders: %v", err)
	}
}

func TestALabelTheBuildOwnsIsRefusedByTheVerificationRender(t *testing.T) {
	repo := seedRepo()
	f := loadFolder(t, repo, "prod")
	live := liveFrom(t, f, settingsID, func(doc map[string]any) {
		setFieldAt(t, doc, "staging", "metadata", "labels", "env")
	})
	w, err := f.SourceForm(settingsID, live)
	if err != nil {
		t.Fatalf("SourceForm may write a field the build owns, it refused: %v", err)
	}
	if got, _ := fieldAt(decodeTest(t, w.Doc), "metadata", "labels", "env"); got != "staging" {
		t.Fatalf("the written document has label env %v, want the live staging", got)
	}
	if got, ok := fieldAt(decodeTest(t, w.Doc), "metadata", "labels", "owner"); ok {
		t.Errorf("the written document has the build's owner label %v", got)
	}
	if err := f.Apply(writeEdits(t, repo, "prod", w)); err != nil {
		t.Fatal(err)
	}
	err = f.Verify(map[layout.Identity][]byte{settingsID: live})
	r := wantRefusal(t, err, CodeRenderRefused, "metadata.labels.env")
	if r.Object != settingsID.String() {
		t.Errorf("the refusal names %q, want %q", r.Object, settingsID)
	}
}

func TestAnAnnotationTheBuildOwnsIsRefusedByTheVerificationRender(t *testing.T) {
	repo := seedRepo()
	f := loadFolder(t, repo, "prod")
	live := liveFrom(t, f, webID, func(doc map[string]any) {
		setFieldAt(t, doc, "billing", "metadata", "annotations", "team")
	})
	sourceFormAndApply(t, f, repo, "prod", webID, live)
	err := f.Verify(map[layout.Identity][]byte{webID: live})
	wantRefusal(t, err, CodeRenderRefused, "metadata.annotations.team")
}

func TestANamespaceTheBuildOwnsIsRefusedByTheVerificationRender(t *testing.T) {
	repo := map[string]string{
		"app/kustomization.yaml": "namespace: prod\nresources:\n- settings.yaml\n",
		"app/settings.yaml":      settingsConfigMap,
	}
	f := loadFolder(t, repo, "app")
	id := inNamespace(settingsID, "prod")
	live := liveFrom(t, f, id, func(doc map[string]any) {
		setFieldAt(t, doc, "staging", "metadata", "namespace")
	})
	sourceFormAndApply(t, f, repo, "app", id, live)
	err := f.Verify(map[layout.Identity][]byte{id: live})
	wantRefusal(t, err, CodeRenderRefused, "metadata.namespace")
}

func TestAFieldAPatchOwnsIsRefusedByTheVerificationRender(t *testing.T) {
	repo := patchRepo(sidecarPatch)
	f := loadFolder(t, repo, "app")
	live := liveFrom(t, f, webID, func(doc map[string]any) {
		setFieldAt(t, doc, "fluent-bit:3.1", "spec", "template", "spec", "containers", "name=log-shipper", "image")
	})
	sourceFormAndApply(t, f, repo, "app", webID, live)
	err := f.Verify(map[layout.Identity][]byte{webID: live})
	wantRefusal(t, err, CodeRenderRefused, "spec.template.spec.containers[name=log-shipper].image")
}

func TestAnUnrelatedObjectMovingIsRefused(t *testing.T) {
	// One images: entry supplies the image of two Deployments: moving it for one moves
	// the other, which did not change in the cluster.
	repo := map[string]string{
		"app/kustomization.yaml": "resources:\n- web.yaml\n- api.yaml\nimages:\n- name: nginx\n  newTag: \"1.25.9\"\n",
		"app/web.yaml":           webDeployment,
		"app/api.yaml":           deploymentNamed("api", "nginx:1.24"),
	}
	f := loadFolder(t, repo, "app")
	apiID := objectID("apps", "Deployment", "", "api")
	live := liveFrom(t, f, webID, func(doc map[string]any) {
		setFieldAt(t, doc, "nginx:1.26", "spec", "template", "spec", "containers", 0, "image")
	})
	sourceFormAndApply(t, f, repo, "app", webID, live)
	err := f.Verify(map[layout.Identity][]byte{webID: live})
	r := wantRefusal(t, err, CodeRenderRefused, "spec.template.spec.containers[name=api].image")
	if r.Object != apiID.String() {
		t.Errorf("the refusal names %q, want the unrelated %q", r.Object, apiID)
	}
}

func TestTwoObjectsThatMovedTogetherVerifyAsOneBatch(t *testing.T) {
	repo := map[string]string{
		"app/kustomization.yaml": "resources:\n- web.yaml\n- api.yaml\n- settings.yaml\nimages:\n- name: nginx\n  newTag: \"1.25.9\"\n",
		"app/web.yaml":           webDeployment,
		"app/api.yaml":           deploymentNamed("api", "nginx:1.24"),
		"app/settings.yaml":      settingsConfigMap,
	}
	f := loadFolder(t, repo, "app")
	apiID := objectID("apps", "Deployment", "", "api")
	image := []any{"spec", "template", "spec", "containers", 0, "image"}
	webLive := liveFrom(t, f, webID, func(doc map[string]any) { setFieldAt(t, doc, "nginx:1.26", image...) })
	apiLive := liveFrom(t, f, apiID, func(doc map[string]any) { setFieldAt(t, doc, "nginx:1.26", image...) })
	settingsLive := liveFrom(t, f, settingsID, func(doc map[string]any) { setFieldAt(t, doc, "green", "data", "color") })
	sourceFormAndApply(t, f, repo, "app", webID, webLive)
	// The api Deployment already renders as live once the shared entry moved.
	if w, err := f.SourceForm(apiID, apiLive); err != nil {
		t.Fatalf("SourceForm(api): %v", err)
	} else if err := f.Apply(w.Edits); err != nil {
		t.Fatal(err)
	}
	sourceFormAndApply(t, f, repo, "app", settingsID, settingsLive)
	err := f.Verify(map[layout.Identity][]byte{webID: webLive, apiID: apiLive, settingsID: settingsLive})
	if err != nil {
		t.Fatalf("Verify of the batch: %v", err)
	}
}

func TestAnEditThatMovesAnotherDocumentOfTheFolderIsRefused(t *testing.T) {
	repo := map[string]string{
		"app/kustomization.yaml": "resources:\n- web.yaml\n- settings.yaml\n",
		"app/web.yaml":           webDeployment,
		"app/settings.yaml":      settingsConfigMap,
	}
	f := loadFolder(t, repo, "app")
	edited := strings.Replace(settingsConfigMap, "blue", "red", 1)
	if err := f.Apply([]layout.FileEdit{{Path: "settings.yaml", Content: []byte(edited)}}); err != nil {
		t.Fatal(err)
	}
	obj, _ := f.Lookup(webID)
	err := f.Verify(map[layout.Identity][]byte{webID: obj.Doc})
	r := wantRefusal(t, err, CodeRenderRefused, "data.color")
	if r.Object != settingsID.String() {
		t.Errorf("the refusal names %q, want %q", r.Object, settingsID)
	}
}

func TestAFolderThatNoLongerBuildsIsRefused(t *testing.T) {
	repo := map[string]string{
		"app/kustomization.yaml": "resources:\n- settings.yaml\n",
		"app/settings.yaml":      settingsConfigMap,
	}
	f := loadFolder(t, repo, "app")
	if err := f.Apply([]layout.FileEdit{{Path: "settings.yaml", Content: nil}}); err != nil {
		t.Fatal(err)
	}
	err := f.Verify(nil)
	r := wantRefusal(t, err, CodeRenderRefused, "")
	if r.Object != "kustomization.yaml" {
		t.Errorf("the refusal names %q, want the render root kustomization.yaml", r.Object)
	}
}

func TestABatchThatDropsAnUnchangedObjectFromTheRenderIsRefused(t *testing.T) {
	repo := map[string]string{
		"app/kustomization.yaml": "resources:\n- all.yaml\n",
		"app/all.yaml":           webDeployment + "---\n" + settingsConfigMap,
	}
	f := loadFolder(t, repo, "app")
	if err := f.Apply([]layout.FileEdit{{Path: "all.yaml", Content: []byte(webDeployment)}}); err != nil {
		t.Fatal(err)
	}
	err := f.Verify(nil)
	r := wantRefusal(t, err, CodeRenderRefused, "")
	if r.Object != settingsID.String() {
		t.Errorf("the refusal names %q, want %q", r.Object, settingsID)
	}
}

func TestABatchThatAddsAnObjectTheClusterDoesNotHoldIsRefused(t *testing.T) {
	repo := map[string]string{
		"app/kustomization.yaml": "resources:\n- all.yaml\n",
		"app/all.yaml":           webDeployment,
	}
	f := loadFolder(t, repo, "app")
	if err := f.Apply([]layout.FileEdit{{Path: "all.yaml", Content: []byte(webDeployment + "---\n" + settingsConfigMap)}}); err != nil {
		t.Fatal(err)
	}
	err := f.Verify(nil)
	r := wantRefusal(t, err, CodeRenderRefused, "")
	if r.Object != settingsID.String() {
		t.Errorf("the refusal names %q, want %q", r.Object, settingsID)
	}
	// Expected in the batch, the same object verifies.
	if err := f.Verify(map[layout.Identity][]byte{settingsID: []byte(settingsConfigMap)}); err != nil {
		t.Errorf("Verify with the new object expected: %v", err)
	}
}

func TestAnObjectDeletedInTheClusterThatStillRendersIsRefused(t *testing.T) {
	f := loadFolder(t, seedRepo(), "prod")
	err := f.Verify(map[layout.Identity][]byte{settingsID: nil})
	wantRefusal(t, err, CodeRenderRefused, "")
}

func TestAnEditedObjectTheFolderNoLongerRendersIsRefused(t *testing.T) {
	repo := map[string]string{
		"app/kustomization.yaml": "resources:\n- all.yaml\n",
		"app/all.yaml":           webDeployment + "---\n" + settingsConfigMap,
	}
	f := loadFolder(t, repo, "app")
	live := liveFrom(t, f, settingsID, func(doc map[string]any) { setFieldAt(t, doc, "green", "data", "color") })
	if err := f.Apply([]layout.FileEdit{{Path: "all.yaml", Content: []byte(webDeployment)}}); err != nil {
		t.Fatal(err)
	}
	err := f.Verify(map[layout.Identity][]byte{settingsID: live})
	wantRefusal(t, err, CodeRenderRefused, "")
}

func TestAppliedKustomizationEditsAreParsedAgain(t *testing.T) {
	f := loadFolder(t, seedRepo(), "prod")
	err := f.Apply([]layout.FileEdit{{Path: "kustomization.yaml", Content: []byte("resources:\n- app.yaml\nnamePrefix: x-\n")}})
	var u *UnsupportedError
	if !errors.As(err, &u) || u.Feature != "namePrefix" {
		t.Fatalf("Apply of a kustomization with namePrefix = %v; want the feature refused", err)
	}
}

func TestAnEditRevertedInTheSameBatchRendersAsTheLastLiveState(t *testing.T) {
	// Two events of one object in one batch: the second is decided on the folder the first
	// edited (Apply), so the batch ends where the cluster ends.
	cases := []struct {
		name  string
		repo  map[string]string
		id    layout.Identity
		field []any
		value any
	}{
		{
			name:  "a source document field",
			repo:  map[string]string{"app/kustomization.yaml": "resources:\n- settings.yaml\n", "app/settings.yaml": settingsConfigMap},
			id:    settingsID,
			field: []any{"data", "color"},
			value: "green",
		},
		{
			name:  "an images entry",
			repo:  imagesRepo(),
			id:    webID,
			field: []any{"spec", "template", "spec", "containers", 0, "image"},
			value: "nginx:1.26",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := loadFolder(t, tc.repo, "app")
			original := liveFrom(t, f, tc.id, func(map[string]any) {})
			edited := liveFrom(t, f, tc.id, func(doc map[string]any) { setFieldAt(t, doc, tc.value, tc.field...) })
			sourceFormAndApply(t, f, tc.repo, "app", tc.id, edited)
			if err := f.Verify(map[layout.Identity][]byte{tc.id: edited}); err != nil {
				t.Fatalf("Verify after the first edit: %v", err)
			}
			// The cluster goes back to where it was; the folder now renders the edit.
			w, err := f.SourceForm(tc.id, original)
			if err != nil {
				t.Fatalf("SourceForm of the reverted object: %v", err)
			}
			if w.Empty() {
				t.Fatalf("SourceForm of the reverted object writes nothing, though the folder now renders %v", tc.value)
			}
			edits := w.Edits
			if w.Doc != nil {
				// The file as the first edit left it.
				current := string(f.files["app/"+w.Source])
				edits = append([]layout.FileEdit{{Path: w.Source, Content: replaceDocument(t, []byte(current), w.SourceID, w.Doc)}}, edits...)
			}
			if err := f.Apply(edits); err != nil {
				t.Fatal(err)
			}
			if err := f.Verify(map[layout.Identity][]byte{tc.id: original}); err != nil {
				t.Fatalf("Verify after the revert: %v", err)
			}
		})
	}
}
