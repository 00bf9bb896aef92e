package kustomize

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// corpusDir holds the layout corpus: each folder is the root of a Git repository whose file
// TARGET names the target folder. testdata/corpus/README.md says what each layout covers.
const corpusDir = "testdata/corpus"

// corpusName is the form of a layout's folder name: two digits, a dash, a short name.
var corpusName = regexp.MustCompile(`^([0-9]{2})-[a-z0-9-]+$`)

// corpusLayout is one layout of the corpus, read into memory.
type corpusLayout struct {
	// Name is the layout's folder name, e.g. "02-overlay-outside-base".
	Name string
	// Root is the layout's folder on disk (the root of its repository).
	Root string
	// Target is the target folder relative to Root, a slash path (the content of TARGET).
	Target string
	// Namespace is where every object of the layout renders: "k6-" and the layout's number.
	Namespace string
	// Files is every file under Root, keyed by its slash path relative to Root.
	Files MapFiles
}

// FolderPaths returns the paths of the files under the target folder, relative to it,
// sorted.
func (l corpusLayout) FolderPaths() []string {
	var out []string
	for p := range l.Files {
		if rel, ok := strings.CutPrefix(p, l.Target+"/"); ok {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}

// loadCorpus reads every layout of the corpus; a malformed layout fails the test.
func loadCorpus(t testing.TB) []corpusLayout {
	t.Helper()
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatalf("reading the corpus: %v", err)
	}
	var out []corpusLayout
	seen := map[string]string{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		l, err := readCorpusLayout(filepath.Join(corpusDir, e.Name()))
		if err != nil {
			t.Fatalf("corpus layout %s: %v", e.Name(), err)
		}
		if other, dup := seen[l.Namespace]; dup {
			t.Fatalf("corpus layouts %s and %s share the number of namespace %s", other, l.Name, l.Namespace)
		}
		seen[l.Namespace] = l.Name
		out = append(out, l)
	}
	if len(out) == 0 {
		t.Fatalf("the corpus in %s has no layouts", corpusDir)
	}
	return out
}

// readCorpusLayout reads one layout folder.
func readCorpusLayout(dir string) (corpusLayout, error) {
	name := filepath.Base(dir)
	m := corpusName.FindStringSubmatch(name)
	if m == nil {
		return corpusLayout{}, fmt.Errorf("the folder name is not NN-short-name")
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return corpusLayout{}, err
	}
	l := corpusLayout{Name: name, Root: root, Namespace: "k6-" + m[1], Files: MapFiles{}}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		l.Files[filepath.ToSlash(rel)] = content
		return nil
	})
	if err != nil {
		return corpusLayout{}, err
	}
	target, ok := l.Files["TARGET"]
	if !ok {
		return corpusLayout{}, fmt.Errorf("no TARGET file")
	}
	l.Target = strings.TrimSuffix(string(target), "\n")
	switch {
	case l.Target == "" || strings.ContainsAny(l.Target, "\n\r\t ") || path.IsAbs(l.Target):
		return corpusLayout{}, fmt.Errorf("TARGET %q is not one relative path on one line", l.Target)
	case path.Clean(l.Target) != l.Target || strings.HasPrefix(l.Target, "..") || l.Target == ".":
		return corpusLayout{}, fmt.Errorf("TARGET %q is not a clean folder below the root", l.Target)
	}
	if len(l.FolderPaths()) == 0 {
		return corpusLayout{}, fmt.Errorf("the target folder %s holds no files", l.Target)
	}
	return l, nil
}
