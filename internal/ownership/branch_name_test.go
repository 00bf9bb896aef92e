package ownership

import "testing"

// The branch names git check-ref-format refuses are refused at use too, so that none is
// pasted into a refspec; ordinary names pass.
func TestOnlyValidBranchNamesReachARefspec(t *testing.T) {
	for _, name := range []string{"", "@", "main:refs/heads/x", "a..b", "x y", "feature/", "/main", "main.", "a//b", ".hidden", "a/.b", "x.lock", "a@{1}", "wild*", "back\\slash", "tab\tname", "del\x7f", "HEAD", "-x", "refs/heads/main"} {
		if ValidBranch(name) == nil {
			t.Errorf("%q accepted", name)
		}
	}
	for _, name := range []string{"main", "release/1.2", "feature/x-y_z", "v1.0.0", "a.b"} {
		if err := ValidBranch(name); err != nil {
			t.Errorf("%q refused: %v", name, err)
		}
	}
}
