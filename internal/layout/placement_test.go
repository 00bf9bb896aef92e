package layout

import (
	"errors"
	"path"
	"strings"
	"testing"
)

func secretDoc(ns, name string) string {
	return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\ndata:\n  k: djE=\n"
}

func clusterRoleDoc(name string) string {
	return "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: " + name + "\n"
}

func deploymentDoc(ns, name string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\nspec:\n  replicas: 1\n"
}

func TestPlacementLadder(t *testing.T) {
	byType := map[string]string{
		"v1/configmaps":       "config/{namespace}/{name}.yaml",
		"apps/v1/deployments": "{namespaceOrCluster}/{group}-{version}-{resource}/{kind}-{name}.yaml",
	}
	tests := []struct {
		name      string
		existing  folder
		typ       TypeInfo
		doc       string
		placement Placement
		want      []string // edited paths
	}{
		{name: "canonical core namespaced", typ: cmType(), doc: configMap("team-a", "cfg", "1"),
			want: []string{"team-a/core/configmaps/cfg.yaml"}},
		{name: "canonical group", typ: deployType(), doc: deploymentDoc("default", "web"),
			want: []string{"default/apps/deployments/web.yaml"}},
		{name: "canonical cluster-scoped", typ: clusterRoleType(), doc: clusterRoleDoc("admin"),
			want: []string{"_cluster/rbac.authorization.k8s.io/clusterroles/admin.yaml"}},
		{name: "canonical core cluster-scoped", typ: TypeInfo{Version: "v1", Resource: "namespaces", Kind: "Namespace"},
			doc: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n", want: []string{"_cluster/core/namespaces/team-a.yaml"}},
		{name: "canonical secret", typ: secretType(), doc: secretDoc("ns", "db"),
			want: []string{"ns/core/secrets/db.sops.yaml"}},
		{name: "byType core", typ: cmType(), doc: configMap("ns", "cfg", "1"), placement: Placement{ByType: byType, Default: "all.yaml"},
			want: []string{"config/ns/cfg.yaml"}},
		{name: "byType with group and every placeholder", typ: deployType(), doc: deploymentDoc("default", "web"), placement: Placement{ByType: byType},
			want: []string{"default/apps-v1-deployments/Deployment-web.yaml"}},
		{name: "default when no byType entry", typ: clusterRoleType(), doc: clusterRoleDoc("admin"), placement: Placement{ByType: byType, Default: "{namespaceOrCluster}/{name}.yaml"},
			want: []string{"_cluster/admin.yaml"}},
		{name: "template beats kustomization", existing: folder{"kustomization.yaml": "resources: []\n"},
			typ: cmType(), doc: configMap("ns", "cfg", "1"), placement: Placement{Default: "{name}.yaml"},
			want: []string{"cfg.yaml"}},
		{name: "beside the single kustomization", existing: folder{"apps/kustomization.yaml": "resources:\n- old.yaml\n"},
			typ: deployType(), doc: deploymentDoc("default", "web"),
			want: []string{"apps/kustomization.yaml", "apps/web-deployment.yaml"}},
		{name: "beside the single kustomization at the root", existing: folder{"Kustomization": "resources: []\n"},
			typ: cmType(), doc: configMap("ns", "cfg", "1"),
			want: []string{"Kustomization", "cfg-configmap.yaml"}},
		{name: "secret beside the kustomization", existing: folder{"kustomization.yml": "resources: []\n"},
			typ: secretType(), doc: secretDoc("ns", "db"),
			want: []string{"db-secret.sops.yaml", "kustomization.yml"}},
		{name: "two kustomizations fall to canonical",
			existing: folder{"a/kustomization.yaml": "resources: []\n", "b/kustomization.yaml": "resources: []\n"},
			typ:      cmType(), doc: configMap("ns", "cfg", "1"),
			want: []string{"ns/core/configmaps/cfg.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.existing.clone()
			ix := mustIndex(t, f)
			edits, err := Upsert(ix, f.read, tt.typ, []byte(tt.doc), tt.placement)
			if err != nil {
				t.Fatal(err)
			}
			if got := editPaths(edits); !sameStrings(got, tt.want) {
				t.Fatalf("edited %q, want %q", got, tt.want)
			}
			// After the caller applies the edits, the document is found and a
			// second upsert is a no-op.
			f.apply(t, ix, edits)
			id, _ := IdentityOf([]byte(tt.doc))
			if _, ok := ix.Lookup(id); !ok {
				t.Fatalf("%s not indexed after apply", id)
			}
			again, err := Upsert(ix, f.read, tt.typ, []byte(tt.doc), tt.placement)
			if err != nil || again != nil {
				t.Errorf("second upsert: %q, %v; want no-op", editPaths(again), err)
			}
		})
	}
}

func TestPlacementNewDocumentIsRendered(t *testing.T) {
	f := folder{}
	ix := mustIndex(t, f)
	doc := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},
"spec":{"template":{"spec":{"containers":[{"name":"web","ports":[{"containerPort":80}]}]}}}}`
	edits, err := Upsert(ix, f.read, deployType(), []byte(doc), Placement{})
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  template:
    spec:
      containers:
      - name: web
        ports:
        - containerPort: 80
`
	if got := editOf(t, edits, "default/apps/deployments/web.yaml"); got != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", got, want)
	}
}

