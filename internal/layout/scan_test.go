package layout

import (
	"slices"
	"testing"
)

// A folder's files are indexed from their identity lines: what the scan reads must be
// what the parser reads, for every form it accepts.
func TestTheScanReadsThePlainBlockStyle(t *testing.T) {
	tests := []struct {
		name, content string
		want          []Identity
	}{
		{"as the writer renders", configMap("ns", "a", "1"),
			[]Identity{{Kind: "ConfigMap", Namespace: "ns", Name: "a"}}},
		{"several documents, comments, a group", "# head\napiVersion: apps/v1 # the group\nkind: Deployment\nmetadata:\n  labels:\n    name: not-this\n  name: web # here\n  namespace: 'prod'\nspec:\n  replicas: 1\n---\n\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: \"system:reader\"\nrules: []\n",
			[]Identity{{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"}, {Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:reader"}}},
		{"metadata after the data, deeper indentation", "data:\n  script: |\n    echo \"it's\n  name: inside-the-script\nkind: ConfigMap\nmetadata:\n    name: b\n    annotations:\n        note: >-\n          x: \"y\napiVersion: v1\n",
			[]Identity{{Kind: "ConfigMap", Name: "b"}}},
		{"a block scalar in a list", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - args:\n    - |\n      unclosed \"quote\n    name: c\n",
			[]Identity{{Kind: "Pod", Name: "p"}}},
		{"quotes and brackets inside plain values", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  note: it's \"fine\" [really]\n  \"k: | #\": v\n",
			[]Identity{{Kind: "ConfigMap", Name: "a"}}},
		{"an empty namespace in quotes", "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n  namespace: \"\"\n",
			[]Identity{{Kind: "Namespace", Name: "ns"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := scanIdentities([]byte(tt.content))
			if !ok || !slices.Equal(got, tt.want) {
				t.Fatalf("scan = %v, %v; want %v", got, ok, tt.want)
			}
			assertScanAgreesWithParse(t, []byte(tt.content))
		})
	}
}

// What the scan cannot read with certainty goes to the parser.
func TestTheScanLeavesOtherFormsToTheParser(t *testing.T) {
	for name, content := range map[string]string{
		"flow mapping":            "{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n",
		"flow metadata":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"quote open across lines": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: \"one\nkind: Secret\"\n",
		"alias name":              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: *n\n",
		"tagged kind":             "apiVersion: v1\nkind: !!str ConfigMap\nmetadata:\n  name: a\n",
		"merge key":               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  <<: *base\n  name: a\n",
		"quoted key":              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  \"name\": a\n",
		"name continued":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n    b\n",
		"kind continued":          "apiVersion: v1\nkind: Config\n  Map\nmetadata:\n  name: a\n",
		"kind twice":              configMap("ns", "a", "1") + "kind: Secret\n",
		"name twice":              "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n",
		"null namespace":          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace:\n",
		"null name":               "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ~\n",
		"no name":                 "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: a-\n",
		"not an object":           "replicas: 3\n",
		"a list":                  "- a\n- b\n",
		"tab":                     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: a\n",
		"carriage return":         "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n",
		"end marker":              configMap("ns", "a", "1") + "...\n" + configMap("ns", "b", "1"),
		"escape in quotes":        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"a\\x41\"\n",
		"indented document":       "  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n",
		"metadata less indented":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n    labels: {}\n  name: a\n",
		"a quote opened after a plain key with an apostrophe":  "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: real\n  annotations:\n    it's: 'open\n  namespace: evil\n  labels:\n    close' #'\n",
		"a quote opened beside a block scalar of a list entry": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: real\n  annotations:\n    - a: |\n        x\n      b: \"open\n  namespace: evil\n  labels:\n      close\" #\"\n",
		"a quote opened after an anchor":                       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: real\n  labels:\n    a: &x \"open\n  namespace: evil\n  annotations:\n    b: close\"\n",
		"a quote opened after a tag":                           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: real\n  labels:\n    a: !!str 'open\n  namespace: evil\n  annotations:\n    b: close'\n",
		"a line separator":                                     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    x: y\u2028  namespace: evil\n",
		"a quote opened at once after a key in a flow mapping": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: real\n  labels: {\"a\":\"open}\n  namespace: evil\n  x: close\"\n",
	} {
		t.Run(name, func(t *testing.T) {
			if ids, ok := scanIdentities([]byte(content)); ok {
				t.Fatalf("the scan read %v; the parser should read this", ids)
			}
		})
	}
}

// assertScanAgreesWithParse fails when the scan reads a file the parser reads otherwise.
func assertScanAgreesWithParse(t *testing.T, content []byte) {
	t.Helper()
	scanned, ok := scanIdentities(content)
	if !ok {
		return
	}
	pf, err := parseObjects(content)
	if err != nil {
		return // not checked past the identity lines: the parse refuses it when it is read
	}
	var parsed []Identity
	for _, d := range pf.docs {
		parsed = append(parsed, d.id)
	}
	if !slices.Equal(scanned, parsed) {
		t.Fatalf("scan read %v, parse %v, in:\n%s", scanned, parsed, content)
	}
}

func FuzzTheScanAgreesWithTheParser(f *testing.F) {
	for _, s := range []string{
		configMap("ns", "a", "1"),
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: 'prod'\nspec:\n  x: |\n    y\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: \"one\ntwo\"\n",
		"kind: ConfigMap\nmetadata:\n  annotations:\n    a: >-\n      b\n  name: \"x:y\"\napiVersion: v1\n---\napiVersion: v1\nkind: A\nmetadata:\n  name: b\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    - |\n      z\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: real\n  annotations:\n    it's: 'open\n  namespace: evil\n  labels:\n    close' #'\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: real\n  annotations:\n    - a: |\n        x\n      b: \"open\n  namespace: evil\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  note: it's \"fine\" [really]\n  \"k: | #\": v\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: real\n  labels:\n    a: &x \"open\n  namespace: evil\n  annotations:\n    b: close\"\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    x: y\u2028  namespace: evil\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		if len(content) > 4096 {
			return
		}
		assertScanAgreesWithParse(t, content)
	})
}
