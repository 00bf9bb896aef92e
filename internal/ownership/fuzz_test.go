package ownership

import (
	"net/url"
	"strings"
	"testing"
)

// Any repository URL is normalized or refused without a panic, and neither the key nor the
// redacted form ever carries the URL's password.
func FuzzRepositoryURLs(f *testing.F) {
	for _, s := range []string{"https://bot:s3cret@git.example.com/team/app.git", "git@github.com:org/r.git",
		"ssh://git@h:2222/r.git", "http://[::1]:8080/r.git", "file:///srv/r.git", "https://h/a%40b"} {
		f.Add(s, "main")
	}
	f.Fuzz(func(t *testing.T, raw, branch string) {
		key, keyErr := KeyFor(raw, branch)
		redacted := Redact(raw)
		u, err := url.Parse(raw)
		if err != nil || u.User == nil {
			return
		}
		pw, ok := u.User.Password()
		if !ok || len(pw) < 4 {
			return // too short to tell from the rest of the URL
		}
		if strings.Contains(redacted, pw) {
			t.Fatalf("Redact(%q) = %q keeps the password", raw, redacted)
		}
		if keyErr == nil && strings.Contains(key.String(), pw) {
			t.Fatalf("the key of %q holds the password: %s", raw, key)
		}
	})
}
