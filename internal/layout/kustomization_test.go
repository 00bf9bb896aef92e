package layout

import (
	"testing"
)

func TestKustomizationResourcesOnPlacement(t *testing.T) {
	tests := []struct {
		name          string
		kustomization string
		want          string // "" = the kustomization is not edited
	}{
		{
			name:          "appended to the list, comments and other keys kept",
			kustomization: "# app overlay\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: shop # all in shop\n\nresources:\n- deploy.yaml # the app\n- svc.yaml\n\nimages:\n- name: nginx\n  newTag: \"1.25\"\n",
			want:          "# app overlay\napiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: shop # all in shop\n\nresources:\n- deploy.yaml # the app\n- svc.yaml\n- cfg-configmap.yaml\n\nimages:\n- name: nginx\n  newTag: \"1.25\"\n",
		},
		{
			name:          "indented list stays indented",
			kustomization: "resources:\n  - a.yaml\n",
			want:          "resources:\n  - a.yaml\n  - cfg-configmap.yaml\n",
		},
		{
			name:          "key created when absent",
			kustomization: "namespace: shop\n",
			want:          "namespace: shop\nresources:\n- cfg-configmap.yaml\n",
		},
		{
			name:          "empty flow list",
			kustomization: "resources: []\n",
			want:          "resources:\n- cfg-configmap.yaml\n",
		},
		{
			name:          "null value",
			kustomization: "resources:\nnamespace: shop\n",
			want:          "resources:\n- cfg-configmap.yaml\nnamespace: shop\n",
		},
		{
			name:          "empty file",
			kustomization: "",
			want:          "resources:\n- cfg-configmap.yaml\n",
		},
		{
			name:          "crlf",
			kustomization: "namespace: shop\r\nresources:\r\n- a.yaml\r\n",
			want:          "namespace: shop\r\nresources:\r\n- a.yaml\r\n- cfg-configmap.yaml\r\n",
		},
		{
			name:          "listed already",
			kustomization: "resources:\n- ./cfg-configmap.yaml\n",
			want:          "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := folder{"overlay/kustomization.yaml": tt.kustomization}
			ix := mustIndex(t, f)
			edits, err := Upsert(ix, f.read, cmType(), []byte(configMap("shop", "cfg", "1")), Placement{})
			if err != nil {
				t.Fatal(err)
			}
			wantPaths := []string{"overlay/cfg-configmap.yaml"}
			if tt.want != "" {
				wantPaths = []string{"overlay/cfg-configmap.yaml", "overlay/kustomization.yaml"}
			}
			if got := editPaths(edits); !sameStrings(got, wantPaths) {
				t.Fatalf("edited %q, want %q", got, wantPaths)
			}
			if tt.want == "" {
				return
			}
			if got := editOf(t, edits, "overlay/kustomization.yaml"); got != tt.want {
				t.Errorf("kustomization:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

func TestKustomizationEntryRemovedWithLastDocument(t *testing.T) {
	tests := []struct {
		name  string
		files folder
		want  map[string]string // path -> content; "" = deleted
	}{
		{
			name: "entry removed, rest kept",
			files: folder{
				"kustomization.yaml": "resources:\n- a.yaml # first\n- cfg.yaml\n- b.yaml\ncommonLabels:\n  team: a\n",
				"cfg.yaml":           configMap("ns", "cfg", "1"),
			},
			want: map[string]string{
				"cfg.yaml":           "",
				"kustomization.yaml": "resources:\n- a.yaml # first\n- b.yaml\ncommonLabels:\n  team: a\n",
			},
		},
		{
			name: "entry written with ./",
			files: folder{
				"app/kustomization.yaml": "resources:\n- ./cfg.yaml\n",
				"app/cfg.yaml":           configMap("ns", "cfg", "1"),
			},
			want: map[string]string{"app/cfg.yaml": "", "app/kustomization.yaml": "resources: []\n"},
		},
		{
			// A dangling entry would make the folder fail to build.
			name: "kustomization of a folder above releases it too",
			files: folder{
				"kustomization.yaml": "resources:\n- app/cfg.yaml\n- keep.yaml\n",
				"keep.yaml":          configMap("ns", "keep", "1"),
				"app/cfg.yaml":       configMap("ns", "cfg", "1"),
			},
			want: map[string]string{"app/cfg.yaml": "", "kustomization.yaml": "resources:\n- keep.yaml\n"},
		},
		{
			name: "file not listed",
			files: folder{
				"kustomization.yaml": "resources:\n- other.yaml\n",
				"cfg.yaml":           configMap("ns", "cfg", "1"),
			},
			want: map[string]string{"cfg.yaml": ""},
		},
		{
			name: "not the last document: kustomization untouched",
			files: folder{
				"kustomization.yaml": "resources:\n- cfg.yaml\n",
				"cfg.yaml":           configMap("ns", "cfg", "1") + "---\n" + configMap("ns", "other", "1"),
			},
			want: map[string]string{"cfg.yaml": configMap("ns", "other", "1")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := mustIndex(t, tt.files)
			edits, err := Delete(ix, tt.files.read, Identity{Kind: "ConfigMap", Namespace: "ns", Name: "cfg"})
			if err != nil {
				t.Fatal(err)
			}
			if len(edits) != len(tt.want) {
				t.Fatalf("edited %q, want %d edits", editPaths(edits), len(tt.want))
			}
			for _, e := range edits {
				want, ok := tt.want[e.Path]
				switch {
				case !ok:
					t.Errorf("unexpected edit of %s", e.Path)
				case want == "" && e.Content != nil:
					t.Errorf("%s: want deleted, got\n%s", e.Path, e.Content)
				case want != "" && string(e.Content) != want:
					t.Errorf("%s:\n%q\nwant:\n%q", e.Path, e.Content, want)
				}
			}
		})
	}
}

func TestKustomizationRefusals(t *testing.T) {
	for _, content := range []string{
		"- a\n- b\n",                   // not a mapping
		"resources: [\n",               // invalid YAML
		"resources: []\n---\nfoo: 1\n", // two documents
	} {
		_, err := BuildIndex(folder{"kustomization.yaml": content}.files())
		if err == nil {
			t.Errorf("kustomization %q accepted", content)
		}
	}
	// A resources value that is not a list refuses the placement.
	f := folder{"kustomization.yaml": "resources: a.yaml\n"}
	ix := mustIndex(t, f)
	if _, err := Upsert(ix, f.read, cmType(), []byte(configMap("ns", "cfg", "1")), Placement{}); err == nil {
		t.Errorf("resources as a string accepted")
	}
}
