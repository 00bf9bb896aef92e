package ownership

import "path"

// AnyBranch is the glob that matches every branch name, including names with '/'.
const AnyBranch = "**"

// BranchAllowed reports whether branch matches one of the globs (path.Match semantics, e.g.
// "release-*"; "*" matches any branch name without "/"; also support "**" meaning any branch).
// An invalid glob matches nothing.
//
// Only the glob "**" on its own means any branch; inside a longer glob ("feature/**") "**"
// behaves like "*" under path.Match and does not cross a "/". An empty list and an empty branch
// name allow nothing; callers that want a default policy apply it before calling.
func BranchAllowed(globs []string, branch string) bool {
	if branch == "" {
		return false
	}
	for _, g := range globs {
		if g == AnyBranch {
			return true
		}
		// path.Match checks the whole pattern, so a malformed glob returns an error
		// (and matches nothing) whatever the branch name.
		if ok, err := path.Match(g, branch); err == nil && ok {
			return true
		}
	}
	return false
}
