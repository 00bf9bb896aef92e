package kustomize

import (
	"path"
	"strings"
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
	return prefix == "" || p == prefix || strings.HasPrefix(p, prefix+"/")
}

// relTo returns a repository path relative to the folder prefix.
func relTo(prefix, p string) string {
	if prefix == "" {
		return p
	}
	return strings.TrimPrefix(strings.TrimPrefix(p, prefix), "/")
}

// fullPath returns the repository path of a path relative to the folder prefix.
func fullPath(prefix, rel string) string {
	if prefix == "" {
		return rel
	}
	return prefix + "/" + rel
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
