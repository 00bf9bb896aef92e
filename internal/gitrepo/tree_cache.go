package gitrepo

import (
	"fmt"
	"sync"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
	"github.com/go-git/go-git/v6/plumbing/storer"
)

// Bounds of the decoded-tree cache. Trees are content-addressed, so a cached tree never goes
// stale; the bounds only keep its memory small: over a bound the cache starts empty again.
const (
	maxCachedTreeEntries = 1 << 18 // entries of all cached trees together (~40 MB at most)
	maxCachedRoots       = 64      // commits whose root tree hash is remembered
)

// treeCache keeps decoded trees by hash and the root tree hash of recent commits. A plan
// reads many files at one commit: decoding that commit (a burst's message lists every
// change) and every tree on each file's path again for each read was most of a burst's
// planning (docs/branch-worker.md#decoded-trees).
type treeCache struct {
	mu      sync.Mutex
	roots   map[plumbing.Hash]plumbing.Hash // commit → its root tree
	trees   map[plumbing.Hash]*cachedTree
	entries int // of the cached trees, together
}

// cachedTree is a decoded tree with its entries by name.
type cachedTree struct {
	tree   *object.Tree
	byName map[string]int // index into tree.Entries
}

// entry returns the entry called name.
func (t *cachedTree) entry(name string) (object.TreeEntry, bool) {
	i, ok := t.byName[name]
	if !ok {
		return object.TreeEntry{}, false
	}
	return t.tree.Entries[i], true
}

// reset empties the cache; the local copy was reopened, and a cached tree reads its
// subtrees through the storage it was decoded from.
func (c *treeCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roots, c.trees, c.entries = nil, nil, 0
}

// root returns the root tree of a commit, read through s.
func (c *treeCache) root(s storer.EncodedObjectStorer, commit plumbing.Hash) (plumbing.Hash, error) {
	c.mu.Lock()
	h, ok := c.roots[commit]
	c.mu.Unlock()
	if ok {
		return h, nil
	}
	obj, err := object.GetCommit(s, commit)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("read commit %s: %w", commit, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.roots == nil || len(c.roots) >= maxCachedRoots {
		c.roots = map[plumbing.Hash]plumbing.Hash{}
	}
	c.roots[commit] = obj.TreeHash
	return obj.TreeHash, nil
}

// tree returns the decoded tree h, read through s.
func (c *treeCache) tree(s storer.EncodedObjectStorer, h plumbing.Hash) (*cachedTree, error) {
	c.mu.Lock()
	t, ok := c.trees[h]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	tree, err := object.GetTree(s, h)
	if err != nil {
		return nil, err
	}
	t = &cachedTree{tree: tree, byName: make(map[string]int, len(tree.Entries))}
	for i, e := range tree.Entries {
		t.byName[e.Name] = i
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.trees == nil || c.entries+len(tree.Entries) > maxCachedTreeEntries {
		c.trees, c.entries = map[plumbing.Hash]*cachedTree{}, 0
	}
	if _, ok := c.trees[h]; !ok {
		c.trees[h] = t
		c.entries += len(tree.Entries)
	}
	return t, nil
}

// cachedTreeOf returns the decoded tree h of the local copy.
func (r *Repo) cachedTreeOf(h plumbing.Hash) (*cachedTree, error) {
	return r.trees.tree(r.repo.Storer, h)
}
