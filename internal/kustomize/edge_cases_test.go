package kustomize

import (
	"strings"
	"testing"
)

// Render fidelity (docs/kustomize.md#render-fidelity): a token in a map key (Flux
// substitutes keys too) must be measured like one in a value.
func TestATokenInAMapKeyIsADivergence(t *testing.T) {
	render := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n  labels:\n    team.${ENV}/owner: me\n")
	live := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n  labels:\n    team.prod/owner: me\n")
	d, err := RenderDivergence("s", render, live)
	if err != nil {
		t.Fatal(err)
	}
	if d == nil {
		t.Fatalf("a ${ENV} token in a label key, substituted in live, is not a divergence")
	}
}

// A replica count of a read-only base document that does not set spec.replicas gets an
// overlay replicas: entry, like one the base sets.
func TestReplicasABaseLeavesUnsetGetAnOverlayEntry(t *testing.T) {
	base := strings.Replace(webDeployment, "  replicas: 1\n", "", 1)
	f := loadFolder(t, map[string]string{
		"base/kustomization.yaml": "resources:\n- web.yaml\n",
		"base/web.yaml":           base,
		"dev/kustomization.yaml":  "resources:\n- ../base\n",
	}, "dev")
	live := liveFrom(t, f, webID, func(doc map[string]any) {
		doc["spec"].(map[string]any)["replicas"] = 3
	})
	w, err := f.SourceForm(webID, live)
	if err != nil {
		t.Fatalf("SourceForm: %v", err)
	}
	applyWrite(t, f, w)
	wantVerifies(t, f, webID, live)
}

func imageFolder(t *testing.T, entry, image string) *Folder {
	return loadWithFile(t, "dev", "resources:\n- web.yaml\nimages:\n"+entry,
		"web.yaml", strings.Replace(webDeployment, "nginx:1.25", image, 1))
}

// An image edit goes to the images: entry whatever shape the entry and the image have:
// the folder verifies (the render equals live) and only the entry changes.
func TestAnImageEditFitsEveryShapeOfEntry(t *testing.T) {
	cases := []struct {
		name, entry, image, live, want string
	}{
		{"a registry with a port", "- name: localhost:5000/app\n  newTag: \"1\"\n", "localhost:5000/app:0", "localhost:5000/app:2", "newTag: \"2\""},
		{"an entry with newName only", "- name: app\n  newName: reg.io/app\n", "app:1", "reg.io/app:2", "newTag: \"2\""},
		{"an entry with newName only, renamed again", "- name: app\n  newName: reg.io/app\n", "app:1", "other.io/app:1", "newName: other.io/app"},
		{"a digest-only entry", "- name: app\n  digest: sha256:aaaa\n", "app:1", "app@sha256:bbbb", "digest: sha256:bbbb"},
		{"a digest-only source image", "- name: app\n  newTag: \"2\"\n", "app@sha256:aaaa", "app:3", "newTag: \"3\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := imageFolder(t, c.entry, c.image)
			w := writeThrough(t, f, webID, func(doc map[string]any) { setFieldAt(t, doc, c.live, webImage...) })
			if w.Doc != nil || len(w.Edits) != 1 || !strings.Contains(string(w.Edits[0].Content), c.want) {
				t.Fatalf("want one entry edit holding %q, the source untouched; got %+v\n%s", c.want, w, editPaths(w.Edits))
			}
		})
	}
}

func TestCRLFKustomizationKeepsItsLineEndings(t *testing.T) {
	f := loadWithFile(t, "dev", "resources:\r\n- web.yaml\r\nimages:\r\n- name: nginx\r\n  newTag: \"1.26\"\r\n", "web.yaml", webDeployment)
	w := writeThrough(t, f, webID, func(doc map[string]any) { setFieldAt(t, doc, "nginx:1.27", webImage...) })
	got := string(w.Edits[0].Content)
	if want := "resources:\r\n- web.yaml\r\nimages:\r\n- name: nginx\r\n  newTag: \"1.27\"\r\n"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

func TestKustomizationYmlAtTheRoot(t *testing.T) {
	f := loadFolder(t, map[string]string{"kustomization.yml": "resources:\n- web.yaml\nnamespace: a\n", "web.yaml": webDeployment}, "")
	w := writeThrough(t, f, inNamespace(webID, "a"), func(doc map[string]any) { setFieldAt(t, doc, "nginx:9", webImage...) })
	if w.Source != "web.yaml" || w.Doc == nil {
		t.Fatalf("%+v", w)
	}
	if d := deleteAndApply(t, f, inNamespace(webID, "a")); !d.Delete || d.Source != "web.yaml" {
		t.Fatalf("the delete does not remove the root's document: %+v", d)
	}
}

func TestReplicasAbsentInTheSourceSetByAnEntry(t *testing.T) {
	f := loadWithFile(t, "dev", "resources:\n- web.yaml\nreplicas:\n- name: web\n  count: 2\n", "web.yaml", strings.Replace(webDeployment, "  replicas: 1\n", "", 1))
	w := writeThrough(t, f, webID, func(doc map[string]any) { doc["spec"].(map[string]any)["replicas"] = 4 })
	if w.Doc != nil || len(w.Edits) != 1 || !strings.Contains(string(w.Edits[0].Content), "count: 4") {
		t.Fatalf("%+v", w)
	}
}

func TestANonStringValueWithoutTokenIsNoDivergence(t *testing.T) {
	render := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  a: \"${X}\"\n  n: 3\n")
	live := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  a: \"${X}\"\n  n: 4\n")
	if d, err := RenderDivergence("s", render, live); err != nil || d != nil {
		t.Fatalf("%v %v", d, err)
	}
	live = []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata:\n  a: 5\n  n: 3\n")
	if d, err := RenderDivergence("s", render, live); err != nil || d == nil {
		t.Fatalf("a token substituted by a number is no divergence: %v %v", d, err)
	}
}
