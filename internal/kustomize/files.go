package kustomize

import (
	"path"
	"strings"

	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// Files reads a repository at one commit. Paths are slash-separated, clean and relative
// to the repository root.
type Files interface {
	ReadFile(p string) (content []byte, ok bool, err error)
}

// MapFiles holds files in memory, keyed by repository path.
type MapFiles map[string][]byte

// ReadFile implements Files.
func (m MapFiles) ReadFile(p string) ([]byte, bool, error) {
	c, ok := m[p]
	return c, ok, nil
}

// repoJoin joins a path relative to dir, both repository paths. ok is false when the result
// leaves the repository.
func repoJoin(dir, rel string) (string, bool) {
	if path.IsAbs(rel) {
		return "", false
	}
	p := path.Join(dir, rel)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", false
	}
	if p == "." {
		p = ""
	}
	return p, true
}

// inFolder reports whether a repository path lies in the folder prefix ("" = the root).
func inFolder(prefix, p string) bool {
	_, in := tree.Rel(prefix, p)
	return in || p == prefix
}

// relTo returns a repository path in the folder prefix relative to it (the folder itself
// is "").
func relTo(prefix, p string) string {
	if rel, ok := tree.Rel(prefix, p); ok {
		return rel
	}
	return strings.TrimPrefix(p, prefix)
}

// isRemote reports a resources entry kustomize would fetch over the network.
func isRemote(entry string) bool {
	e := strings.ToLower(entry)
	for _, marker := range []string{"://", "git@", "github.com/", "gitlab.com/", "bitbucket.org/", "?ref=", "?version=", "_git/"} {
		if strings.Contains(e, marker) {
			return true
		}
	}
	return false
}
