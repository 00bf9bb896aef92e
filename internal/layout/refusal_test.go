package layout

import (
	"errors"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

func TestBuildIndexRefusesUnsupportedContent(t *testing.T) {
	tests := []struct {
		name     string
		files    []tree.File
		wantPath string
		wantIn   []string // parts of the message
	}{
		{name: "non-YAML file", files: []tree.File{{Path: "clusters/dev/notes.bin", Content: []byte{0, 1, 2}}},
			wantPath: "clusters/dev/notes.bin", wantIn: []string{"clusters/dev/notes.bin: not a YAML file; remove it or move it out of the folder"}},
		{name: "json is not YAML here", files: []tree.File{{Path: "cm.json", Content: []byte(`{}`)}},
			wantPath: "cm.json", wantIn: []string{"not a YAML file"}},
		{name: "unknown dotfile", files: []tree.File{{Path: ".gittargetignore", Content: []byte("x")}},
			wantPath: ".gittargetignore", wantIn: []string{"not a YAML file"}},
		{name: "symlink", files: []tree.File{{Path: "link.yaml", Content: []byte("target.yaml"), Mode: tree.ModeSymlink}},
			wantPath: "link.yaml", wantIn: []string{"symbolic link"}},
		{name: "symlink with an accepted name", files: []tree.File{{Path: "README.md", Content: []byte("x"), Mode: tree.ModeSymlink}},
			wantPath: "README.md", wantIn: []string{"symbolic link"}},
		{name: "submodule", files: []tree.File{{Path: "vendor/lib", Mode: tree.ModeSubmodule}},
			wantPath: "vendor/lib", wantIn: []string{"submodule"}},
		{name: "invalid YAML", files: []tree.File{{Path: "a.yaml", Content: []byte(configMap("ns", "a", "1") + "---\n\n\nkey: [unclosed\n")}},
			wantPath: "a.yaml", wantIn: []string{"invalid YAML in the document at line 11: ", "did not find expected ',' or ']'; fix the syntax"}},
		{name: "tab indentation", files: []tree.File{{Path: "a.yml", Content: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n")}},
			wantPath: "a.yml", wantIn: []string{"invalid YAML"}},
		{name: "duplicate key", files: []tree.File{{Path: "a.yaml", Content: []byte(configMap("ns", "a", "1") + "kind: Secret\n")}},
			wantPath: "a.yaml", wantIn: []string{`invalid YAML in the document at line 1: unmarshal errors: line 8: mapping key "kind" already defined at line 2; fix the syntax`}},
		{name: "document after an end marker", files: []tree.File{{Path: "a.yaml", Content: []byte(configMap("ns", "a", "1") + "...\n" + configMap("ns", "b", "1"))}},
			wantPath: "a.yaml", wantIn: []string{"invalid YAML"}},
		{name: "document on the separator line", files: []tree.File{{Path: "a.yaml", Content: []byte(configMap("ns", "a", "1") + "--- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n")}},
			wantPath: "a.yaml", wantIn: []string{"separator"}},
		{name: "not an object: plain mapping", files: []tree.File{{Path: "values.yaml", Content: []byte("replicas: 3\n")}},
			wantPath: "values.yaml", wantIn: []string{"not a Kubernetes object", "apiVersion, kind and metadata.name"}},
		{name: "not an object: list", files: []tree.File{{Path: "a.yaml", Content: []byte("- a\n- b\n")}},
			wantPath: "a.yaml", wantIn: []string{"not a Kubernetes object"}},
		{name: "not an object: scalar", files: []tree.File{{Path: "a.yaml", Content: []byte("hello\n")}},
			wantPath: "a.yaml", wantIn: []string{"not a Kubernetes object"}},
		{name: "not an object: no name", files: []tree.File{{Path: "a.yaml", Content: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: x-\n")}},
			wantPath: "a.yaml", wantIn: []string{"not a Kubernetes object"}},
		{name: "second document not an object", files: []tree.File{{Path: "a.yaml", Content: []byte(configMap("ns", "a", "1") + "---\n# note\nfoo: bar\n")}},
			wantPath: "a.yaml", wantIn: []string{"line 10", "not a Kubernetes object"}},
		{name: "duplicate across files", files: []tree.File{
			{Path: "b/cm.yaml", Content: []byte(configMap("ns", "a", "1"))},
			{Path: "a/cm.yaml", Content: []byte(configMap("ns", "a", "2"))},
		}, wantPath: "b/cm.yaml", wantIn: []string{"b/cm.yaml", "core/ConfigMap ns/a", "also defined in a/cm.yaml"}},
		{name: "duplicate in one file", files: []tree.File{{Path: "a.yaml", Content: []byte(configMap("ns", "a", "1") + "---\n" + configMap("ns", "a", "2"))}},
			wantPath: "a.yaml", wantIn: []string{"core/ConfigMap ns/a", "defined twice"}},
		{name: "refusal among good files", files: []tree.File{
			{Path: "README.md", Content: []byte("x")},
			{Path: "ok.yaml", Content: []byte(configMap("ns", "a", "1"))},
			{Path: "z/script.sh", Content: []byte("#!/bin/sh\n"), Mode: tree.ModeExecutable},
		}, wantPath: "z/script.sh", wantIn: []string{"not a YAML file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, err := BuildIndex(tt.files)
			var uc *UnsupportedContentError
			if !errors.As(err, &uc) {
				t.Fatalf("err = %v (index %v), want *UnsupportedContentError", err, ix)
			}
			if uc.Path != tt.wantPath {
				t.Errorf("Path = %q, want %q", uc.Path, tt.wantPath)
			}
			for _, part := range tt.wantIn {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("message %q lacks %q", err.Error(), part)
				}
			}
		})
	}
}

func TestBuildIndexAcceptsEmptyDocuments(t *testing.T) {
	for _, content := range []string{"", "---\n", "---", "# just a comment\n", "\n\n", "...\n", "---\n...\n---\n", "%YAML 1.2\n---\n"} {
		ix, err := BuildIndex([]tree.File{{Path: "a.yaml", Content: []byte(content)}})
		if err != nil || ix.Len() != 0 {
			t.Errorf("%q: err %v", content, err)
		}
	}
}

func TestUpsertRefusesUnsafeNames(t *testing.T) {
	tests := []struct {
		name      string
		namespace string
		objName   string
	}{
		{name: "dot-dot name", namespace: "ns", objName: ".."},
		{name: "dot name", namespace: "ns", objName: "."},
		{name: "slash in name", namespace: "ns", objName: "a/b"},
		{name: "backslash in name", namespace: "ns", objName: `a\b`},
		{name: "escaping name", namespace: "ns", objName: "../../etc"},
		{name: "empty name", namespace: "ns", objName: `""`},
		{name: "dot-dot namespace", namespace: "..", objName: "a"},
		{name: "slash in namespace", namespace: "a/b", objName: "a"},
		{name: "backslash in namespace", namespace: `'a\b'`, objName: "a"},
		{name: "control character", namespace: "ns", objName: `"a\nb"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := folder{}
			ix := mustIndex(t, f)
			doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + tt.objName + "\n  namespace: " + tt.namespace + "\n"
			edits, err := Upsert(ix, f.read, cmType(), []byte(doc), Placement{Default: "{namespace}/{name}.yaml"})
			if tt.objName == `""` {
				// An empty name is no object identity at all.
				if err == nil {
					t.Fatalf("empty name accepted: %q", editPaths(edits))
				}
				return
			}
			if !errors.Is(err, ErrUnsafeName) {
				t.Errorf("err = %v, want ErrUnsafeName; edits %q", err, editPaths(edits))
			}
		})
	}
}

func TestUpsertRefusesWrongInput(t *testing.T) {
	tests := []struct {
		name string
		typ  TypeInfo
		doc  string
	}{
		{name: "kind differs from the type", typ: cmType(), doc: secretDoc("ns", "a")},
		{name: "group differs from the type", typ: deployType(), doc: "apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: a, namespace: ns}\n"},
		{name: "namespaced type without namespace", typ: cmType(), doc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"},
		{name: "cluster-scoped type with namespace", typ: clusterRoleType(), doc: "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: a, namespace: ns}\n"},
		{name: "type without resource", typ: TypeInfo{Version: "v1", Kind: "ConfigMap", Namespaced: true}, doc: configMap("ns", "a", "1")},
		{name: "two documents", typ: cmType(), doc: configMap("ns", "a", "1") + "---\n" + configMap("ns", "b", "1")},
		{name: "not an object", typ: cmType(), doc: "a: 1\n"},
		{name: "empty", typ: cmType(), doc: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := folder{}
			ix := mustIndex(t, f)
			if edits, err := Upsert(ix, f.read, tt.typ, []byte(tt.doc), Placement{}); err == nil {
				t.Errorf("accepted: %q", editPaths(edits))
			}
		})
	}
}

func TestUpsertRefusesForeignContentAtPlacedPath(t *testing.T) {
	// The index was built before someone wrote junk to the placed path.
	f := folder{}
	ix := mustIndex(t, f)
	f["all.yaml"] = "not: [valid"
	_, err := Upsert(ix, f.read, cmType(), []byte(configMap("ns", "a", "1")), Placement{Default: "all.yaml"})
	var uc *UnsupportedContentError
	if !errors.As(err, &uc) || uc.Path != "all.yaml" {
		t.Errorf("err = %v, want UnsupportedContentError for all.yaml", err)
	}
}
