package sanitize

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/tree"
	"gopkg.in/yaml.v3"
	k8syaml "sigs.k8s.io/yaml"
)

// Values a YAML reader may take for something other than the string they are: YAML 1.1
// booleans, nulls, octal and hex and base-60 numbers, floats, infinities, dates, and
// strings with YAML syntax in them.
var trickyValues = []string{
	"yes", "no", "on", "off", "y", "n", "Y", "N", "YES", "Off", "true", "False",
	"~", "null", "Null", "", " ", "0o17", "012", "0x1F", "1e3", "1_000", ".inf", "-.Inf", ".nan",
	"1:20", "-190:20:30.15", "2026-01-01", "2001-12-14t21:59:43.10-05:00", "123", "-0", "+1",
	"- a", "a: b", "#c", "x #y", "[a]", "{a: b}", "*anchor", "&a", "!tag", "|", ">", "'", "\"",
	"a\nb", "a\n", "\ttab", "%x", "@x", "`x", "=", "<<",
	"\n", "\n\n", "a\n\n", "\na", " \na", "a \nb", "a\n ", "\r\n", "a\rb", "\u2028", "\u0085x\ny",
}

// Every document the operator writes reads back as the same object in every Kubernetes
// YAML reader: sigs.k8s.io/yaml (YAML 1.1, as kubectl, Helm and Argo CD read it) and yaml.v3
// (YAML 1.2) — in labels, annotations, data values and data keys; as the document, as the
// new file the folder gets, and as an existing file edited in place.
func TestDocumentsReadBackAsTheSameObjectInEveryReader(t *testing.T) {
	for _, v := range trickyValues {
		readsBackTheSame(t, v)
	}
}

// The same, for any string.
func FuzzDocumentsReadBackAsTheSameObject(f *testing.F) {
	for _, v := range trickyValues {
		f.Add(v)
	}
	f.Fuzz(readsBackTheSame)
}

func readsBackTheSame(t *testing.T, s string) {
	if !utf8.ValidString(s) {
		return // the API server holds JSON: no object carries invalid UTF-8
	}
	obj := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":        "tricky",
			"namespace":   "demo",
			"labels":      map[string]any{"l": s},
			"annotations": map[string]any{"a": s},
		},
		"data": map[string]any{"d": s, "key-" + s: "v", s: "as a key"},
	}
	doc, err := Document(obj)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	readsAs(t, s, "the document", doc, obj)
	readsAs(t, s, "a new file", written(t, nil, doc), obj)
	existing := []byte("# the user's comment\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tricky\n  namespace: demo\n  labels:\n    l: |\n      block\n  annotations:\n    a: plain\ndata:\n  d: |\n    two\n    lines\n")
	readsAs(t, s, "an existing file edited in place", written(t, existing, doc), obj)
}

// written is the file a folder holds after the document is written into it: a new file, or
// the existing one (the same object, other values) edited in place.
func written(t *testing.T, existing, doc []byte) []byte {
	t.Helper()
	const path = "demo/configmaps/tricky.yaml"
	var files []tree.File
	if existing != nil {
		files = append(files, tree.File{Path: path, Content: existing})
	}
	ix, err := layout.BuildIndex(files)
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) ([]byte, bool, error) {
		if p == path && existing != nil {
			return existing, true, nil
		}
		return nil, false, nil
	}
	cm := layout.TypeInfo{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	edits, err := layout.Upsert(ix, read, cm, doc, layout.Placement{Default: "{namespace}/configmaps/{name}.yaml"})
	if err != nil {
		t.Fatalf("write %s: %v", doc, err)
	}
	if len(edits) != 1 {
		t.Fatalf("writing the document made %d file edits, want 1", len(edits))
	}
	return edits[0].Content
}

// readsAs checks that both readers read doc as obj.
func readsAs(t *testing.T, s, what string, doc []byte, obj map[string]any) {
	t.Helper()
	js, err := k8syaml.YAMLToJSON(doc)
	if err != nil {
		t.Errorf("%q, %s: sigs.k8s.io/yaml cannot read it: %v\n%s", s, what, err, doc)
		return
	}
	var viaK8s map[string]any
	if err := json.Unmarshal(js, &viaK8s); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(viaK8s, obj) {
		t.Errorf("%q, %s: sigs.k8s.io/yaml (YAML 1.1) reads another object:\n%s\nread: %v", s, what, doc, viaK8s)
	}
	var viaV3 map[string]any
	if err := yaml.Unmarshal(doc, &viaV3); err != nil {
		t.Errorf("%q, %s: yaml.v3 cannot read it: %v\n%s", s, what, err, doc)
		return
	}
	if !reflect.DeepEqual(viaV3, obj) {
		t.Errorf("%q, %s: yaml.v3 (YAML 1.2) reads another object:\n%s\nread: %v", s, what, doc, viaV3)
	}
}
