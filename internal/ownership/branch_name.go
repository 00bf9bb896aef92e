package ownership

import (
	"fmt"
	"strings"
)

// ValidBranch reports why name is not a branch name Git accepts (git check-ref-format
// --branch), or nil. The name is pasted into refspecs: one with ':' or '*' in it would
// name other refs. The API server refuses the same names (GitTarget spec.branch); this is
// the check at use.
func ValidBranch(name string) error {
	bad := func(why string) error { return fmt.Errorf("branch %q is not a valid Git branch name: %s", name, why) }
	switch {
	case name == "" || name == "@" || name == "HEAD":
		return bad("it is empty, '@' or 'HEAD'")
	case strings.HasPrefix(name, "-"):
		return bad("it starts with '-'")
	case strings.HasPrefix(name, "refs/"):
		return bad("give the branch's name without refs/heads/")
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, "."):
		return bad("it starts or ends with '/', or ends with '.'")
	case strings.Contains(name, "..") || strings.Contains(name, "@{") || strings.Contains(name, "//"):
		return bad("it holds '..', '@{' or '//'")
	case strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f || strings.ContainsRune("~^:?*[\\", r) }):
		return bad("it holds a space, a control character or one of ~ ^ : ? * [ \\")
	}
	for _, part := range strings.Split(name, "/") {
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return bad("a part starts with '.' or ends with '.lock'")
		}
	}
	return nil
}
