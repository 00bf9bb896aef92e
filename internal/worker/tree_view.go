package worker

import (
	"github.com/gitops-reverser/gitops-reverser/internal/gitrepo"
	"github.com/gitops-reverser/gitops-reverser/internal/tree"
)

// treeView reads one target folder at a base commit with the edits of the plan being made
// laid over it, so that each decision sees the ones before it.
type treeView struct {
	repo   *gitrepo.Repo
	base   string
	prefix string // the folder in the repository; "" for the root
	edits  map[string][]byte
	order  []string // edited paths, first edit first
	// laid counts the edits laid on each path: what was read from a path holds while its
	// count is unchanged.
	laid map[string]int
	// baseRead keeps files of the base commit read lately: a plan reads a file for the
	// document it compares and again for the edit it makes (see baseReadFiles).
	baseRead     map[string][]byte
	baseReadSize int
}

// baseReadFiles and baseReadBytes bound the base files a view keeps: past either it forgets
// them all; a larger file is not kept. A plan reads a file twice within one chunk of actions
// (docs/branch-worker.md#decoded-trees).
const (
	baseReadFiles = 512
	baseReadBytes = 8 << 20
)

func newTreeView(repo *gitrepo.Repo, base, prefix string) *treeView {
	return &treeView{repo: repo, base: base, prefix: prefix, edits: map[string][]byte{}, laid: map[string]int{}}
}

// read implements layout.ReadFile.
func (v *treeView) read(rel string) ([]byte, bool, error) {
	if content, edited := v.edits[rel]; edited {
		return content, content != nil, nil
	}
	if content, ok := v.baseRead[rel]; ok {
		return content, true, nil
	}
	content, ok, err := v.repo.ReadFile(v.base, tree.Join(v.prefix, rel))
	if err == nil && ok {
		v.keepBaseRead(rel, content)
	}
	return content, ok, err
}

// keepBaseRead keeps a file of the base commit for the next read of it.
func (v *treeView) keepBaseRead(rel string, content []byte) {
	if len(content) > baseReadBytes {
		return
	}
	if v.baseRead == nil || len(v.baseRead) >= baseReadFiles || v.baseReadSize+len(content) > baseReadBytes {
		v.baseRead, v.baseReadSize = map[string][]byte{}, 0
	}
	v.baseRead[rel] = content
	v.baseReadSize += len(content)
}

// set lays one edit over the view (nil content deletes the file).
func (v *treeView) set(rel string, content []byte) {
	if _, seen := v.edits[rel]; !seen {
		v.order = append(v.order, rel)
	}
	v.edits[rel] = content
	v.laid[rel]++
}

// changes returns the edits as repository changes.
func (v *treeView) changes() []gitrepo.Change {
	out := make([]gitrepo.Change, 0, len(v.order))
	for _, rel := range v.order {
		content := v.edits[rel]
		out = append(out, gitrepo.Change{Path: tree.Join(v.prefix, rel), Content: content, Delete: content == nil})
	}
	return out
}
