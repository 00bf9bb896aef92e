package gitrepo

import (
	"fmt"

	"github.com/go-git/go-git/v6/plumbing"
	"github.com/go-git/go-git/v6/plumbing/object"
)

// FirstParents returns the commits from tip back along first parents until (and with)
// until, newest first, at most max of them. It stops early at a root commit or at max: the
// result then does not end with until.
func (r *Repo) FirstParents(tip, until string, max int) ([]string, error) {
	var out []string
	for h := tip; h != "" && len(out) < max; {
		out = append(out, h)
		if h == until {
			break
		}
		c, err := object.GetCommit(r.repo.Storer, plumbing.NewHash(h))
		if err != nil {
			return out, fmt.Errorf("read commit %s: %w", h, err)
		}
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0].String()
	}
	return out, nil
}
