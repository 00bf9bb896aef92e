package ownership

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// BranchKey identifies one repository branch: exactly one branch worker writes it. It is
// comparable and serves as a map key.
type BranchKey struct {
	// URL is the repository URL in the form NormalizeURL returns; it holds no credential.
	URL string
	// Branch is the short branch name, without "refs/heads/".
	Branch string
}

// String returns the key as URL#branch, for logs and metrics labels.
func (k BranchKey) String() string { return k.URL + "#" + k.Branch }

// ErrInvalidBranch is wrapped by KeyFor when the branch name is empty.
var ErrInvalidBranch = errors.New("invalid branch name")

// KeyFor returns the key of branch in the repository rawURL. The URL is normalized with
// NormalizeURL (its error wraps ErrInvalidURL), and a leading "refs/heads/" is dropped from the
// branch, so "main" and "refs/heads/main" share one key.
func KeyFor(rawURL, branch string) (BranchKey, error) {
	u, err := NormalizeURL(rawURL)
	if err != nil {
		return BranchKey{}, err
	}
	b := strings.TrimPrefix(branch, "refs/heads/")
	if b == "" {
		return BranchKey{}, fmt.Errorf("%w: the branch is empty", ErrInvalidBranch)
	}
	return BranchKey{URL: u, Branch: b}, nil
}

// Claim is one GitTarget that wants to write a branch.
type Claim struct {
	// Target is the GitTarget.
	Target types.NamespacedName
	// Created is the GitTarget's creationTimestamp; the oldest claim on a branch decides its owner.
	Created time.Time
	// Provider is the GitProvider the target writes through (its resolved spec.gitProviderRef).
	Provider types.NamespacedName
	// URL is the provider's spec.url as written (it may carry credentials; they are never echoed).
	URL string
	// Branch is the GitTarget's spec.branch.
	Branch string
	// Path is the GitTarget's spec.path ("." is the repository root).
	Path string
	// Admitted reports whether the provider admits the target's namespace (spec.accessFrom).
	// A claim that is not admitted is not considered at all: it owns nothing and gets no verdict.
	Admitted bool
}

// Verdict is the decision for one admitted Claim.
type Verdict struct {
	// Target is the GitTarget the verdict is for.
	Target types.NamespacedName
	// Key is the branch the target writes; it is the zero key when the claim's URL or branch
	// is invalid.
	Key BranchKey
	// Owner is the GitProvider that owns the branch: its branch worker writes and its
	// credential pushes. It is set on conflicting verdicts too, and zero when Key is zero.
	Owner types.NamespacedName
	// Conflict is true when this target must not write; the caller reports the reason
	// TargetConflict with Message.
	Conflict bool
	// Message explains a conflict and how to resolve it; it is empty when Conflict is false.
	Message string
}

