package ownership

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalizeURL(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"canonical https", "https://git.example.com/team/app", "https://git.example.com/team/app"},
		{"scheme and host case", "HTTPS://Git.Example.COM/team/app", "https://git.example.com/team/app"},
		{"path case kept", "https://git.example.com/Team/App", "https://git.example.com/Team/App"},
		{"https default port", "https://git.example.com:443/team/app", "https://git.example.com/team/app"},
		{"https other port kept", "https://git.example.com:8443/team/app", "https://git.example.com:8443/team/app"},
		{"http default port", "http://git.example.com:80/team/app", "http://git.example.com/team/app"},
		{"port 80 is not default for https", "https://git.example.com:80/team/app", "https://git.example.com:80/team/app"},
		{"leading zeros in port", "https://git.example.com:0443/team/app", "https://git.example.com/team/app"},
		{"empty port", "https://git.example.com:/team/app", "https://git.example.com/team/app"},
		{"ssh default port", "ssh://git@git.example.com:22/team/app.git", "ssh://git.example.com/team/app"},
		{"ssh other port", "ssh://git@git.example.com:2222/team/app.git", "ssh://git.example.com:2222/team/app"},
		{".git dropped", "https://git.example.com/team/app.git", "https://git.example.com/team/app"},
		{"trailing slash dropped", "https://git.example.com/team/app/", "https://git.example.com/team/app"},
		{".git then slash", "https://git.example.com/team/app.git/", "https://git.example.com/team/app"},
		{"slash then .git", "https://git.example.com/team/app/.git", "https://git.example.com/team/app"},
		{"every .git dropped", "https://git.example.com/team/app.git.git/", "https://git.example.com/team/app"},
		{".git inside a name kept", "https://git.example.com/team/app.github", "https://git.example.com/team/app.github"},
		{"duplicate slashes", "https://git.example.com//team///app", "https://git.example.com/team/app"},
		{"dot segments", "https://git.example.com/team/./x/../app", "https://git.example.com/team/app"},
		{"surrounding space", "  https://git.example.com/team/app\n", "https://git.example.com/team/app"},
		{"https user dropped", "https://deploy@git.example.com/team/app", "https://git.example.com/team/app"},
		{"https password dropped", "https://deploy:s3cret@git.example.com/team/app", "https://git.example.com/team/app"},
		{"encoded password dropped", "https://deploy:p%2Fw%40x@git.example.com/team/app", "https://git.example.com/team/app"},
		{"ssh user dropped", "ssh://deploy@git.example.com/team/app", "ssh://git.example.com/team/app"},
		{"scp-like", "git@git.example.com:team/app.git", "ssh://git.example.com/team/app"},
		{"scp-like without user", "git.example.com:team/app", "ssh://git.example.com/team/app"},
		{"scp-like host case", "git@Git.Example.com:team/app", "ssh://git.example.com/team/app"},
		{"scp-like absolute path", "git@git.example.com:/team/app.git", "ssh://git.example.com/team/app"},
		{"scp-like home path", "git@git.example.com:~/app.git", "ssh://git.example.com/~/app"},
		{"scp-like ipv6", "git@[::1]:team/app.git", "ssh://[::1]/team/app"},
		{"ssh ipv6 default port", "ssh://git@[::1]:22/team/app", "ssh://[::1]/team/app"},
		{"https ipv6 port", "https://[::1]:8443/team/app", "https://[::1]:8443/team/app"},
		{"encoded path", "https://git.example.com/team/my%20app", "https://git.example.com/team/my%20app"},
		{"encoded at sign", "https://git.example.com/team/a%40b", "https://git.example.com/team/a%40b"},
		{"file", "file:///srv/git/app.git", "file:///srv/git/app"},
		{"file localhost", "file://localhost/srv/git/app.git/", "file:///srv/git/app"},
		{"file scheme case", "FILE:///srv/git/App", "file:///srv/git/App"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeURL(tt.in)
			if err != nil {
				t.Fatalf("NormalizeURL(%q) error: %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("NormalizeURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
			again, err := NormalizeURL(got)
			if err != nil || again != got {
				t.Errorf("NormalizeURL is not idempotent: %q -> %q (%v)", got, again, err)
			}
		})
	}
}

func TestNormalizeURLSameRepository(t *testing.T) {
	groups := [][]string{
		{
			"https://git.example.com/team/app",
			"HTTPS://GIT.EXAMPLE.COM:443/team/app.git/",
			"https://user:token@git.example.com//team/app/",
		},
		{
			"ssh://git@git.example.com/team/app.git",
			"ssh://deploy@git.example.com:22/team/app",
			"git@git.example.com:team/app.git",
			"git.example.com:/team/app",
		},
	}
	keys := make([]string, len(groups))
	for i, g := range groups {
		for _, in := range g {
			got, err := NormalizeURL(in)
			if err != nil {
				t.Fatalf("NormalizeURL(%q) error: %v", in, err)
			}
			if keys[i] == "" {
				keys[i] = got
			}
			if got != keys[i] {
				t.Errorf("NormalizeURL(%q) = %q, want the same key as %q (%q)", in, got, g[0], keys[i])
			}
		}
	}
	if keys[0] == keys[1] {
		t.Errorf("https and ssh spellings share key %q, want different keys", keys[0])
	}
}

