package kustomize

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/layout"
)

// editedImage gives the first image of a rendered document a new tag.
func editedImage(doc []byte) []byte {
	lines := strings.Split(string(doc), "\n")
	for i, l := range lines {
		if at := strings.Index(l, "image: "); at >= 0 {
			name, _, _ := splitImage(strings.TrimSpace(l[at+len("image: "):]))
			lines[i] = l[:at] + "image: " + name + ":edited"
			break
		}
	}
	return []byte(strings.Join(lines, "\n"))
}

// corpusLayoutNamed returns one layout of the corpus.
func corpusLayoutNamed(b *testing.B, name string) corpusLayout {
	b.Helper()
	for _, l := range loadCorpus(b) {
		if l.Name == name {
			return l
		}
	}
	b.Fatalf("no corpus layout %s", name)
	return corpusLayout{}
}

// BenchmarkLoad is the cost a plan of a kustomize folder pays once: read the
// kustomizations and render the folder plain and dyed. The layout is an overlay chain with
// a base outside the folder, patches, images, replicas and labels.
func BenchmarkLoad(b *testing.B) {
	l := corpusLayoutNamed(b, "16-overlay-chain")
	paths := l.FolderPaths()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(l.Files, l.Target, paths); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSourceFormInSync is the cost of an event that changes nothing: one comparison.
func BenchmarkSourceFormInSync(b *testing.B) {
	l := corpusLayoutNamed(b, "16-overlay-chain")
	f, err := Load(l.Files, l.Target, l.FolderPaths())
	if err != nil {
		b.Fatal(err)
	}
	obj := f.Objects()[0]
	b.ReportAllocs()
	for b.Loop() {
		if w, err := f.SourceForm(obj.ID, obj.Doc); err != nil || !w.Empty() {
			b.Fatalf("an in-sync object: %+v, %v", w, err)
		}
	}
}

// BenchmarkEditAndVerify is the cost of one edit in a batch: the source form, the edits
// laid over the folder, and the verification render.
func BenchmarkEditAndVerify(b *testing.B) {
	l := corpusLayoutNamed(b, "16-overlay-chain")
	paths := l.FolderPaths()
	b.ReportAllocs()
	for b.Loop() {
		f, err := Load(l.Files, l.Target, paths)
		if err != nil {
			b.Fatal(err)
		}
		var obj Object
		for _, o := range f.Objects() {
			if o.ID.Kind == "Deployment" {
				obj = o
				break
			}
		}
		live := editedImage(obj.Doc)
		w, err := f.SourceForm(obj.ID, live)
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Apply(w.Edits); err != nil {
			b.Fatal(err)
		}
		if err := f.Verify(map[layout.Identity][]byte{obj.ID: live}); err != nil {
			b.Fatal(err)
		}
	}
}