// DecideOwnership decides, for every admitted claim, which GitProvider owns the branch it
// writes and whether the claim conflicts (docs/branch-ownership.md#who-owns-a-branch). It
// is the single rule used by every caller, and its result does not depend on the order of
// claims.
//
// Claims are grouped by KeyFor(URL, Branch), so different spellings of one repository share a
// branch. Within a branch the oldest claim (Created ascending, ties broken by target namespace
// then name) names the owner: its Provider. A claim that writes the branch through another
// provider conflicts and is told which provider to share. Among the claims through the owner,
// oldest first, a claim whose path equals, contains or lies inside the path of an earlier claim
// that did not conflict also conflicts; sibling paths ("a" and "ab", "a/x" and "a/y") do not. A
// claim whose URL, branch or path is invalid gets a conflicting verdict saying so and takes no
// part in its branch. Verdicts are sorted by target namespace, then name.
//
// The only error is an inconsistent input: a claim without a target name, or one target
// claiming twice.
func DecideOwnership(claims []Claim) ([]Verdict, error) {
	seen := make(map[types.NamespacedName]bool, len(claims))
	for _, c := range claims {
		if c.Target.Name == "" {
			return nil, errors.New("ownership: a claim has no GitTarget name")
		}
		if seen[c.Target] {
			return nil, fmt.Errorf("ownership: GitTarget %s claims more than once", c.Target)
		}
		seen[c.Target] = true
	}

	type entry struct {
		claim Claim
		path  string // cleaned
	}
	var verdicts []Verdict
	branches := make(map[BranchKey][]entry)
	for _, c := range claims {
		if !c.Admitted {
			continue
		}
		key, err := KeyFor(c.URL, c.Branch)
		if err != nil {
			verdicts = append(verdicts, Verdict{
				Target:   c.Target,
				Conflict: true,
				Message:  fmt.Sprintf("GitTarget %s cannot be placed on a branch: GitProvider %s, branch %q: %v", c.Target, c.Provider, c.Branch, err),
			})
			continue
		}
		p, ok := cleanTargetPath(c.Path)
		if !ok {
			verdicts = append(verdicts, Verdict{
				Target:   c.Target,
				Key:      key,
				Conflict: true,
				Message:  fmt.Sprintf("spec.path %q of GitTarget %s is not a relative path inside the repository (no leading \"/\", no \"..\"; \".\" is the root)", c.Path, c.Target),
			})
			continue
		}
		branches[key] = append(branches[key], entry{claim: c, path: p})
	}

	for key, group := range branches {
		slices.SortFunc(group, func(a, b entry) int { return compareAge(a.claim, b.claim) })
		first := group[0].claim
		var writers []entry // claims through the owner that did not conflict, oldest first
		for _, e := range group {
			v := Verdict{Target: e.claim.Target, Key: key, Owner: first.Provider}
			if e.claim.Provider != first.Provider {
				v.Conflict = true
				v.Message = providerConflict(key, first, e.claim)
			} else if i := slices.IndexFunc(writers, func(w entry) bool { return pathsOverlap(w.path, e.path) }); i >= 0 {
				v.Conflict = true
				v.Message = pathConflict(key, writers[i].claim.Target, writers[i].path, e.path)
			} else {
				writers = append(writers, e)
			}
			verdicts = append(verdicts, v)
		}
	}

	slices.SortFunc(verdicts, func(a, b Verdict) int { return compareNames(a.Target, b.Target) })
	return verdicts, nil
}

// compareAge orders claims oldest first; equal timestamps fall back to the target's name so
// the order is total and independent of the input order.
func compareAge(a, b Claim) int {
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return compareNames(a.Target, b.Target)
}

// compareNames orders namespaced names by namespace, then name.
func compareNames(a, b types.NamespacedName) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// cleanTargetPath cleans a GitTarget spec.path; "" counts as the root. It reports false for a
// path that leaves the repository or is absolute.
func cleanTargetPath(p string) (string, bool) {
	if p == "" {
		return ".", true
	}
	c := path.Clean(p)
	if strings.HasPrefix(c, "/") || c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}

// pathsOverlap reports whether two cleaned paths are equal or one lies inside the other.
// "." contains every path; "a" contains "a/b" but not "ab".
func pathsOverlap(a, b string) bool {
	return a == "." || b == "." || a == b ||
		strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/")
}

// describeBranch names a branch for messages, with the credential-free URL.
func describeBranch(key BranchKey) string {
	return fmt.Sprintf("branch %q of %s", key.Branch, key.URL)
}

// describePath quotes a cleaned target path for messages.
func describePath(p string) string {
	if p == "." {
		return `"." (the repository root)`
	}
	return fmt.Sprintf("%q", p)
}

// providerConflict explains that claim writes the branch through a provider other than the
// owner, and how to share the owner instead.
func providerConflict(key BranchKey, first, claim Claim) string {
	msg := fmt.Sprintf("%s is written through GitProvider %s (owner of the branch since GitTarget %s was created); point spec.gitProviderRef at %s to share it",
		describeBranch(key), first.Provider, first.Target, first.Provider)
	if claim.Target.Namespace != first.Provider.Namespace {
		msg += fmt.Sprintf(" (its spec.accessFrom must admit namespace %q)", claim.Target.Namespace)
	}
	return msg
}

// pathConflict explains that a target's path overlaps the path of an older target on the
// same branch.
func pathConflict(key BranchKey, older types.NamespacedName, olderPath, p string) string {
	msg := fmt.Sprintf("spec.path %s overlaps path %s of GitTarget %s, which was created earlier and writes %s; ",
		describePath(p), describePath(olderPath), older, describeBranch(key))
	if olderPath == "." {
		return msg + "that target writes the whole branch, so use another branch"
	}
	return msg + fmt.Sprintf("choose a path that neither equals, contains nor lies inside %q, or another branch", olderPath)
}
