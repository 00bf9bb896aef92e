package layout

import (
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// hostileInputs are texts meant to break a parser or a splitter.
func hostileInputs() []string {
	return []string{
		"",
		"---",
		"---\n---\n---",
		"...",
		"\r\n\r\n",
		"\ufeff",
		"\x00\x01\x02",
		"\xff\xfe invalid utf-8 \xc3",
		"a: [",
		"a: {",
		"a: \"unterminated",
		"a: |\n  x\n b",
		"&a [*a]",
		"a: &x 1\nb: *y\n",
		"!!binary zzz",
		"%YAML 9.9\n---\na: 1\n",
		"%TAG ! tag:x,2000:\n---\n!foo a: 1\n",
		"? [a]\n: b\n",
		"apiVersion: [v1]\nkind: {a: b}\nmetadata: x\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [a]\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ~\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ~\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: &m\n  name: a\n  namespace: ns\ndata: *m\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n<<: {x: 1}\n",
		"--- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns}}\n",
		"apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: a\r\n  namespace: ns\r\n...\r\n",
		strings.Repeat("[", 5000),
		strings.Repeat("- ", 3000) + "x",
		strings.Repeat("a: &a [*a, *a]\n", 3),
		"a: &a [x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n",
	}
}

func TestHostileInputsDoNotPanic(t *testing.T) {
	valid := configMap("ns", "a", "1")
	for _, in := range hostileInputs() {
		for _, content := range []string{in, valid + "---\n" + in, in + "\n---\n" + valid} {
			for _, p := range []string{"x.yaml", "kustomization.yaml"} {
				f := folder{p: content}
				if ix, err := BuildIndex(f.files()); err == nil {
					_, _ = Upsert(ix, f.read, cmType(), []byte(configMap("ns", "a", "2")), Placement{})
					_, _ = Upsert(ix, f.read, cmType(), []byte(configMap("ns", "new", "2")), Placement{Default: "x.yaml"})
					_, _ = Delete(ix, f.read, Identity{Kind: "ConfigMap", Namespace: "ns", Name: "a"})
				}
			}
			_, _ = IdentityOf([]byte(content))
			f := folder{"x.yaml": valid}
			ix := mustIndex(t, f)
			_, _ = Upsert(ix, f.read, cmType(), []byte(content), Placement{})
			_ = ix.Update("x.yaml", []byte(content))
		}
	}
}

// FuzzBuildIndex checks that any content is either refused or indexed, and
// that splitting a file into documents loses no byte.
func FuzzBuildIndex(f *testing.F) {
	for _, in := range hostileInputs() {
		f.Add(in)
	}
	f.Add(threeDocs)
	f.Fuzz(func(t *testing.T, content string) {
		if got := string(splitDocuments(content).join()); got != content {
			t.Fatalf("split and join changed the content: %q -> %q", content, got)
		}
		_, _ = BuildIndex([]tree.File{{Path: "a.yaml", Content: []byte(content)}})
		_, _ = BuildIndex([]tree.File{{Path: "kustomization.yaml", Content: []byte(content)}})
	})
}

// FuzzUpsert checks that whatever Upsert returns indexes back to the document
// it was given, and leaves the other documents of the file as they were.
func FuzzUpsert(f *testing.F) {
	f.Add(threeDocs, "replicas: 2", "replicas: 9")
	f.Add(configMap("ns", "a", "1")+"---\n"+configMap("shop", "settings", "x"), "key: x", "key: y\n  other: z")
	f.Add("\ufeff# c\r\n---\r\n"+strings.ReplaceAll(threeDocs, "\n", "\r\n"), "nginx:1.25", "nginx:2")
	f.Fuzz(func(t *testing.T, content, old, repl string) {
		fd := folder{"f.yaml": content}
		ix, err := BuildIndex(fd.files())
		if err != nil {
			return
		}
		id := Identity{Kind: "ConfigMap", Namespace: "shop", Name: "settings"}
		loc, ok := ix.Lookup(id)
		if !ok {
			return
		}
		pf, err := parseObjects([]byte(content))
		if err != nil {
			t.Fatalf("indexed file does not parse: %v", err)
		}
		doc := pf.text.segs[pf.docs[loc.Doc].seg].body
		newDoc := strings.Replace(doc, old, repl, 1)
		want, err := parseSingle([]byte(newDoc))
		if err != nil || want.id != id {
			return
		}
		edits, err := Upsert(ix, fd.read, cmType(), []byte(newDoc), Placement{})
		if err != nil {
			return
		}
		fd.apply(t, ix, edits)
		got, err := parseObjects([]byte(fd["f.yaml"]))
		if err != nil {
			t.Fatalf("edited file does not parse: %v", err)
		}
		loc2, ok := ix.Lookup(id)
		if !ok || loc2 != loc || !sameNodeMeaning(got.docs[loc.Doc].node, want.node) {
			t.Fatalf("edited document does not hold the new content:\n%s", fd["f.yaml"])
		}
		for i, d := range pf.docs {
			if i != loc.Doc && pf.text.segs[d.seg] != got.text.segs[got.docs[i].seg] {
				t.Fatalf("document %d changed:\n%q\n->\n%q", i, pf.text.segs[d.seg], got.text.segs[got.docs[i].seg])
			}
		}
	})
}

// Whatever placement template a GitTarget gives, a new object lands at a clean path inside
// the folder, never under anything a checkout reads as .git, or is refused.
func FuzzPlacementTemplate(f *testing.F) {
	for _, tpl := range []string{"{namespace}/{kind}/{name}.yaml", "../{name}.yaml", ".GIT/{name}.yaml", "{name}.yaml", "a/{group}/{version}/{resource}/{name}.yaml"} {
		f.Add(tpl, "web")
	}
	f.Fuzz(func(t *testing.T, tpl, name string) {
		doc := configMap("ns", name, "1")
		edits, err := Upsert(mustIndex(t, folder{}), folder{}.read, cmType(), []byte(doc), Placement{Default: tpl})
		if err != nil {
			return
		}
		for _, e := range edits {
			if !validRelPath(e.Path) {
				t.Fatalf("template %q placed %q at %q", tpl, name, e.Path)
			}
		}
	})
}
