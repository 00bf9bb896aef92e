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
	f := loadFolder(t, seedRepo(), "prod")
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
	applyWrite(t, f, w)
	wantRenderRefused(t, f.Verify(map[layout.Identity][]byte{settingsID: live}), "metadata.labels.env", settingsID.String())
}

func TestAnAnnotationTheBuildOwnsIsRefusedByTheVerificationRender(t *testing.T) {
	f := loadFolder(t, seedRepo(), "prod")
	writeRefusedByRender(t, f, webID, "metadata.annotations.team", func(doc map[string]any) {
		setFieldAt(t, doc, "billing", "metadata", "annotations", "team")
	})
}

func TestANamespaceTheBuildOwnsIsRefusedByTheVerificationRender(t *testing.T) {
	f := loadWithFile(t, "app", "namespace: prod\nresources:\n- settings.yaml\n", "settings.yaml", settingsConfigMap)
	writeRefusedByRender(t, f, inNamespace(settingsID, "prod"), "metadata.namespace", func(doc map[string]any) {
		setFieldAt(t, doc, "staging", "metadata", "namespace")
	})
}

func TestAFieldAPatchOwnsIsRefusedByTheVerificationRender(t *testing.T) {
	f := loadFolder(t, patchRepo(sidecarPatch), "app")
	writeRefusedByRender(t, f, webID, "spec.template.spec.containers[name=log-shipper].image", func(doc map[string]any) {
		setFieldAt(t, doc, "fluent-bit:3.1", "spec", "template", "spec", "containers", "name=log-shipper", "image")
	})
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
	r := writeRefusedByRender(t, f, webID, "spec.template.spec.containers[name=api].image", func(doc map[string]any) {
		setFieldAt(t, doc, "nginx:1.26", webImage...)
	})
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
	sourceFormAndApply(t, f, webID, webLive)
	// The api Deployment already renders as live once the shared entry moved.
	if w, err := f.SourceForm(apiID, apiLive); err != nil {
		t.Fatalf("SourceForm(api): %v", err)
	} else if err := f.Apply(w.Edits); err != nil {
		t.Fatal(err)
	}
	sourceFormAndApply(t, f, settingsID, settingsLive)
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
	applyFile(t, f, "settings.yaml", []byte(strings.Replace(settingsConfigMap, "blue", "red", 1)))
	obj, _ := f.Lookup(webID)
	wantRenderRefused(t, f.Verify(map[layout.Identity][]byte{webID: obj.Doc}), "data.color", settingsID.String())
}

func TestAFolderThatNoLongerBuildsIsRefused(t *testing.T) {
	f := loadWithFile(t, "app", "resources:\n- settings.yaml\n", "settings.yaml", settingsConfigMap)
	applyFile(t, f, "settings.yaml", nil)
	// The refusal names the render root.
	wantRenderRefused(t, f.Verify(nil), "", "kustomization.yaml")
}

func TestABatchThatDropsAnUnchangedObjectFromTheRenderIsRefused(t *testing.T) {
	f := loadWithFile(t, "app", "resources:\n- all.yaml\n", "all.yaml", webDeployment+"---\n"+settingsConfigMap)
	applyFile(t, f, "all.yaml", []byte(webDeployment))
	wantRenderRefused(t, f.Verify(nil), "", settingsID.String())
}

func TestABatchThatAddsAnObjectTheClusterDoesNotHoldIsRefused(t *testing.T) {
	f := loadWithFile(t, "app", "resources:\n- all.yaml\n", "all.yaml", webDeployment)
	applyFile(t, f, "all.yaml", []byte(webDeployment+"---\n"+settingsConfigMap))
	wantRenderRefused(t, f.Verify(nil), "", settingsID.String())
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
	f := loadWithFile(t, "app", "resources:\n- all.yaml\n", "all.yaml", webDeployment+"---\n"+settingsConfigMap)
	live := liveFrom(t, f, settingsID, func(doc map[string]any) { setFieldAt(t, doc, "green", "data", "color") })
	applyFile(t, f, "all.yaml", []byte(webDeployment))
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
			writeThrough(t, f, tc.id, func(doc map[string]any) { setFieldAt(t, doc, tc.value, tc.field...) })
			// The cluster goes back to where it was; the folder now renders the edit. The
			// revert is written into the files as the first edit left them.
			if w := sourceFormAndApply(t, f, tc.id, original); w.Empty() {
				t.Fatalf("SourceForm of the reverted object writes nothing, though the folder now renders %v", tc.value)
			}
			wantVerifies(t, f, tc.id, original)
		})
	}
}
