package layout

import (
	"errors"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

func TestIdentityString(t *testing.T) {
	tests := []struct {
		id   Identity
		want string
	}{
		{Identity{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}, "apps/Deployment default/web"},
		{Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "cfg"}, "core/ConfigMap team-a/cfg"},
		{Identity{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"}, "rbac.authorization.k8s.io/ClusterRole /admin"},
	}
	for _, tt := range tests {
		if got := tt.id.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestIdentityOf(t *testing.T) {
	tests := []struct {
		name    string
		doc     string
		want    Identity
		wantErr bool
	}{
		{name: "core namespaced", doc: configMap("ns", "cfg", "v"), want: Identity{Kind: "ConfigMap", Namespace: "ns", Name: "cfg"}},
		{name: "group from apiVersion", doc: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\n",
			want: Identity{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "web"}},
		{name: "cluster-scoped", doc: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: admin\n",
			want: Identity{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"}},
		{name: "leading separator and comments", doc: "# c\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n",
			want: Identity{Kind: "Namespace", Name: "a"}},
		{name: "missing name", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n", wantErr: true},
		{name: "missing kind", doc: "apiVersion: v1\nmetadata: {name: a}\n", wantErr: true},
		{name: "missing apiVersion", doc: "kind: ConfigMap\nmetadata: {name: a}\n", wantErr: true},
		{name: "namespace not a scalar", doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: [x]}\n", wantErr: true},
		{name: "two documents", doc: configMap("a", "b", "c") + "---\n" + configMap("a", "d", "c"), wantErr: true},
		{name: "empty", doc: "", wantErr: true},
		{name: "invalid", doc: "a: [", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := IdentityOf([]byte(tt.doc))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("IdentityOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBuildIndexFindsDocuments(t *testing.T) {
	cm := func(name string) Identity { return Identity{Kind: "ConfigMap", Namespace: "ns", Name: name} }
	tests := []struct {
		name    string
		content string
		want    map[Identity]int // identity -> document index in the file
	}{
		{name: "single", content: configMap("ns", "a", "1"), want: map[Identity]int{cm("a"): 0}},
		{name: "multi", content: configMap("ns", "a", "1") + "---\n" + configMap("ns", "b", "1"), want: map[Identity]int{cm("a"): 0, cm("b"): 1}},
		{name: "empty documents are not counted",
			content: "# only a comment\n---\n---\n" + configMap("ns", "a", "1") + "---\n\n# c\n---\n" + configMap("ns", "b", "1") + "---\n",
			want:    map[Identity]int{cm("a"): 0, cm("b"): 1}},
		{name: "first line separator", content: "---\n" + configMap("ns", "a", "1"), want: map[Identity]int{cm("a"): 0}},
		{name: "separator with comment", content: configMap("ns", "a", "1") + "--- # next\n" + configMap("ns", "b", "1"), want: map[Identity]int{cm("a"): 0, cm("b"): 1}},
		{name: "trailing document end", content: configMap("ns", "a", "1") + "...\n", want: map[Identity]int{cm("a"): 0}},
		{name: "document end then separator", content: configMap("ns", "a", "1") + "...\n---\n" + configMap("ns", "b", "1") + "...\n", want: map[Identity]int{cm("a"): 0, cm("b"): 1}},
		{name: "crlf", content: "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n  namespace: ns\r\n---\r\n" + configMap("ns", "b", "1"), want: map[Identity]int{cm("a"): 0, cm("b"): 1}},
		{name: "byte order mark", content: "\ufeff" + configMap("ns", "a", "1"), want: map[Identity]int{cm("a"): 0}},
		{name: "no final newline", content: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}", want: map[Identity]int{cm("a"): 0}},
		{name: "empty file", content: "", want: map[Identity]int{}},
		{name: "only separator", content: "---\n", want: map[Identity]int{}},
		{name: "only whitespace", content: "\n  \n\t\n", want: map[Identity]int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range []string{"x/file.yaml", "x/file.yml"} {
				ix := mustIndex(t, folder{p: tt.content})
				if ix.Len() != len(tt.want) {
					t.Errorf("%s: Len = %d, want %d (%v)", p, ix.Len(), len(tt.want), ix.Identities())
				}
				for id, doc := range tt.want {
					loc, ok := ix.Lookup(id)
					if !ok || loc != (Location{Path: p, Doc: doc}) {
						t.Errorf("%s: Lookup(%s) = %+v, %v; want doc %d", p, id, loc, ok, doc)
					}
				}
			}
		})
	}
}

func TestBuildIndexSkipsPlainFilesAndKustomizations(t *testing.T) {
	f := folder{
		"README.md":                  "# hello",
		"docs/notes.MD":              "x",
		"LICENSE":                    "MIT",
		"COPYING.txt":                "x",
		"NOTICE":                     "x",
		".gitignore":                 "*.tmp",
		"sub/.gitattributes":         "* text",
		"empty/.gitkeep":             "",
		".sops.yaml":                 "creation_rules:\n  - age: age1xyz\n",
		"kustomization.yaml":         "resources:\n- cm.yaml\n",
		"overlay/kustomization.yml":  "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n",
		"overlay2/Kustomization":     "resources: []\n",
		"cm.yaml":                    configMap("ns", "a", "1"),
		"sub/deep/dir/role.yaml":     "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: admin\n",
		"sub/deep/dir/web.yaml":      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: default\n",
		"executable.yaml":            configMap("ns", "b", "1"),
		"kustomization-notes/x.yaml": configMap("ns", "c", "1"),
	}
	files := f.files()
	for i := range files {
		if files[i].Path == "executable.yaml" {
			files[i].Mode = tree.ModeExecutable
		}
	}
	ix, err := BuildIndex(files)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"apps/Deployment default/web",
		"core/ConfigMap ns/a",
		"core/ConfigMap ns/b",
		"core/ConfigMap ns/c",
		"rbac.authorization.k8s.io/ClusterRole /admin",
	}
	var got []string
	for _, id := range ix.Identities() {
		got = append(got, id.String())
	}
	if !sameStrings(got, want) {
		t.Errorf("Identities = %q, want %q", got, want)
	}
	if ks := ix.kustomizationPaths(); !sameStrings(ks, []string{"kustomization.yaml", "overlay/kustomization.yml", "overlay2/Kustomization"}) {
		t.Errorf("kustomizations = %q", ks)
	}
}

func TestIndexUpdate(t *testing.T) {
	a := Identity{Kind: "ConfigMap", Namespace: "ns", Name: "a"}
	b := Identity{Kind: "ConfigMap", Namespace: "ns", Name: "b"}
	c := Identity{Kind: "ConfigMap", Namespace: "ns", Name: "c"}

	ix := mustIndex(t, folder{
		"one.yaml": configMap("ns", "a", "1") + "---\n" + configMap("ns", "b", "1"),
		"two.yaml": configMap("ns", "c", "1"),
	})

	// Reorder and drop a document of one.yaml.
	if err := ix.Update("one.yaml", []byte(configMap("ns", "b", "1"))); err != nil {
		t.Fatal(err)
	}
	if _, ok := ix.Lookup(a); ok {
		t.Errorf("a still indexed after it left one.yaml")
	}
	if loc, _ := ix.Lookup(b); loc != (Location{Path: "one.yaml", Doc: 0}) {
		t.Errorf("b at %+v, want one.yaml doc 0", loc)
	}

	// A change that would duplicate an identity is refused and changes nothing.
	err := ix.Update("one.yaml", []byte(configMap("ns", "c", "1")))
	var uc *UnsupportedContentError
	if !errors.As(err, &uc) || uc.Path != "one.yaml" {
		t.Fatalf("duplicate update: err = %v, want UnsupportedContentError for one.yaml", err)
	}
	if loc, _ := ix.Lookup(b); loc.Path != "one.yaml" || ix.Len() != 2 {
		t.Errorf("index changed by a refused update: b at %+v, len %d", loc, ix.Len())
	}

	// Invalid content is refused and changes nothing.
	if err := ix.Update("two.yaml", []byte("a: [")); !errors.As(err, &uc) {
		t.Fatalf("invalid update: err = %v", err)
	}
	if _, ok := ix.Lookup(c); !ok {
		t.Errorf("c lost by a refused update")
	}

	// Moving c to another file and removing the old one.
	if err := ix.Update("moved/c.yaml", []byte(configMap("ns", "c", "1"))); err == nil {
		t.Fatalf("adding c twice must be refused")
	}
	if err := ix.Update("two.yaml", nil); err != nil {
		t.Fatal(err)
	}
	if err := ix.Update("moved/c.yaml", []byte(configMap("ns", "c", "1"))); err != nil {
		t.Fatal(err)
	}
	if loc, _ := ix.Lookup(c); loc.Path != "moved/c.yaml" {
		t.Errorf("c at %+v, want moved/c.yaml", loc)
	}

	// Kustomizations come and go with Update too.
	if err := ix.Update("k/kustomization.yaml", []byte("resources: []\n")); err != nil {
		t.Fatal(err)
	}
	if !sameStrings(ix.kustomizationPaths(), []string{"k/kustomization.yaml"}) {
		t.Errorf("kustomizations = %q", ix.kustomizationPaths())
	}
	if err := ix.Update("k/kustomization.yaml", nil); err != nil {
		t.Fatal(err)
	}
	if len(ix.kustomizationPaths()) != 0 {
		t.Errorf("kustomization still recorded after removal")
	}

	// Paths must stay inside the folder.
	for _, p := range []string{"", "/abs.yaml", "../up.yaml", "a/../b.yaml", "./a.yaml", `a\b.yaml`} {
		if err := ix.Update(p, []byte(configMap("ns", "z", "1"))); err == nil {
			t.Errorf("Update(%q) accepted", p)
		}
	}
}

func TestZeroIndex(t *testing.T) {
	var ix Index
	if ix.Len() != 0 || len(ix.Identities()) != 0 {
		t.Fatalf("zero index not empty")
	}
	if err := ix.Update("a.yaml", []byte(configMap("ns", "a", "1"))); err != nil {
		t.Fatal(err)
	}
	if _, ok := ix.Lookup(Identity{Kind: "ConfigMap", Namespace: "ns", Name: "a"}); !ok {
		t.Errorf("document not found after Update on a zero index")
	}
}
