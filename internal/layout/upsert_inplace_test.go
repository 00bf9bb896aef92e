package layout

import (
	"strings"
	"testing"
)

// threeDocs is a hand-written file: a head comment, line comments, comments
// between the documents, a blank line and a kubectl-style list.
const threeDocs = `# Application config, owned by team A.
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings # the main settings
  namespace: shop
data:
  mode: "fast"   # keep quoted
  retries: '3'
# --- end of settings ---
---
# The web front end.
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels:
    app: web # selector label

spec:
  replicas: 2 # scaled by hand
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.25 # pinned
        args: ["--port", "8080"]
# between web and svc
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  ports:
  - port: 80 # http
`

func TestUpsertEditsOneDocumentOfThree(t *testing.T) {
	tests := []struct {
		name string
		doc  string // the new content of shop/web
		want []string
	}{
		{
			name: "replicas",
			doc: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels:
    app: web
spec:
  replicas: 5
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.25
        args: ["--port", "8080"]
`,
			want: []string{"-  replicas: 2 # scaled by hand\n", "+  replicas: 5 # scaled by hand\n"},
		},
		{
			name: "image inside a list",
			doc: `{"apiVersion": "apps/v1", "kind": "Deployment",
 "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
 "spec": {"replicas": 2, "template": {"spec": {"containers": [
   {"name": "web", "image": "nginx:1.27", "args": ["--port", "8080"]}]}}}}
`,
			want: []string{"-        image: nginx:1.25 # pinned\n", "+        image: nginx:1.27 # pinned\n"},
		},
		{
			name: "new key goes last",
			doc: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
  labels:
    app: web
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.25
        args: ["--port", "8080"]
  paused: true
`,
			want: []string{"+  paused: true\n"},
		},
		{
			name: "removed key",
			doc: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 2
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.25
        args: ["--port", "8080"]
`,
			want: []string{"-  labels:\n", "-    app: web # selector label\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := folder{"shop/app.yaml": threeDocs}
			ix := mustIndex(t, f)
			edits, err := Upsert(ix, f.read, deployType(), []byte(tt.doc), Placement{Default: "elsewhere/{name}.yaml"})
			if err != nil {
				t.Fatal(err)
			}
			if got := editPaths(edits); !sameStrings(got, []string{"shop/app.yaml"}) {
				t.Fatalf("edited %q, want only shop/app.yaml", got)
			}
			got := editOf(t, edits, "shop/app.yaml")
			if changes := lineChanges(threeDocs, got); !sameStrings(changes, tt.want) {
				t.Errorf("changed lines:\n%q\nwant:\n%q\nfile:\n%s", changes, tt.want, got)
			}
			docs := strings.Split(got, "\n---\n")
			orig := strings.Split(threeDocs, "\n---\n")
			if len(docs) != 3 || docs[0] != orig[0] || docs[2] != orig[2] {
				t.Errorf("first or last document changed:\n%s", got)
			}
		})
	}
}

func TestUpsertNoOp(t *testing.T) {
	tests := []struct {
		name    string
		content string
		doc     string
	}{
		{name: "same text", content: configMap("ns", "a", "v"), doc: configMap("ns", "a", "v")},
		{name: "same meaning, other formatting",
			content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: a      # four spaces\n    namespace: ns\ndata: {key: \"v\"}\n",
			doc:     configMap("ns", "a", "v")},
		{name: "same meaning, other key order",
			content: "kind: ConfigMap\ndata:\n  key: v\nmetadata:\n  namespace: ns\n  name: a\napiVersion: v1\n",
			doc:     configMap("ns", "a", "v")},
		{name: "in a multi-document crlf file",
			content: strings.ReplaceAll(configMap("ns", "b", "x")+"---\n"+configMap("ns", "a", "v"), "\n", "\r\n"),
			doc:     configMap("ns", "a", "v")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := folder{"cm.yaml": tt.content}
			ix := mustIndex(t, f)
			edits, err := Upsert(ix, f.read, cmType(), []byte(tt.doc), Placement{})
			if err != nil {
				t.Fatal(err)
			}
			if edits != nil {
				t.Errorf("edits = %q, want nil", edits)
			}
		})
	}
}

func TestUpsertMatchFirst(t *testing.T) {
	// The document lives at a path no placement rule would choose; it is
	// edited there whatever the placement says.
	placements := []Placement{
		{},
		{Default: "{namespace}/{name}.yaml"},
		{ByType: map[string]string{"v1/configmaps": "cm/{name}.yaml"}},
	}
	for _, p := range placements {
		f := folder{
			"legacy/odd name.yml": configMap("other", "x", "1") + "---\n" + configMap("ns", "a", "old"),
			"kustomization.yaml":  "resources:\n- legacy/odd name.yml\n",
		}
		ix := mustIndex(t, f)
		edits, err := Upsert(ix, f.read, cmType(), []byte(configMap("ns", "a", "new")), p)
		if err != nil {
			t.Fatal(err)
		}
		if got := editPaths(edits); !sameStrings(got, []string{"legacy/odd name.yml"}) {
			t.Fatalf("placement %+v: edited %q", p, got)
		}
		want := configMap("other", "x", "1") + "---\n" + configMap("ns", "a", "new")
		if got := editOf(t, edits, "legacy/odd name.yml"); got != want {
			t.Errorf("content:\n%s\nwant:\n%s", got, want)
		}
	}
}

func TestUpsertKeepsFormattingOfEditedDocument(t *testing.T) {
	tests := []struct {
		name    string
		content string
		doc     string
		want    string
	}{
		{
			name:    "byte order mark and leading separator",
			content: "\ufeff---\n" + configMap("ns", "a", "old"),
			doc:     configMap("ns", "a", "new"),
			want:    "\ufeff---\n" + configMap("ns", "a", "new"),
		},
		{
			name:    "document end marker and trailing comment stay",
			content: configMap("ns", "a", "old") + "...\n# tail\n",
			doc:     configMap("ns", "a", "new"),
			want:    configMap("ns", "a", "new") + "...\n# tail\n",
		},
		{
			name:    "no final newline",
			content: strings.TrimSuffix(configMap("ns", "a", "old"), "\n"),
			doc:     configMap("ns", "a", "new"),
			want:    strings.TrimSuffix(configMap("ns", "a", "new"), "\n"),
		},
		{
			name:    "indented lists stay indented",
			content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  finalizers:\n    - one\n    - two\ndata:\n  key: old\n",
			doc:     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  finalizers: [one, two]\ndata:\n  key: new\n",
			want:    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  finalizers:\n    - one\n    - two\ndata:\n  key: new\n",
		},
		{
			name:    "list of another length is replaced",
			content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  finalizers:\n  - one # first\n  - two\n",
			doc:     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  finalizers: [one, two, three]\n",
			want:    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  finalizers:\n  - one\n  - two\n  - three\n",
		},
		{
			name:    "block scalar ending in comment-like lines",
			content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  other: x\n  script: |\n    echo hi\n    # not a comment\n",
			doc:     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  other: y\n  script: |\n    echo hi\n    # not a comment\n",
			want:    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  other: \"y\"\n  script: |\n    echo hi\n    # not a comment\n",
		},
		{
			// kubectl, Flux and kustomize read YAML 1.1, where these are a bool and a number.
			name:    "a string YAML 1.1 reads as another type is double-quoted when edited in place",
			content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  flag: x\n  time: x\n  plain: x\n",
			doc:     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  flag: \"off\"\n  time: \"1:20\"\n  plain: \"yesterday\"\n",
			want:    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  flag: \"off\"\n  time: \"1:20\"\n  plain: yesterday\n",
		},
		{
			// yaml.v3 would keep the literal block, whose leading empty line no reader keeps.
			name:    "a block scalar edited to start with a line break is double-quoted",
			content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  script: |\n    echo hi\n    echo there\n",
			doc:     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  script: \"\\necho hi\\n\"\n",
			want:    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  script: \"\\necho hi\\n\"\n",
		},
		{
			name:    "string that looks like a number stays a string",
			content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  key: abc\n",
			doc:     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  key: \"123\"\n",
			want:    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\ndata:\n  key: \"123\"\n",
		},
		{
			name:    "anchors are written afresh",
			content: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  labels: &l {x: y}\n  annotations: *l\n",
			doc:     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n  labels: {x: z}\n  annotations: {x: y}\n",
			want:    "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := folder{"f.yaml": tt.content}
			ix := mustIndex(t, f)
			edits, err := Upsert(ix, f.read, cmType(), []byte(tt.doc), Placement{})
			if err != nil {
				t.Fatal(err)
			}
			got := editOf(t, edits, "f.yaml")
			if tt.want != "" && got != tt.want {
				t.Errorf("content:\n%q\nwant:\n%q", got, tt.want)
			}
			// Whatever the formatting, the file must index back to the new document.
			f.apply(t, ix, edits)
			again, err := Upsert(ix, f.read, cmType(), []byte(tt.doc), Placement{})
			if err != nil || again != nil {
				t.Errorf("second upsert: edits %q, err %v; want a no-op", editPaths(again), err)
			}
		})
	}
}

func TestUpsertCRLFKeepsSiblingsAndLineEndings(t *testing.T) {
	content := "# head\r\n" + strings.ReplaceAll(configMap("ns", "b", "1"), "\n", "\r\n") +
		"---\r\n" + strings.ReplaceAll(configMap("ns", "a", "old"), "\n", "\r\n")
	f := folder{"f.yaml": content}
	ix := mustIndex(t, f)
	edits, err := Upsert(ix, f.read, cmType(), []byte(configMap("ns", "a", "new")), Placement{})
	if err != nil {
		t.Fatal(err)
	}
	got := editOf(t, edits, "f.yaml")
	want := []string{"-  key: old\r\n", "+  key: new\r\n"}
	if changes := lineChanges(content, got); !sameStrings(changes, want) {
		t.Errorf("changes %q, want %q", changes, want)
	}
}

func TestUpsertDoesNotChangeIndex(t *testing.T) {
	f := folder{"a.yaml": configMap("ns", "a", "1")}
	ix := mustIndex(t, f)
	if _, err := Upsert(ix, f.read, cmType(), []byte(configMap("ns", "a", "2")), Placement{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Upsert(ix, f.read, cmType(), []byte(configMap("ns", "new", "2")), Placement{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Delete(ix, f.read, Identity{Kind: "ConfigMap", Namespace: "ns", Name: "a"}); err != nil {
		t.Fatal(err)
	}
	if ix.Len() != 1 {
		t.Errorf("Len = %d, want 1", ix.Len())
	}
	if loc, ok := ix.Lookup(Identity{Kind: "ConfigMap", Namespace: "ns", Name: "a"}); !ok || loc.Path != "a.yaml" {
		t.Errorf("Lookup = %+v %v", loc, ok)
	}
}

func TestUpsertStaleIndex(t *testing.T) {
	f := folder{"a.yaml": configMap("ns", "a", "1")}
	ix := mustIndex(t, f)
	f["a.yaml"] = configMap("ns", "other", "1") // changed behind the index's back
	_, err := Upsert(ix, f.read, cmType(), []byte(configMap("ns", "a", "2")), Placement{})
	if !errorsIs(err, ErrStaleIndex) {
		t.Errorf("err = %v, want ErrStaleIndex", err)
	}
	delete(f, "a.yaml")
	_, err = Upsert(ix, f.read, cmType(), []byte(configMap("ns", "a", "2")), Placement{})
	if !errorsIs(err, ErrStaleIndex) {
		t.Errorf("missing file: err = %v, want ErrStaleIndex", err)
	}
}
