package ownership

import "testing"

func TestBranchAllowed(t *testing.T) {
	tests := []struct {
		name   string
		globs  []string
		branch string
		want   bool
	}{
		{"exact", []string{"main"}, "main", true},
		{"exact mismatch", []string{"main"}, "master", false},
		{"case sensitive", []string{"main"}, "Main", false},
		{"prefix glob", []string{"release-*"}, "release-1.2", true},
		{"prefix glob mismatch", []string{"release-*"}, "hotfix-1", false},
		{"star", []string{"*"}, "main", true},
		{"star does not cross slash", []string{"*"}, "feature/x", false},
		{"folder glob", []string{"feature/*"}, "feature/x", true},
		{"folder glob one level", []string{"feature/*"}, "feature/x/y", false},
		{"double star any branch", []string{"**"}, "feature/x/y", true},
		{"double star inside a glob is a star", []string{"feature/**"}, "feature/x/y", false},
		{"question mark", []string{"v?"}, "v1", true},
		{"character class", []string{"env-[ab]"}, "env-b", true},
		{"character class mismatch", []string{"env-[ab]"}, "env-c", false},
		{"second glob matches", []string{"main", "release-*"}, "release-2", true},
		{"no glob matches", []string{"main", "release-*"}, "dev", false},
		{"invalid glob matches nothing", []string{"["}, "[", false},
		{"invalid glob after a mismatch", []string{"dev["}, "main", false},
		{"invalid glob does not stop the list", []string{"[", "main"}, "main", true},
		{"escaped star", []string{`a\*`}, "a*", true},
		{"escaped star literal only", []string{`a\*`}, "ab", false},
		{"empty list", nil, "main", false},
		{"empty branch", []string{"*"}, "", false},
		{"empty branch with double star", []string{"**"}, "", false},
		{"empty glob", []string{""}, "main", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := BranchAllowed(tt.globs, tt.branch); got != tt.want {
				t.Errorf("BranchAllowed(%q, %q) = %v, want %v", tt.globs, tt.branch, got, tt.want)
			}
		})
	}
}