func TestNormalizeURLDifferentRepositories(t *testing.T) {
	pairs := [][2]string{
		{"https://git.example.com/team/app", "http://git.example.com/team/app"},
		{"https://git.example.com/team/app", "https://git.example.com/team/App"},
		{"https://git.example.com/team/app", "https://git.example.com:8443/team/app"},
		{"https://git.example.com/team/app", "https://git.example.com/team/app2"},
		{"https://git.example.com/team/app", "ssh://git.example.com/team/app"},
	}
	for _, p := range pairs {
		a, errA := NormalizeURL(p[0])
		b, errB := NormalizeURL(p[1])
		if errA != nil || errB != nil {
			t.Fatalf("errors: %v, %v", errA, errB)
		}
		if a == b {
			t.Errorf("%q and %q share key %q, want different keys", p[0], p[1], a)
		}
	}
}

func TestNormalizeURLErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		problem string // part of the message
		secret  string // must not appear in the message
	}{
		{"empty", "", "empty", ""},
		{"blank", "   ", "empty", ""},
		{"absolute local path", "/srv/git/app.git", "local path", ""},
		{"relative local path", "./app", "local path", ""},
		{"bare name", "app", "local path", ""},
		{"slash before colon", "srv/x:y", "local path", ""},
		{"ftp", "ftp://git.example.com/team/app", `unsupported scheme "ftp"`, ""},
		{"git protocol", "git://git.example.com/team/app", `unsupported scheme "git"`, ""},
		{"ftp with password", "ftp://user:hunter2@git.example.com/app", "unsupported scheme", "hunter2"},
		{"https missing host", "https:///team/app", "host is missing", ""},
		{"https missing host with password", "https://user:hunter2@/team/app", "host is missing", "hunter2"},
		{"ssh missing host", "ssh:///team/app", "host is missing", ""},
		{"scp missing host", ":team/app", "host is missing", ""},
		{"scp missing host with user", "git@:team/app", "host is missing", ""},
		{"missing path", "https://git.example.com", "path is missing", ""},
		{"root path", "https://git.example.com/", "path is missing", ""},
		{"only .git", "https://git.example.com/.git", "path is missing", ""},
		{"scp missing path", "git@git.example.com:", "path is missing", ""},
		{"missing path with password", "https://user:hunter2@git.example.com/", "path is missing", "hunter2"},
		{"bad port", "https://git.example.com:99999/team/app", "port", ""},
		{"port with password", "https://user:hunter2@git.example.com:99999/app", "port", "hunter2"},
		{"unparsable port with password", "https://user:hunter2@git.example.com:x/app", "cannot be parsed", "hunter2"},
		{"password with unencoded slash", "https://user:hun/ter2@git.example.com/app", "", "ter2"},
		{"password with unencoded slash parses", "https://user:12/hunter2@git.example.com/app", `"@"`, "hunter2"},
		{"password with unencoded question mark", "https://user:hun?ter2@git.example.com/app", "", "ter2"},
		{"token with unencoded slash", "https://hun/ter2@git.example.com/app", `"@"`, "ter2"},
		{"scp-like with password", "user:hunter2@git.example.com:app", `"@"`, "hunter2"},
		{"scp-like with password holding a slash", "user:hun/ter2@git.example.com:app", `"@"`, "ter2"},
		{"query", "https://git.example.com/team/app?private_token=hunter2", "query", "hunter2"},
		{"fragment", "https://git.example.com/team/app#main", "fragment", ""},
		{"file with host", "file://server/srv/git/app", "file:///absolute/path", ""},
		{"file without path", "file:///", "path is missing", ""},
		{"bad host", "https://git example.com/app", "cannot be parsed", ""},
		{"bad scp host", "git@git example.com:app", "host is not valid", ""},
		{"scheme holding a password", "user:hunter2@host://app", "cannot be parsed", "hunter2"},
		{"opaque", "https:team/app", "", ""}, // scp-like host "https": valid, see below
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeURL(tt.in)
			if tt.name == "opaque" {
				// Like Git, "https:team/app" (no "//") is scp-like: host "https".
				if err != nil || got != "ssh://https/team/app" {
					t.Fatalf("NormalizeURL(%q) = %q, %v; want ssh://https/team/app", tt.in, got, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("NormalizeURL(%q) = %q, want an error", tt.in, got)
			}
			if got != "" {
				t.Errorf("NormalizeURL(%q) returned %q with an error", tt.in, got)
			}
			if !errors.Is(err, ErrInvalidURL) {
				t.Errorf("error %v does not wrap ErrInvalidURL", err)
			}
			if !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("error %q does not mention %q", err, tt.problem)
			}
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("error %q leaks the secret %q", err, tt.secret)
			}
		})
	}
}

