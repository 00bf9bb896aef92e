package worker

import (
	"context"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/layout"
	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// A document read ahead for the Reducer is taken by the plan's next render of the object,
// not read again, while its file is unchanged; once an edit is laid on that file, the
// render reads the file as it now is.
func TestADocumentReadAheadIsTakenUntilItsFileChanges(t *testing.T) {
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo(repoName); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"clusters/dev/ns/core/configmaps/a.yaml": string(configMap("ns", "a", "one")),
		"clusters/dev/ns/core/configmaps/b.yaml": string(configMap("ns", "b", "one")),
	}
	if _, err := g.PushForeign(repoName, "main", testenv.ForeignChange{Files: files}); err != nil {
		t.Fatal(err)
	}
	front := g.ServeHTTP(t, testenv.HTTPAuth{})
	repo, err := gitrepo.Open(t.TempDir(), front.URL(repoName), gitrepo.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	tip, err := repo.Fetch(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	f := newFolder(repo, "clusters/dev")
	if err := f.begin(tip); err != nil {
		t.Fatal(err)
	}
	defer f.end(false)
	a := layout.Identity{Kind: "ConfigMap", Namespace: "ns", Name: "a"}

	ahead := f.renderAhead(a)
	if got := f.render(a); len(got) == 0 || &got[0] != &ahead[0] {
		t.Fatalf("the render read the document again (%q) instead of taking the one read ahead", got)
	}

	ahead = f.renderAhead(a)
	if err := f.lay([]layout.FileEdit{{Path: "ns/core/configmaps/b.yaml", Content: configMap("ns", "b", "two")}}, true); err != nil {
		t.Fatal(err)
	}
	if got := f.render(a); &got[0] != &ahead[0] {
		t.Fatal("an edit of another file made the render read the document again")
	}

	f.renderAhead(a)
	edited := configMap("ns", "a", "two")
	if err := f.lay([]layout.FileEdit{{Path: "ns/core/configmaps/a.yaml", Content: edited}}, true); err != nil {
		t.Fatal(err)
	}
	if got := f.render(a); string(got) != string(edited) {
		t.Fatalf("after an edit of its file the render gives %q, want %q", got, edited)
	}
}
