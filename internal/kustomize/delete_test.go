package kustomize

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

func TestDeletingALocalObjectRemovesItsSourceDocument(t *testing.T) {
	f := loadWithFile(t, "app", "namespace: prod\nresources:\n- all.yaml\n", "all.yaml", webDeployment+"---\n"+settingsConfigMap)
	id := inNamespace(settingsID, "prod")
	w := deleteAndApply(t, f, id)
	if !w.Delete || w.Source != "all.yaml" || w.SourceID != settingsID || w.Doc != nil || len(w.Edits) != 0 {
		t.Fatalf("Delete = %+v, want the document %v of all.yaml removed and nothing else", w, settingsID)
	}
	wantVerifies(t, f, id, nil)
}

func TestDeletingALocalObjectReleasesItsReplicasEntry(t *testing.T) {
	f := loadWithFile(t, "app", "resources:\n- all.yaml\nreplicas:\n- name: web\n  count: 3\n- name: api\n  count: 2\n",
		"all.yaml", webDeployment+"---\n"+deploymentNamed("api", "nginx:1.24"))
	deleteAndApply(t, f, webID)
	released := f.ReleaseReplicas(webID)
	k := parseKust(t, editOf(t, released, "kustomization.yaml"))
	if len(k.Replicas) != 1 || k.Replicas[0].Name != "api" {
		t.Fatalf("replicas after the release: %+v, want only api's", k.Replicas)
	}
	if err := f.Apply(released); err != nil {
		t.Fatal(err)
	}
	wantVerifies(t, f, webID, nil)
}

func TestDeletingAnInheritedObjectWritesADeletePatch(t *testing.T) {
	for name, overlay := range map[string]string{
		"without a namespace":   "resources:\n- ../../base\n",
		"into a namespace":      "resources:\n- ../../base\nnamespace: prod\n",
		"with existing patches": "resources:\n- ../../base\npatches:\n- path: color.yaml\n",
	} {
		t.Run(name, func(t *testing.T) {
			repo := overlayRepo(overlay)
			repo["overlays/prod/color.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: red\n"
			f := loadFolder(t, repo, "overlays/prod")
			ns := ""
			if strings.Contains(overlay, "namespace") {
				ns = "prod"
			}
			id := inNamespace(webID, ns)
			keep := inNamespace(settingsID, ns)
			patchFile := "delete-deployment-web.yaml"
			if ns != "" {
				patchFile = "delete-deployment-" + ns + "-web.yaml"
			}
			w := deleteAndApply(t, f, id)
			if w.Delete || w.Doc != nil || w.Source != "" {
				t.Errorf("Delete = %+v touches the base document", w)
			}
			patch := string(editOf(t, w.Edits, patchFile))
			for _, want := range []string{"$patch: delete", "apiVersion: apps/v1", "kind: Deployment", "name: web"} {
				if !strings.Contains(patch, want) {
					t.Errorf("the patch lacks %q:\n%s", want, patch)
				}
			}
			kustContent := editOf(t, w.Edits, "kustomization.yaml")
			k := parseKust(t, kustContent)
			listed := false
			for _, p := range k.Patches {
				listed = listed || p.Path == patchFile
			}
			if !listed {
				t.Errorf("patches: %+v does not list the delete patch:\n%s", k.Patches, kustContent)
			}
			if strings.Contains(overlay, "color.yaml") && len(k.Patches) != 2 {
				t.Errorf("patches: %+v, want the existing patch kept", k.Patches)
			}
			wantVerifies(t, f, id, nil)
			docs, err := renderRoot(f.files, "overlays/prod/kustomization.yaml")
			if err != nil {
				t.Fatalf("render after the delete: %v", err)
			}
			if rendersID(docs, id) || !rendersID(docs, keep) {
				t.Errorf("the render after the delete holds %v; want %v and not %v", docs, keep, id)
			}
		})
	}
}

func TestDeletingAnInheritedObjectDropsTheOverlaysReplicasEntryForIt(t *testing.T) {
	repo := overlayRepo("resources:\n- ../../base\nreplicas:\n- name: web\n  count: 3\n")
	f := loadFolder(t, repo, "overlays/prod")
	w := deleteAndApply(t, f, webID)
	k := parseKust(t, editOf(t, w.Edits, "kustomization.yaml"))
	if len(k.Replicas) != 0 {
		t.Errorf("replicas: %+v still names the deleted object", k.Replicas)
	}
	wantVerifies(t, f, webID, nil)
}

func TestDeletingAnObjectOfABaseTwoOverlaysReadIsRefusedAsFanIn(t *testing.T) {
	f := loadFolder(t, fanInRepo("a", "b"), "env")
	_, err := f.Delete(inNamespace(settingsID, "a"))
	wantRefusal(t, err, CodeFanIn, "")
}

func TestDeletingAnObjectTwoRootsProduceIsRefusedAsFanIn(t *testing.T) {
	f := loadFolder(t, fanInRepo("", ""), "env")
	_, err := f.Delete(settingsID)
	wantRefusal(t, err, CodeFanIn, "")
}

func TestDeletingAnObjectTheFolderDoesNotRenderIsAnError(t *testing.T) {
	f := loadFolder(t, seedRepo(), "prod")
	if _, err := f.Delete(objectID("", "ConfigMap", "", "other")); err == nil {
		t.Fatal("Delete of an object the folder does not render succeeded")
	}
}

func TestDeletingAnInheritedObjectTheOverlayAlsoPatchesRemovesIt(t *testing.T) {
	repo := overlayRepo("resources:\n- ../../base\npatches:\n- path: sidecar.yaml\n")
	repo["overlays/prod/sidecar.yaml"] = sidecarPatch
	f := loadFolder(t, repo, "overlays/prod")
	deleteAndApply(t, f, webID)
	wantVerifies(t, f, webID, nil)
}

func TestDeletingAnInheritedObjectWhoseBaseSetsAnotherNamespaceRemovesIt(t *testing.T) {
	repo := overlayRepo("resources:\n- ../../base\nnamespace: prod\n")
	repo["base/deployment.yaml"] = strings.Replace(webDeployment, "  name: web\n", "  name: web\n  namespace: base-ns\n", 1)
	f := loadFolder(t, repo, "overlays/prod")
	id := inNamespace(webID, "prod")
	deleteAndApply(t, f, id)
	wantVerifies(t, f, id, nil)
}

func TestDeletingTwoInheritedObjectsOfOneKindAndNameInOneBatchRemovesBoth(t *testing.T) {
	repo := overlayRepo("resources:\n- ../../base\n")
	repo["base/settings.yaml"] = strings.Replace(settingsConfigMap, "  name: settings\n", "  name: settings\n  namespace: a\n", 1) +
		"---\n" + strings.Replace(settingsConfigMap, "  name: settings\n", "  name: settings\n  namespace: b\n", 1)
	f := loadFolder(t, repo, "overlays/prod")
	a, b := inNamespace(settingsID, "a"), inNamespace(settingsID, "b")
	for _, id := range []layout.Identity{a, b} {
		deleteAndApply(t, f, id)
	}
	if err := f.Verify(map[layout.Identity][]byte{a: nil, b: nil}); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}
