package gitrepo

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// Credentials never cross the network in clear text unless the GitProvider says so, and
// no URL reaches the operator's own files.
func TestTheTransportNeverExposesCredentialsOrLocalFiles(t *testing.T) {
	basic := Credentials{Username: "bot", Password: "pw"}
	token := Credentials{BearerToken: "t"}
	insecure := Credentials{Username: "bot", Password: "pw", PlainHTTP: true}
	for _, c := range []struct {
		url     string
		creds   Credentials
		refused bool
	}{
		{"http://git.example.com/r.git", basic, true},
		{"http://git.example.com/r.git", token, true},
		{"HTTP://git.example.com/r.git", basic, true},
		{"http://10.0.0.1:8080/r.git", basic, true},
		{"http://git.example.com/r.git", insecure, false},
		{"http://bot:token@git.example.com/r.git", Credentials{}, true},
		{"http://git.example.com/public.git", Credentials{}, false},
		{"http://127.0.0.1:8080/r.git", basic, false},
		{"http://[::1]:8080/r.git", basic, false},
		{"http://localhost/r.git", basic, false},
		{"https://git.example.com/r.git", basic, false},
		{"file:///tmp/gitops-reverser/branches/other", Credentials{}, true},
		{"ftp://git.example.com/r.git", Credentials{}, true},
	} {
		u, err := parseRemote(c.url)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = clientOptions(u, c.creds, t.TempDir())
		if refused := err != nil; refused != c.refused {
			t.Errorf("%s (%T creds, plain HTTP %t): error %v, want refused=%t", c.url, c.creds, c.creds.PlainHTTP, err, c.refused)
		}
		if err != nil && !strings.HasPrefix(c.url, "ftp") && !errors.Is(err, ErrInsecureTransport) {
			t.Errorf("%s: %v is not an insecure-transport refusal", c.url, err)
		}
	}
	// The refusal names the host, never the credentials.
	u, _ := url.Parse("http://git.example.com/r.git")
	if _, _, err := clientOptions(u, Credentials{Username: "bot", Password: "s3cret-pw"}, t.TempDir()); err == nil || strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("refusal %v", err)
	}
}
