package sanitize

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// A document without a block sequence is the text of its new file as it is: the branch
// worker writes such a document of a new object without parsing it again
// (layout.PrepareRendered), and the file must be what parsing and rendering it would have
// made. Checked for every tricky string in labels, annotations, data values and data keys.
func TestADocumentIsItsNewFileAsItIs(t *testing.T) {
	for _, v := range trickyValues {
		newFileAsItIs(t, v, true)
	}
}

// The same, for any string.
func FuzzADocumentIsItsNewFileAsItIs(f *testing.F) {
	for _, v := range trickyValues {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, s string) { newFileAsItIs(t, s, false) })
}

// newFileAsItIs checks the document of a ConfigMap holding s, without a list and with one;
// unparsed says the first must be one PrepareRendered takes unparsed.
func newFileAsItIs(t *testing.T, s string, unparsed bool) {
	if !utf8.ValidString(s) {
		return
	}
	obj := map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name": "tricky", "namespace": "demo",
			"labels": map[string]any{"l": s}, "annotations": map[string]any{"a": s},
		},
		"data":  map[string]any{"d": s, "key-" + s: "v", s: "as a key"},
		"empty": map[string]any{},
	}
	doc := sameAsParsed(t, s, obj)
	if unparsed && holdsSequenceEntry(doc) {
		// Taken unparsed only without a sequence entry: a string that puts one in a literal
		// block must not make the check vacuous for the tricky strings.
		t.Errorf("%q: the document holds a line like a sequence entry, so it is parsed:\n%s", s, doc)
	}
	obj["list"] = []any{"a", s} // a block sequence: parsed, as a new file holds it at its key's column
	sameAsParsed(t, s, obj)
}

// sameAsParsed renders obj and checks that the new file written from its document as it is
// (layout.PrepareRendered) is the one written after a parse; it returns the document.
func sameAsParsed(t *testing.T, s string, obj map[string]any) []byte {
	t.Helper()
	doc, err := Document(obj)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	parsed := written(t, nil, doc)
	id := layout.Identity{Kind: "ConfigMap", Namespace: "demo", Name: "tricky"}
	ix, err := layout.BuildIndex([]tree.File{})
	if err != nil {
		t.Fatal(err)
	}
	cm := layout.TypeInfo{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
	edits, err := layout.UpsertPrepared(ix, func(string) ([]byte, bool, error) { return nil, false, nil }, cm,
		layout.PrepareRendered(doc, id), layout.Placement{Default: "{namespace}/configmaps/{name}.yaml"})
	if err != nil || len(edits) != 1 {
		t.Fatalf("%q: %d edits, %v", s, len(edits), err)
	}
	if !bytes.Equal(edits[0].Content, parsed) {
		t.Errorf("%q: the document written as it is:\n%s\nwritten after a parse:\n%s", s, edits[0].Content, parsed)
	}
	return doc
}

// holdsSequenceEntry reports a line that, without its indentation, starts a block sequence
// entry: PrepareRendered parses such a document.
func holdsSequenceEntry(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		line = strings.TrimLeft(line, " ")
		if line == "-" || strings.HasPrefix(line, "- ") {
			return true
		}
	}
	return false
}
