//go:build e2e

package twoway

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/testenv"
)

// Every two-way test ends by counting echo commits in the repository's history: a commit of
// the operator that puts a file back to an earlier content of it while its current content
// is a Git-side push's. That is Flux's apply of an older commit mirrored back (or a Git-side
// change reverted some other way); the suite wants none (docs/two-way.md).

// echoCommits returns the echo commits of main, oldest first, one line each.
func (l *loop) echoCommits() ([]string, error) {
	dir, err := l.git.RepoDir("fleet.git")
	if err != nil {
		return nil, err
	}
	out, err := gitOutput(dir, "log", "--first-parent", "--reverse", "--format=%x01%H%x00%an", "--name-only", "main")
	if err != nil {
		return nil, err
	}
	type state struct {
		contents []string // every content the path had, oldest first ("" for absent)
		foreign  bool     // the current content was written by a Git-side push
	}
	paths := map[string]*state{}
	var echoes []string
	for _, entry := range strings.Split(out, "\x01")[1:] {
		head, names, _ := strings.Cut(entry, "\n")
		sha, author, _ := strings.Cut(head, "\x00")
		for _, p := range strings.Fields(names) {
			content, _ := gitOutput(dir, "show", sha+":"+p) // absent: deleted by this commit
			st := paths[p]
			if st == nil {
				st = &state{contents: []string{""}}
				paths[p] = st
			}
			byOperator := author != "Foreign User"
			if byOperator && st.foreign && contains(st.contents[:len(st.contents)-1], content) {
				echoes = append(echoes, fmt.Sprintf("%s puts %s back to an earlier content over a Git-side push", sha[:12], p))
			}
			st.contents = append(st.contents, content)
			st.foreign = !byOperator
		}
	}
	return echoes, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// gitOutput runs git in dir and returns its standard output.
func gitOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), nil
}

// The count finds an echo: the operator putting a file back to its content from before a
// Git-side push; and only that (an edit to a new value, and a file only the operator
// writes, are none).
func TestTheEchoCountFindsAFilePutBackOverAGitSidePush(t *testing.T) {
	g := testenv.NewGitServer(t)
	if err := g.CreateRepo("fleet.git"); err != nil {
		t.Fatal(err)
	}
	l := &loop{t: t, git: g}
	dir, err := g.RepoDir("fleet.git")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if _, err := gitOutput(work, "clone", "-q", dir, "."); err != nil {
		t.Fatal(err)
	}
	operatorCommit := func(path, content string) {
		t.Helper()
		if _, err := gitOutput(work, "pull", "-q", "--ff-only", "origin", "main"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, path), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"add", path}, {"-c", "user.name=GitOps Reverser", "-c", "user.email=bot@example.com", "commit", "-q", "-m", "mirror"}, {"push", "-q", "origin", "HEAD:main"}} {
			if _, err := gitOutput(work, args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	foreign := func(path, content string) {
		t.Helper()
		if _, err := g.PushForeign("fleet.git", "main", testenv.ForeignChange{Files: map[string]string{path: content}}); err != nil {
			t.Fatal(err)
		}
	}
	foreign("a.yaml", "v: 1\n")
	operatorCommit("a.yaml", "v: 2\n") // an API edit
	operatorCommit("b.yaml", "v: 1\n") // only the operator writes b
	operatorCommit("b.yaml", "v: 2\n")
	operatorCommit("b.yaml", "v: 1\n")
	foreign("a.yaml", "v: 3\n")
	if echoes, err := l.echoCommits(); err != nil || len(echoes) != 0 {
		t.Fatalf("before the echo: %v, %v; want none", echoes, err)
	}
	operatorCommit("a.yaml", "v: 2\n") // back over the Git-side push
	if echoes, err := l.echoCommits(); err != nil || len(echoes) != 1 || !strings.Contains(echoes[0], "a.yaml") {
		t.Fatalf("after the echo: %v, %v; want one, of a.yaml", echoes, err)
	}
}
