package layout

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// folder is an in-memory target folder: path -> content.
type folder map[string]string

func (f folder) read(p string) ([]byte, bool, error) {
	c, ok := f[p]
	if !ok {
		return nil, false, nil
	}
	return []byte(c), true, nil
}

func (f folder) files() []tree.File {
	var fs []tree.File
	for p, c := range f {
		fs = append(fs, tree.File{Path: p, Content: []byte(c)})
	}
	return fs
}

func (f folder) clone() folder {
	c := folder{}
	for k, v := range f {
		c[k] = v
	}
	return c
}

// apply applies edits to the folder and re-indexes the edited paths, as the
// branch worker does.
func (f folder) apply(t *testing.T, ix *Index, edits []FileEdit) {
	t.Helper()
	for _, e := range edits {
		if e.Content == nil {
			delete(f, e.Path)
		} else {
			f[e.Path] = string(e.Content)
		}
		if err := ix.Update(e.Path, e.Content); err != nil {
			t.Fatalf("Update(%s) after edit: %v\ncontent:\n%s", e.Path, err, e.Content)
		}
	}
}

func mustIndex(t *testing.T, f folder) *Index {
	t.Helper()
	ix, err := BuildIndex(f.files())
	if err != nil {
		t.Fatalf("BuildIndex: %v", err)
	}
	return ix
}

// editPaths lists the edited paths, "-" prefixed for deletions, sorted.
func editPaths(edits []FileEdit) []string {
	var ps []string
	for _, e := range edits {
		if e.Content == nil {
			ps = append(ps, "-"+e.Path)
		} else {
			ps = append(ps, e.Path)
		}
	}
	sort.Strings(ps)
	return ps
}

func editOf(t *testing.T, edits []FileEdit, p string) string {
	t.Helper()
	for _, e := range edits {
		if e.Path == p {
			if e.Content == nil {
				t.Fatalf("%s is deleted, want content", p)
			}
			return string(e.Content)
		}
	}
	t.Fatalf("no edit of %s in %v", p, editPaths(edits))
	return ""
}

// lineChanges returns the lines only in a ("-") and only in b ("+") along a
// longest common subsequence of lines. Line endings are part of the line.
func lineChanges(a, b string) []string {
	la, lb := strings.SplitAfter(a, "\n"), strings.SplitAfter(b, "\n")
	n, m := len(la), len(lb)
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if la[i] == lb[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && la[i] == lb[j]:
			i++
			j++
		case j >= m || (i < n && l[i+1][j] >= l[i][j+1]):
			out = append(out, "-"+la[i])
			i++
		default:
			out = append(out, "+"+lb[j])
			j++
		}
	}
	return out
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func cmType() TypeInfo {
	return TypeInfo{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}
}

func secretType() TypeInfo {
	return TypeInfo{Version: "v1", Resource: "secrets", Kind: "Secret", Namespaced: true}
}

func deployType() TypeInfo {
	return TypeInfo{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
}

func clusterRoleType() TypeInfo {
	return TypeInfo{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles", Kind: "ClusterRole"}
}

// configMap returns a ConfigMap document with one data key.
func configMap(ns, name, value string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\ndata:\n  key: " + value + "\n"
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