// A new file whose text is the document as it came holds that document, not a copy of it:
// a first mirror keeps every file until its commit.
func TestPlacementOfARenderedDocumentKeepsItsText(t *testing.T) {
	f := folder{}
	ix := mustIndex(t, f)
	doc := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: default\nspec:\n  replicas: 2\n")
	edits, err := Upsert(ix, f.read, deployType(), doc, Placement{})
	if err != nil {
		t.Fatal(err)
	}
	if len(edits) != 1 || string(edits[0].Content) != string(doc) {
		t.Fatalf("edits %+v, want one file holding the document", edits)
	}
	if &edits[0].Content[0] != &doc[0] {
		t.Errorf("the new file holds a copy of the document")
	}
}

func TestPlacementAppendsToExistingFile(t *testing.T) {
	tests := []struct {
		name     string
		existing string
		want     string
	}{
		{name: "after a document", existing: configMap("ns", "a", "1"),
			want: configMap("ns", "a", "1") + "---\n" + configMap("ns", "b", "1")},
		{name: "no final newline", existing: strings.TrimSuffix(configMap("ns", "a", "1"), "\n"),
			want: configMap("ns", "a", "1") + "---\n" + configMap("ns", "b", "1")},
		{name: "ends in a separator", existing: configMap("ns", "a", "1") + "---\n",
			want: configMap("ns", "a", "1") + "---\n" + configMap("ns", "b", "1")},
		{name: "trailing comment kept", existing: configMap("ns", "a", "1") + "# the end\n",
			want: configMap("ns", "a", "1") + "# the end\n---\n" + configMap("ns", "b", "1")},
		{name: "crlf", existing: strings.ReplaceAll(configMap("ns", "a", "1"), "\n", "\r\n"),
			want: strings.ReplaceAll(configMap("ns", "a", "1")+"---\n"+configMap("ns", "b", "1"), "\n", "\r\n")},
		{name: "only comments", existing: "# header\n",
			want: "# header\n---\n" + configMap("ns", "b", "1")},
		{name: "empty file", existing: "",
			want: configMap("ns", "b", "1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := folder{"all.yaml": tt.existing}
			ix := mustIndex(t, f)
			edits, err := Upsert(ix, f.read, cmType(), []byte(configMap("ns", "b", "1")), Placement{Default: "all.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			if got := editOf(t, edits, "all.yaml"); got != tt.want {
				t.Errorf("content:\n%q\nwant:\n%q", got, tt.want)
			}
		})
	}
}

func TestPlacementSecretNeverSharesAFile(t *testing.T) {
	tests := []struct {
		name     string
		existing string
		typ      TypeInfo
		doc      string
	}{
		{name: "secret into a shared file", existing: configMap("ns", "a", "1"), typ: secretType(), doc: secretDoc("ns", "db")},
		{name: "document into a secret's file", existing: secretDoc("ns", "db"), typ: cmType(), doc: configMap("ns", "a", "1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := folder{"all.yaml": tt.existing}
			ix := mustIndex(t, f)
			_, err := Upsert(ix, f.read, tt.typ, []byte(tt.doc), Placement{Default: "all.yaml"})
			if !errors.Is(err, ErrSecretSharedFile) {
				t.Errorf("err = %v, want ErrSecretSharedFile", err)
			}
		})
	}
}

func TestPlacementTemplateErrors(t *testing.T) {
	tests := []struct {
		name string
		tpl  string
		typ  TypeInfo
		doc  string
	}{
		{name: "unknown placeholder", tpl: "{names}.yaml", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: "unclosed brace", tpl: "{name.yaml", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: "stray closing brace", tpl: "name}.yaml", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: "not yaml", tpl: "{name}.json", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: "yml is not accepted for new files", tpl: "{name}.yml", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: "absolute", tpl: "/{name}.yaml", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: "escapes", tpl: "../{name}.yaml", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: "escapes in the middle", tpl: "a/../../{name}.yaml", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: "not clean", tpl: "./{name}.yaml", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: "empty segment for a cluster-scoped namespace", tpl: "{namespace}/{name}.yaml", typ: clusterRoleType(), doc: clusterRoleDoc("admin")},
		{name: "kustomization file name", tpl: "kustomization.yaml", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: "sops config file name", tpl: ".sops.yaml", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: "empty file name", tpl: "dir/.yaml", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: "empty template result", tpl: "{namespace}", typ: clusterRoleType(), doc: clusterRoleDoc("admin")},
		{name: ".git in upper case", tpl: ".GIT/{name}.yaml", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: ".git with a trailing dot", tpl: ".git./{name}.yaml", typ: cmType(), doc: configMap("ns", "a", "1")},
		{name: ".git's 8.3 short name", tpl: "git~1/{name}.yaml", typ: cmType(), doc: configMap("ns", "a", "1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range []Placement{{Default: tt.tpl}, {ByType: map[string]string{typeKey(tt.typ): tt.tpl}}} {
				f := folder{}
				ix := mustIndex(t, f)
				edits, err := Upsert(ix, f.read, tt.typ, []byte(tt.doc), p)
				if err == nil {
					t.Errorf("placement %+v: edits %q, want an error", p, editPaths(edits))
				}
			}
		})
	}
}

