package sanitize

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
)

func TestDocumentMatchesGolden(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			got := mustDocument(t, Clean(readLive(t, name)))
			file := testdata(name + ".golden.yaml")
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("document differs from %s:\n--- got\n%s--- want\n%s", file, got, want)
			}
		})
	}
}

func TestDocumentReadBackGivesTheSameBytes(t *testing.T) {
	for _, name := range fixtures {
		first := mustDocument(t, Clean(readLive(t, name)))
		back, err := Parse(first)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if second := mustDocument(t, back); !bytes.Equal(first, second) {
			t.Errorf("%s: Document(Parse(Document(x))) != Document(x):\n%s---\n%s", name, first, second)
		}
	}
}

func TestDocumentDoesNotDependOnMapOrder(t *testing.T) {
	// Go randomises map iteration; rendering many times must give one result.
	for _, name := range fixtures {
		obj := Clean(readLive(t, name))
		first := mustDocument(t, obj)
		for range 20 {
			if again := mustDocument(t, copyValue(obj).(map[string]any)); !bytes.Equal(first, again) {
				t.Fatalf("%s: two renderings differ", name)
			}
		}
	}
}

func TestStatusOnlyChangeGivesIdenticalBytes(t *testing.T) {
	for _, name := range []string{"deployment", "widget"} {
		live := readLive(t, name)
		before := mustDocument(t, Clean(live))
		changed := copyValue(live).(map[string]any)
		changed["status"] = map[string]any{"observedGeneration": int64(9), "phase": "Degraded"}
		meta := changed["metadata"].(map[string]any)
		meta["resourceVersion"] = "999999"
		meta["generation"] = int64(9)
		meta["managedFields"] = []any{map[string]any{"manager": "controller", "operation": "Update"}}
		if after := mustDocument(t, Clean(changed)); !bytes.Equal(before, after) {
			t.Errorf("%s: a status-only change changed the document:\n%s---\n%s", name, before, after)
		}
	}
}

func TestDocumentStartsWithIdentityAndMetadataInFixedOrder(t *testing.T) {
	doc := string(mustDocument(t, map[string]any{
		"spec": map[string]any{"b": int64(1), "a": int64(2)}, "data": map[string]any{},
		"metadata": map[string]any{
			"annotations": map[string]any{"z": "1"}, "labels": map[string]any{"y": "2"},
			"namespace": "ns", "name": "web",
		},
		"kind": "K", "apiVersion": "v1",
	}))
	want := "apiVersion: v1\nkind: K\nmetadata:\n  name: web\n  namespace: ns\n  labels:\n    \"y\": \"2\"\n" +
		"  annotations:\n    z: \"1\"\ndata: {}\nspec:\n  a: 2\n  b: 1\n"
	if doc != want {
		t.Errorf("got\n%s\nwant\n%s", doc, want)
	}
}

func TestDocumentWritesNumbersAsJSONDoes(t *testing.T) {
	doc := string(mustDocument(t, map[string]any{
		"int": int64(3), "whole": float64(3), "half": 0.5, "go-int": 7, "big": int64(math.MaxInt64),
		"tiny": 1e-9, "huge": 1e22, "negative": -2.5,
	}))
	for _, line := range []string{"int: 3\n", "whole: 3\n", "half: 0.5\n", "go-int: 7\n",
		"big: 9223372036854775807\n", "tiny: 1e-09\n", "huge: 1e+22\n", "negative: -2.5\n"} {
		if !strings.Contains(doc, line) {
			t.Errorf("missing %q in\n%s", line, doc)
		}
	}
}

func TestDocumentQuotesStringsThatReadAsOtherTypes(t *testing.T) {
	words := []any{"true", "123", "null", "~", "", "yes", "off", "N", "1:20", "0x10", "1e3", "- a", "a: b", "#c", " x", "2024-01-01"}
	doc := mustDocument(t, map[string]any{"words": words})
	back, err := Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !equalValues(back["words"], words) {
		t.Errorf("strings did not read back as strings:\n%s", doc)
	}
	for _, w := range []string{"yes", "off", "N", "1:20"} {
		if !strings.Contains(string(doc), `"`+w+`"`) {
			t.Errorf("%q is not quoted for YAML 1.1 readers:\n%s", w, doc)
		}
	}
}

func TestDocumentWritesMultiLineStringsAsLiteralBlocks(t *testing.T) {
	doc := string(mustDocument(t, map[string]any{
		"script": "#!/bin/sh\necho hi\n", "noFinalNewline": "a\nb", "trailingSpaces": "a  \nb\n",
	}))
	for _, want := range []string{"script: |\n  #!/bin/sh\n  echo hi\n", "noFinalNewline: |-\n  a\n  b\n"} {
		if !strings.Contains(doc, want) {
			t.Errorf("missing %q in\n%s", want, doc)
		}
	}
	back, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if back["trailingSpaces"] != "a  \nb\n" {
		t.Errorf("a string a literal block cannot hold did not round-trip:\n%s", doc)
	}
}

func TestDocumentAcceptsTypedMapsAndSlices(t *testing.T) {
	doc := string(mustDocument(t, map[string]any{
		"labels": map[string]string{"a": "b"}, "list": []string{"x"}, "maps": []map[string]any{{"k": int32(1)}},
	}))
	want := "labels:\n  a: b\nlist:\n  - x\nmaps:\n  - k: 1\n"
	if doc != want {
		t.Errorf("got\n%s\nwant\n%s", doc, want)
	}
}

func TestDocumentRefusesWhatJSONCannotHold(t *testing.T) {
	for name, obj := range map[string]map[string]any{
		"nil":       nil,
		"NaN":       {"x": math.NaN()},
		"struct":    {"x": struct{}{}},
		"int keys":  {"x": map[int]string{1: "a"}},
		"func":      {"x": func() {}},
		"channel":   {"x": make(chan int)},
		"inf float": {"x": math.Inf(1)},
	} {
		if _, err := Document(obj); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestParseRefusesWhatIsNotOneObject(t *testing.T) {
	for name, doc := range map[string]string{
		"empty":          "",
		"comment only":   "# nothing\n",
		"two documents":  "a: 1\n---\nb: 2\n",
		"a list":         "- a\n",
		"a scalar":       "hello\n",
		"non-string key": "1: a\n",
		"merge key":      "base: &b {x: 1}\nother:\n  <<: *b\n",
		"duplicate key":  "a: 1\na: 2\n",
		"invalid":        "a: [\n",
		"alias bomb": "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" +
			"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n" +
			"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n" +
			"g: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
	} {
		if _, err := Parse([]byte(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestParseReadsValuesAsTheDynamicClientDoes(t *testing.T) {
	obj, err := Parse([]byte("i: 7\nf: 0.5\nb: true\nn: null\nt: 2024-01-01T00:00:00Z\ns: text\nbig: 99999999999999999999\nanchor: &x {a: 1}\ncopy: *x\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"i": int64(7), "f": 0.5, "b": true, "n": nil, "t": "2024-01-01T00:00:00Z", "s": "text",
		"big": 1e20, "anchor": map[string]any{"a": int64(1)}, "copy": map[string]any{"a": int64(1)},
	}
	for k, w := range want {
		if g := obj[k]; !equalValues(g, w) || (g != nil && w != nil && !sameType(g, w)) {
			t.Errorf("%s = %#v, want %#v", k, g, w)
		}
	}
}
