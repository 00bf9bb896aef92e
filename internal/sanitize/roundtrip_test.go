package sanitize

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

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
// (YAML 1.2) — in labels, annotations, data values and data keys.
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
	js, err := k8syaml.YAMLToJSON(doc)
	if err != nil {
		t.Errorf("%q: sigs.k8s.io/yaml cannot read the document: %v\n%s", s, err, doc)
		return
	}
	var viaK8s map[string]any
	if err := json.Unmarshal(js, &viaK8s); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(viaK8s, obj) {
		t.Errorf("%q: sigs.k8s.io/yaml (YAML 1.1) reads another object:\n%s\nread: %v", s, doc, viaK8s)
	}
	var viaV3 map[string]any
	if err := yaml.Unmarshal(doc, &viaV3); err != nil {
		t.Errorf("%q: yaml.v3 cannot read the document: %v\n%s", s, err, doc)
		return
	}
	if !reflect.DeepEqual(viaV3, obj) {
		t.Errorf("%q: yaml.v3 (YAML 1.2) reads another object:\n%s\nread: %v", s, doc, viaV3)
	}
}