func TestPlacementCanonicalReservedName(t *testing.T) {
	// A ConfigMap named "kustomization" would land in a file that kustomize
	// reads as a build file.
	f := folder{}
	ix := mustIndex(t, f)
	_, err := Upsert(ix, f.read, cmType(), []byte(configMap("ns", "kustomization", "1")), Placement{})
	if err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("err = %v, want a reserved file name error", err)
	}
}

func TestALongestKubernetesNameGetsAFileNameFilesystemsAccept(t *testing.T) {
	name := strings.Repeat("a", 253)
	id := Identity{Kind: "ConfigMap", Namespace: "team-a", Name: name}
	typ := TypeInfo{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	got := canonicalPath(typ, id, false)
	base := path.Base(got)
	if len(base) > 255 || !strings.HasSuffix(base, ".yaml") || !strings.HasPrefix(base, strings.Repeat("a", 200)) {
		t.Fatalf("file name %q (%d bytes) is not a shortened name ending in .yaml", base, len(base))
	}
	other := canonicalPath(typ, Identity{Kind: "ConfigMap", Namespace: "team-a", Name: strings.Repeat("a", 252) + "b"}, false)
	if other == got {
		t.Fatal("two long names that differ only at the end share a file")
	}
	if short := canonicalPath(typ, Identity{Kind: "ConfigMap", Namespace: "team-a", Name: "web"}, false); short != "team-a/core/configmaps/web.yaml" {
		t.Fatalf("a short name changed its path: %q", short)
	}
}

// A new document keeps the double quotes of strings a YAML 1.1 reader (kubectl, Flux,
// kustomize) would take for a bool or a number.
func TestANewDocumentQuotesWhatYAML11WouldMisread(t *testing.T) {
	f := folder{}
	ix := mustIndex(t, f)
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  a: \"y\"\n  b: \"on\"\n  c: \"1:20\"\n  d: \"yesterday\"\n"
	edits, err := Upsert(ix, f.read, cmType(), []byte(doc), Placement{})
	if err != nil {
		t.Fatal(err)
	}
	want := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  a: \"y\"\n  b: \"on\"\n  c: \"1:20\"\n  d: yesterday\n"
	if got := editOf(t, edits, "ns/core/configmaps/a.yaml"); got != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", got, want)
	}
}
