package servers

import (
	"net"
	"net/http"
	"strings"
	"testing"
)

// The front ends are used without a testing.TB by the quickstart, which stops them with
// Close: after it, nothing listens on their ports.
func TestFrontendsStopListeningOnClose(t *testing.T) {
	g := NewGitServer(t.TempDir())
	if err := g.CreateRepo("app.git"); err != nil {
		t.Fatal(err)
	}
	front, err := g.StartHTTP(HTTPAuth{Username: "u", Password: "p"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(front.URL("app.git") + "/info/refs?service=git-upload-pack")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unauthenticated request answered %d, want 401", resp.StatusCode)
	}
	if err := front.Close(); err != nil {
		t.Fatal(err)
	}
	if err := front.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if _, err := http.Get(front.URL("app.git") + "/info/refs"); err == nil {
		t.Fatal("the HTTP front end still answers after Close")
	}

	ssh, err := g.StartSSH()
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(ssh.URL("app.git"), "ssh://git@"), "/app.git")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if err := ssh.Close(); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.Dial("tcp", addr); err == nil {
		conn.Close()
		t.Fatal("the SSH front end still accepts connections after Close")
	}
}