func TestNormalizeURLNeverKeepsCredentials(t *testing.T) {
	for _, in := range []string{
		"https://user:hunter2@git.example.com/app",
		"https://hunter2@git.example.com/app",
		"http://x-access-token:hunter2@git.example.com:8080/app.git",
		"ssh://git:hunter2@git.example.com/app",
		"https://user:hunter2%2Fx@git.example.com/app",
	} {
		got, err := NormalizeURL(in)
		if err != nil {
			t.Fatalf("NormalizeURL(%q) error: %v", in, err)
		}
		if strings.Contains(got, "hunter2") || strings.Contains(got, "@") {
			t.Errorf("NormalizeURL(%q) = %q keeps credentials", in, got)
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"no userinfo", "https://git.example.com/team/app", "https://git.example.com/team/app"},
		{"https password", "https://user:hunter2@git.example.com/app", "https://***@git.example.com/app"},
		{"https token as user", "https://hunter2@git.example.com/app", "https://***@git.example.com/app"},
		{"https empty password", "https://user:@git.example.com/app", "https://***@git.example.com/app"},
		{"password with at sign", "https://user:hun@ter2@git.example.com/app", "https://***@git.example.com/app"},
		{"password with slash", "https://user:hun/ter2@git.example.com/app", "https://***@git.example.com/app"},
		{"password with question mark", "https://user:hun?ter2@git.example.com/app", "https://***@git.example.com/app"},
		{"unsupported scheme", "ftp://user:hunter2@host/app", "ftp://***@host/app"},
		{"ssh user kept", "ssh://git@git.example.com/app", "ssh://git@git.example.com/app"},
		{"ssh password", "ssh://git:hunter2@git.example.com/app", "ssh://git:***@git.example.com/app"},
		{"scp-like user kept", "git@git.example.com:team/app", "git@git.example.com:team/app"},
		{"scp-like password", "user:hunter2@git.example.com:app", "user:***@git.example.com:app"},
		{"scp-like password with slash", "user:hun/ter2@git.example.com:app", "user:***@git.example.com:app"},
		{"ambiguous scp-like at sign hides more", "git.example.com:team/a@b", "git.example.com:***@b"},
		{"query", "https://git.example.com/app?token=hunter2#x", "https://git.example.com/app?***#x"},
		{"empty query kept", "https://git.example.com/app?", "https://git.example.com/app?"},
		{"token with slash", "https://hun/ter2@git.example.com/app", "https://***@git.example.com/app"},
		{"ambiguous at sign hides more", "https://git.example.com/team/a@b", "https://***@b"},
		{"at sign in file path kept", "file:///srv/git/a@b", "file:///srv/git/a@b"},
		{"at sign in ssh path kept", "ssh://git.example.com/team/a@b", "ssh://git.example.com/team/a@b"},
		{"local path", "/srv/git/app", "/srv/git/app"},
		{"scheme holding a password", "user:hunter2@host://app", "user:***@host://app"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestNoCredentialLeaks combines schemes, credentials, hosts and paths, valid and broken, and
// checks that no key, error or redacted text shows the secret.
func TestNoCredentialLeaks(t *testing.T) {
	schemes := []string{"https://", "http://", "HTTPS://", "ssh://", "ftp://", "file://", ""}
	users := []string{"user:", "x-access-token:", ":", ""} // "" puts the secret in the user name
	secrets := []string{"SeKrEt", "Se/KrEt", "Se?KrEt", "Se#KrEt", "Se@KrEt", "Se:KrEt", "Se%2FKrEt", "Se KrEt"}
	hosts := []string{"git.example.com", "git.example.com:443", "git.example.com:x", "", "[::1]:22", "git.example.com:99999"}
	paths := []string{"/team/app.git", "", "/", ":team/app", "/a@b", "?q=1", "#f"}
	for _, sc := range schemes {
		for _, u := range users {
			// A lone ssh user name is not a secret, and a lone "user" in file:// is a host.
			lone := u == ""
			if lone && (sc == "ssh://" || sc == "" || sc == "file://") {
				continue
			}
			for _, sec := range secrets {
				for _, h := range hosts {
					for _, p := range paths {
						in := sc + u + sec + "@" + h + p
						key, err := NormalizeURL(in)
						for _, part := range []string{"Se", "KrEt"} {
							if strings.Contains(key, part) {
								t.Errorf("NormalizeURL(%q) = %q keeps the secret", in, key)
							}
							if err != nil && strings.Contains(err.Error(), part) {
								t.Errorf("NormalizeURL(%q) error %q shows the secret", in, err)
							}
							if red := Redact(in); strings.Contains(red, part) {
								t.Errorf("Redact(%q) = %q shows the secret", in, red)
							}
						}
					}
				}
			}
		}
	}
}
